// The platform seam, snapshots: the hooks a backend supplies to read one
// snapshot's raw task records. Included by src/platform.hpp.
#pragma once
