// SPDX-License-Identifier: MIT
// proctimes/linux.hpp — what only has a meaning on Linux: the pidfds behind
// handles. It also includes, for programs written against earlier versions,
// the headers of what moved out of it because every backend answers it: the
// start ticks and the boot anchor (proctimes/boot.hpp) and the perf_event
// diagnostic (hardware_cycle_counter_status, proctimes/cycles.hpp).
//
// Everything in the other headers describes the Windows timing model and is
// meant to be answered by any backend; what is here names Linux mechanisms, and
// a program that uses it is a Linux program. <proctimes/proctimes.hpp> includes
// this header on Linux only.
#pragma once

#include <chrono>
#include <cstdint>
#include <system_error>

#include "proctimes/boot.hpp"
#include "proctimes/cycles.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/export.h"
#include "proctimes/process.hpp"
#include "proctimes/result.hpp"
#include "proctimes/spawn.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1 {

// ---- pidfds ------------------------------------------------------------------------

/// The pidfd of a process handle: readable (POLLIN) once the process exits, so
/// an event loop can poll it. -1 for an empty handle, or when the kernel has no
/// pidfd_open (before 5.3). Owned by the handle: do not close it.
PROCTIMES_API int native_pidfd(const process& p) noexcept;
/// A thread handle's PIDFD_THREAD pidfd (Linux ≥ 6.9; readable once the thread
/// exits), or -1. Owned by the handle.
PROCTIMES_API int native_pidfd(const thread& t) noexcept;
/// A spawned child's pidfd (readable once it exits): its handle's, or the
/// child's own when there is no handle (child::handle_error()). -1 for an
/// empty child. Owned by the child.
PROCTIMES_API int native_pidfd(const child& c) noexcept;

// ---- exit records ------------------------------------------------------------------

// set_exit_records_enabled, exit_records_enabled, set_exit_records_default,
// exit_records_status, set_exit_records_bpf and exit_records_use_bpf are
// declared in proctimes/exit.hpp (included above): they are answered by every
// backend.

}  // namespace proctimes::inline v1
