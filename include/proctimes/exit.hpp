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
#include <cstdint>
#include <optional>
#include <span>
#include <system_error>

#include "proctimes/export.h"
#include "proctimes/process.hpp"
#include "proctimes/result.hpp"

namespace proctimes::inline v1 {

/// Turns exit tracking on or off for handles opened afterwards (default: on,
/// unless PROCTIMES_EXIT_MONITOR is 0, off, false or no; the words every
/// switch takes are in proctimes/settings.hpp).
PROCTIMES_API void set_exit_monitor_enabled(bool on) noexcept;
PROCTIMES_API bool exit_monitor_enabled() noexcept;

// ---- exit records (Linux: taskstats, or the eBPF exit stream) ------------------------

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
PROCTIMES_API void set_exit_records_enabled(bool on) noexcept;
PROCTIMES_API bool exit_records_enabled() noexcept;
/// Changes only the default: what exit_records_enabled() answers when neither
/// set_exit_records_enabled() nor PROCTIMES_EXIT_RECORDS has decided. The
/// Win32 layer sets it to true (a Windows program expects final values), as
/// does the CLI for run --threads and watch; an explicit choice, earlier or
/// later, always wins.
PROCTIMES_API void set_exit_records_default(bool on) noexcept;
/// Registers the listener if enabled and not tried yet. Empty when it is
/// registered; otherwise why not: errc::invalid_argument when records are off
/// because PROCTIMES_EXIT_RECORDS has a value that is not an on/off word
/// (settings.hpp); errc::not_supported when records or the monitor are off,
/// or without taskstats, or on a backend without exit records;
/// errc::foreign_namespace outside the initial pid namespace;
/// std::errc::operation_not_permitted without CAP_NET_ADMIN.
PROCTIMES_API std::error_code exit_records_status() noexcept;
/// What the exit machinery could not do, by kind, since the process started
/// (never reset). Each is a failure caught where it happened, counted here
/// instead of passing in silence; all stay 0 on a healthy system (running
/// out of memory or descriptors is what causes them). `proctimes doctor`
/// prints them.
struct exit_failures {
    std::uint64_t monitor_start = 0;  ///< the exit monitor could not start: handles opened then were not watched
    std::uint64_t watch = 0;          ///< a task could not join the monitor's set: only queries and waits saw its end
    std::uint64_t unwatch = 0;        ///< a closed handle's task could not leave the set: it stayed until its end
    std::uint64_t deliver = 0;        ///< pending exit records could not be handed to their tasks
    std::uint64_t await = 0;          ///< a wait for a gone task's exit record failed: its last values stand
    std::uint64_t query = 0;          ///< a question to the monitor failed (its listener's status or losses)
    /// A closed child's reap request could not be queued at once (the
    /// monitor's set refused it): it was kept and retried until the monitor
    /// took it, or reaped at once if the child had already ended.
    std::uint64_t reap_deferred = 0;
    /// A reap request that could be neither queued nor kept (too many waiting
    /// at once): that child stays a zombie until this process waits for any
    /// child or exits.
    std::uint64_t reap_lost = 0;
    std::uint64_t ends_not_kept = 0;  ///< eBPF ends or losses not kept for lookup: a waiter waited out its bound
    std::uint64_t bpf_sweep = 0;      ///< a periodic sweep of the eBPF exit stamps failed (retried a second later)

    /// The sum of every kind.
    [[nodiscard]] std::uint64_t total() const noexcept {
        return monitor_start + watch + unwatch + deliver + await + query + reap_deferred + reap_lost + ends_not_kept +
               bpf_sweep;
    }
};
/// exit_records_status(), and the exit machinery's failures so far in
/// `failures` (filled whatever the status).
PROCTIMES_API std::error_code exit_records_status(exit_failures& failures) noexcept;
/// Where enabled exit records come from. With set_exit_records_bpf(true) (or
/// PROCTIMES_EXIT_RECORDS_BPF=1; off by default) the eBPF exit stream is
/// tried first (CAP_BPF + CAP_PERFMON or root, kernel BTF, a build with
/// PROCTIMES_BPF; docs/BPF.md): it gives every watched task that is gone
/// unread its final values read after its last switch-out
/// (cpu_source::bpf_exit) and its exact exit instant (exit_source::bpf_exit,
/// 1 ns), also when the monitor did read its zombie; loading it costs tens of
/// ms and about ten descriptors once per process. Where it cannot be used,
/// or by default, taskstats as above. Decided when the listener is
/// registered (once per process, on the first watched handle with records
/// enabled, or exit_records_status()).
PROCTIMES_API void set_exit_records_bpf(bool on) noexcept;
/// True when the registered listener is the eBPF exit stream.
PROCTIMES_API bool exit_records_use_bpf() noexcept;

// ---- waits ------------------------------------------------------------------------

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

}  // namespace proctimes::inline v1
