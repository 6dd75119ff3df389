// SPDX-License-Identifier: MIT
// proctimes/boot.hpp — the boot anchor and start ticks now live in
// <proctimes/linux.hpp>; this header only includes it, so that code written
// against earlier versions still compiles.
#pragma once

#include "proctimes/linux.hpp"
