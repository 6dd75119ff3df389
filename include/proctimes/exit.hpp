// SPDX-License-Identifier: MIT
// proctimes/exit.hpp — waiting for processes and threads to exit, and the
// exit monitor that records when they did.
//
// A Windows handle to an exited process still answers GetProcessTimes with the
// exit time and the final CPU times. Linux keeps no exit instant, and forgets a
// process's times when it is reaped. proctimes therefore runs one exit
// monitor per process: a thread started on the first handle open, asleep in
// epoll_wait(2) over the pidfds of open handles. When one becomes readable it
// stamps the exit instant (CLOCK_REALTIME at wake-up; 60–90 µs after
// the task's last instruction on an idle machine, more under load) and reads the zombie's final values before the
// parent can reap it. See docs/EXIT.md for what is exact in each case.
//
// Embedders that do not want the thread can turn it off (before opening
// handles) with set_exit_monitor_enabled(false) or PROCTIMES_EXIT_MONITOR=0;
// exit instants are then recorded only by a wait below, or a query, that
// sees the end; otherwise task_times::exit stays empty.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <system_error>

#include "proctimes/export.h"
#include "proctimes/process.hpp"
#include "proctimes/result.hpp"

namespace proctimes {

/// Turns exit tracking on or off for handles opened afterwards (default: on,
/// unless the environment has PROCTIMES_EXIT_MONITOR=0 or =off).
PROCTIMES_API void set_exit_monitor_enabled(bool on) noexcept;
PROCTIMES_API bool exit_monitor_enabled() noexcept;

/// Waits until the process has exited (it may already have). `timeout`
/// empty: wait forever. Returns true once exited, false on timeout. A wait
/// that sees the end is an observer like the exit monitor: unless an earlier
/// observer did, it stamps the exit instant at its wake-up and reads the
/// zombie's final values, so times() right after it never reports a later
/// instant. A signal handler running meanwhile neither ends the wait nor
/// extends it: it resumes until `timeout` has passed on the monotonic clock.
/// Errors: not_supported without pidfds (Linux < 5.3), invalid_handle.
PROCTIMES_API result<bool> wait_for_exit(const process& p,
                                         std::optional<std::chrono::nanoseconds> timeout = std::nullopt) noexcept;
/// The same for a thread (needs thread pidfds, Linux ≥ 6.9).
PROCTIMES_API result<bool> wait_for_exit(const thread& t,
                                         std::optional<std::chrono::nanoseconds> timeout = std::nullopt) noexcept;

/// Waits until any of the processes has exited (WaitForMultipleObjects with
/// bWaitAll = FALSE); returns the lowest index of those that have, or empty on
/// timeout. Like wait_for_exit, the wait stamps the exit of the process whose
/// index it returns. For an event loop, poll each process's pidfd instead
/// (native_pidfd, proctimes/linux.hpp).
/// Errors: invalid_argument for an empty list (WaitForMultipleObjects with
/// nCount = 0 fails too), invalid_handle when an entry is null or an empty
/// handle, not_supported without pidfds (Linux < 5.3).
PROCTIMES_API result<std::optional<std::size_t>> wait_for_any(
    std::span<const process* const> ps, std::optional<std::chrono::nanoseconds> timeout = std::nullopt) noexcept;

}  // namespace proctimes
