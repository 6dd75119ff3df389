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
#pragma GCC visibility push(default)  // the interface: exported; the rest of libproctimes is hidden

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <system_error>

#include "proctimes/process.hpp"
#include "proctimes/result.hpp"

namespace proctimes {

/// Turns exit tracking on or off for handles opened afterwards (default: on,
/// unless the environment has PROCTIMES_EXIT_MONITOR=0 or =off).
void set_exit_monitor_enabled(bool on) noexcept;
bool exit_monitor_enabled() noexcept;

/// Exit records: exact final values for tasks the monitor cannot read after
/// their end — threads of other processes (the kernel frees a thread's
/// accounting as it ends), threads of this process, and one-thread processes
/// that their parent reaps at once — from the kernel's taskstats exit records
/// (cpu_source::exit_record: 1 ns total, tick-ratio split). Without them such
/// tasks report task_state::exited_partial with their last sampled values.
/// Needs CAP_NET_ADMIN, the initial pid namespace and a kernel with
/// CONFIG_TASKSTATS, and the exit monitor. Off by default: the monitor then
/// wakes for every task that ends on the system (about 10 µs of its CPU each). Turn on
/// before opening handles, or set PROCTIMES_EXIT_RECORDS=1; when the listener
/// cannot be registered, handles work as without it.
void set_exit_records_enabled(bool on) noexcept;
bool exit_records_enabled() noexcept;
/// Changes only the default: what exit_records_enabled() answers when neither
/// set_exit_records_enabled() nor PROCTIMES_EXIT_RECORDS has decided. The
/// Win32 layer sets it to true (a Windows program expects final values); an
/// explicit choice, earlier or later, always wins.
void set_exit_records_default(bool on) noexcept;
/// Registers the listener if enabled and not tried yet. Empty when it is
/// registered; otherwise why not: errc::not_supported when records or the
/// monitor are off, or outside the initial pid namespace, or without
/// taskstats; std::errc::operation_not_permitted without CAP_NET_ADMIN.
std::error_code exit_records_status() noexcept;

/// Waits until the process has exited (it may already have). `timeout`
/// empty: wait forever. Returns true once exited, false on timeout. A wait
/// that sees the end is an observer like the exit monitor: unless an earlier
/// observer did, it stamps the exit instant at its wake-up and reads the
/// zombie's final values, so times() right after it never reports a later
/// instant.
/// Errors: not_supported without pidfds (Linux < 5.3), invalid_handle.
result<bool> wait_for_exit(const process& p,
                           std::optional<std::chrono::nanoseconds> timeout = std::nullopt) noexcept;
/// The same for a thread (needs thread pidfds, Linux ≥ 6.9).
result<bool> wait_for_exit(const thread& t,
                           std::optional<std::chrono::nanoseconds> timeout = std::nullopt) noexcept;

/// Waits until any of the processes has exited (WaitForMultipleObjects with
/// bWaitAll = FALSE); returns the lowest index of those that have, or empty on
/// timeout. For an event loop, poll each process::native_pidfd() instead.
result<std::optional<std::size_t>> wait_for_any(std::span<const process* const> ps,
                                                 std::optional<std::chrono::nanoseconds> timeout = std::nullopt) noexcept;

}  // namespace proctimes
#pragma GCC visibility pop
