// SPDX-License-Identifier: MIT
// proctimes/proctimes.hpp — the whole C++ API.
//
// Not included here:
//  - <proctimes/windows.h>, the Win32-compatible C layer: it defines the
//    Windows names (BOOL, HANDLE, GetProcessTimes, ...) as types and macros,
//    which a C++ program using this API should not get by accident. Include it
//    on its own, in code ported from Windows.
#pragma once

#include "proctimes/boot.hpp"
#include "proctimes/cgroup.hpp"
#include "proctimes/civil.hpp"
#include "proctimes/clock.hpp"
#include "proctimes/cycles.hpp"
#include "proctimes/error.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/export.h"
#include "proctimes/filetime.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/machine.hpp"
#include "proctimes/process.hpp"
#include "proctimes/resources.hpp"
#include "proctimes/result.hpp"
#include "proctimes/settings.hpp"
#include "proctimes/snapshot.hpp"
#include "proctimes/spawn.hpp"
#include "proctimes/times.hpp"
#include "proctimes/tree.hpp"
#include "proctimes/version.hpp"

// What only has a meaning on Linux (pidfds): on Linux only, so that portable
// code that uses it fails to compile elsewhere instead of failing at run time.
#if defined(__linux__)
#include "proctimes/linux.hpp"
#endif
