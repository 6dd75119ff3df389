// The platform seam: what a backend (src/linux/, src/stub/) supplies to the
// portable part of the library. Portable code includes this header, never a
// header of a backend's folder.
#pragma once

#include "platform_snapshot.hpp"
