// SPDX-License-Identifier: MIT
// proctimes/times.hpp — the values a timing query returns.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#if !defined(_WIN32)
#include <sys/types.h>  // uid_t
#endif

#include "proctimes/export.h"
#include "proctimes/filetime.hpp"
#include "proctimes/words.hpp"

namespace proctimes::inline v1 {

/// A process or thread id, the same on every platform and from no system
/// header: a 32-bit signed number, POSIX's pid_t (every POSIX system's is
/// int). On Windows, whose ids are DWORDs (multiples of 4 below 2^32) and
/// whose SDK has no pid_t, it is 64 bits wide: the type mingw-w64's
/// <sys/types.h> calls pid_t there, so that code passing its own pid_t
/// converts nothing.
#if defined(_WIN32)
using pid_t = std::int64_t;
#else
using pid_t = std::int32_t;
#endif

/// A user's numeric id, as snapshots and exit records carry it: uid_t on
/// POSIX systems. Windows names users by SID, not by number (and mingw-w64
/// has no uid_t): there it is a 32-bit number that stays unknown.
#if defined(_WIN32)
using user_id = std::uint32_t;
#else
using user_id = uid_t;
#endif

/// Where the CPU times of a result came from. Each source has a fixed
/// resolution, reported alongside the values in cpu_precision.
enum class cpu_source : std::uint8_t {
    /// getrusage(RUSAGE_SELF) on the calling process. kernel and user in whole
    /// microseconds; their sum is the scheduler's runtime truncated to 1 µs,
    /// current for the calling thread (the kernel brings it up to date for a
    /// whole-process read) and as of the last tick for other threads running
    /// at that moment, like the process CPU clock; the split is the kernel's
    /// tick-sampled ratio scaled to that sum.
    rusage,
    /// Total from the process or thread CPU clock (clock_gettime(2) on
    /// clock_getcpuclockid / pthread_getcpuclockid ids, 1 ns); user/kernel split
    /// from the utime:stime ratio of /proc/<pid>/stat (10 ms ticks).
    cpu_clock_and_stat,
    /// Total from field 1 of /proc/<pid>/task/<tid>/schedstat (1 ns); split from
    /// the utime:stime ratio of the thread's stat file (10 ms ticks). Used for
    /// threads of other processes, whose thread CPU clocks the kernel refuses.
    schedstat_and_stat,
    /// Only utime and stime of /proc/.../stat, in 10 ms ticks (USER_HZ).
    stat_ticks,
    /// Final values from waitid(2)/wait4(2) rusage of a reaped child, 1 µs.
    wait_rusage,
    /// Final values from the kernel's taskstats exit record of a task that
    /// could not be read after its end (set_exit_records_enabled): total from
    /// its run time (1 ns, the counter schedstat shows), split by its
    /// tick-sampled utime:stime ratio.
    exit_record,
    /// The calling thread (this_thread::times): total from its own CPU clock
    /// (clock_gettime(CLOCK_THREAD_CPUTIME_ID), 1 ns, current to the moment of
    /// the call); split by the user:system ratio of getrusage(RUSAGE_THREAD),
    /// whose own sum is only as recent as the thread's last tick or context
    /// switch (up to a tick behind while it runs), so it gives the ratio only.
    thread_clock_and_rusage,
    /// The kernel's own counters read by the eBPF task iterator
    /// (snapshot_source::bpf, docs/BPF.md): total from se.sum_exec_runtime
    /// (1 ns; for a process, plus signal->sum_sched_runtime of its ended
    /// threads), split by the tick-sampled utime:stime ratio. Creation exact to
    /// the ns (start_boottime; 100 ns as a FILETIME), not floored to a tick.
    bpf_task,
    /// Final values from the eBPF exit stream (docs/BPF.md) of a task that
    /// ended while the exit monitor watched it, with exit records enabled and
    /// the eBPF source permitted: total from se.sum_exec_runtime read after
    /// the task was released and had switched out for the last time (1 ns,
    /// final to the last ns), split by its tick-sampled utime:stime ratio.
    bpf_exit,
    /// Windows: GetProcessTimes/GetThreadTimes (docs/WINDOWS.md). Kernel and
    /// user in 100 ns units, but charged one clock-interrupt tick at a time
    /// (typically 15.625 ms; 10 ms under Wine): resolution and
    /// total_resolution are that tick. Final once the handle is signalled.
    os_times,
};

/// The words of cpu_source (proctimes/words.hpp): printed as `cpu_source`.
inline constexpr auto cpu_source_words = std::to_array<word_row<cpu_source>>({
    {cpu_source::rusage, "rusage", "getrusage of the calling process (1 us)"},
    {cpu_source::cpu_clock_and_stat, "cpu_clock+stat", "the CPU clock's total (1 ns), the stat ticks' split"},
    {cpu_source::schedstat_and_stat, "schedstat+stat", "schedstat's total (1 ns), the stat ticks' split"},
    {cpu_source::stat_ticks, "stat", "the stat file's ticks only (10 ms)"},
    {cpu_source::wait_rusage, "wait_rusage", "the rusage of a reaped child (1 us)"},
    {cpu_source::exit_record, "exit_record", "the taskstats exit record (1 ns total)"},
    {cpu_source::thread_clock_and_rusage, "thread_clock+rusage", "the calling thread's own CPU clock (1 ns)"},
    {cpu_source::bpf_task, "bpf", "the kernel's counters through the eBPF task iterator (1 ns)"},
    {cpu_source::bpf_exit, "bpf_exit", "the eBPF exit stream's final values (1 ns)"},
    {cpu_source::os_times, "os_times", "Windows' GetProcessTimes/GetThreadTimes (one clock tick)"},
});
constexpr const auto& word_rows(cpu_source) noexcept { return cpu_source_words; }
static_assert(words_in_order(cpu_source_words));

/// A short stable name for a cpu_source ("rusage", "cpu_clock+stat", ...).
PROCTIMES_API std::string_view to_string(cpu_source s) noexcept;

/// Where an exit instant came from, and so what it promises. Linux keeps no
/// exit instant that an unprivileged reader can ask for: an instant is either
/// stamped by whoever sees the end, or computed from the kernel's exit record.
enum class exit_source : std::uint8_t {
    /// No exit instant: the task runs (or its end was never seen).
    none,
    /// Stamped (CLOCK_REALTIME) by the first observer that saw the task ended:
    /// the exit monitor's wake-up, a wait's, or a query that found a zombie.
    /// The exit happened NO LATER than `exit`, and no earlier than
    /// `exit_earliest`: the later of the last instant a sample saw the task
    /// alive and creation + the CPU time it used (a thread cannot run longer
    /// than it lives; a process's threads, on all CPUs at once at most). On
    /// Windows `exit` is the kernel's exit time, and CPU time, charged a clock
    /// tick at a time, bounds nothing: `exit_earliest` is the later of the
    /// creation and the last sample that saw it alive (docs/WINDOWS.md).
    /// A monitor that was awake stamps within about 0.1 ms of the end; a task
    /// that was already a zombie when first seen can be stamped much later,
    /// and exit_resolution says how much.
    observed,
    /// From the kernel's taskstats exit record (set_exit_records_enabled):
    /// creation + the task's elapsed time as the kernel measured it at its end
    /// (ac_etime, 1 µs). exit − creation is therefore exact to 1 µs, and the
    /// instant shares creation's 10 ms floor: the end was at `exit` or up to
    /// one tick later (never later than it was observed). exit_earliest == exit.
    exit_record,
    /// From the eBPF exit stream (docs/BPF.md): stamped by the kernel when the
    /// task ran do_exit(), CLOCK_BOOTTIME through the boot anchor, 1 ns (100 ns
    /// as a FILETIME). exit_earliest == exit; exit_resolution is 1 ns.
    bpf_exit,
};

/// The words of exit_source (proctimes/words.hpp): printed as `exit_source`.
inline constexpr auto exit_source_words = std::to_array<word_row<exit_source>>({
    {exit_source::none, "none", "no exit instant: the task runs, or its end was not seen"},
    {exit_source::observed, "observed", "stamped by the first observer that saw the end: the end was no later"},
    {exit_source::exit_record, "exit_record", "creation + the elapsed time of the taskstats exit record"},
    {exit_source::bpf_exit, "bpf_exit", "stamped by the kernel at do_exit, through the eBPF exit stream"},
});
constexpr const auto& word_rows(exit_source) noexcept { return exit_source_words; }
static_assert(words_in_order(exit_source_words));

/// "none", "observed", "exit_record" or "bpf_exit".
PROCTIMES_API std::string_view to_string(exit_source s) noexcept;

/// How precise the values of one result are.
struct cpu_precision {
    /// Granularity of `kernel` and of `user`, each on its own.
    std::chrono::nanoseconds resolution{};
    /// Granularity of `kernel + user` (finer than `resolution` when the total
    /// comes from a nanosecond clock and only the split from ticks).
    std::chrono::nanoseconds total_resolution{};
    /// Granularity of `creation`: 10 ms (one USER_HZ tick of the kernel's
    /// start time), the instant being floored to its tick.
    std::chrono::nanoseconds creation_resolution{};
    cpu_source source = cpu_source::stat_ticks;
    /// Where `exit` came from (none while the task runs).
    proctimes::exit_source exit_source = proctimes::exit_source::none;
    /// How far the real end can be from `exit`. observed: exit − exit_earliest
    /// (the end lies in [exit − exit_resolution, exit]); exit_record: the
    /// creation tick, capped by the observation (the end lies in
    /// [exit, exit + exit_resolution]). 0 while the task runs.
    std::chrono::nanoseconds exit_resolution{};
    friend bool operator==(const cpu_precision&, const cpu_precision&) = default;
};

/// Whether a task still runs, and how final its CPU values are.
enum class task_state : std::uint8_t {
    /// Running (or stopped): kernel and user are live values read now; exit is empty.
    running,
    /// Exited; kernel and user are its final values (read from the zombie, or
    /// from wait rusage for children). exit holds the exit instant when it was
    /// observed (see docs/EXIT.md); it is empty only when the exit monitor is off.
    exited,
    /// Exited, but the task was released before its final values could be read
    /// (a thread, or a non-child reaped at once by its parent): kernel and user
    /// are the last values sampled, at `sampled_at`. Never passed off as final.
    exited_partial,
};

/// The words of task_state (proctimes/words.hpp): printed as `state`.
inline constexpr auto task_state_words = std::to_array<word_row<task_state>>({
    {task_state::running, "running", "running or stopped: live values"},
    {task_state::exited, "exited", "ended: final values"},
    {task_state::exited_partial, "exited_partial", "ended, released before its final values could be read"},
});
constexpr const auto& word_rows(task_state) noexcept { return task_state_words; }
static_assert(words_in_order(task_state_words));

/// "running", "exited" or "exited_partial".
PROCTIMES_API std::string_view to_string(task_state s) noexcept;

/// How a process ended: its exit status, or the signal that killed it.
struct exit_status {
    int code = 0;    ///< exit code, when it exited normally
    int signal = 0;  ///< the signal that ended it, else 0
    bool core_dumped = false;
    [[nodiscard]] bool signaled() const noexcept { return signal != 0; }
    /// The shell's convention: the exit code, or 128 + the signal.
    [[nodiscard]] int shell_code() const noexcept { return signal ? 128 + signal : code; }
    friend bool operator==(const exit_status&, const exit_status&) = default;
};

/// The four values of GetProcessTimes/GetThreadTimes.
struct task_times {
    /// When the process/thread was created (see proctimes::boot_anchor for how
    /// the kernel's boot-relative start tick becomes a wall-clock instant).
    instant creation{};
    /// When it exited; empty while it runs. Set whenever state is not
    /// running. What it promises depends on precision.exit_source: an observed
    /// instant is an upper bound ("no later than"), a recorded one is floored
    /// to the creation tick like `creation`.
    std::optional<instant> exit;
    /// The earliest instant the exit can have happened (see exit_source);
    /// empty while it runs. exit_earliest <= exit, and creation <= exit_earliest.
    std::optional<instant> exit_earliest;
    /// CPU time spent in the kernel on its behalf (all threads, exited threads
    /// included, children excluded, for a process).
    std::chrono::nanoseconds kernel{};
    /// CPU time spent in user mode (same scope as kernel).
    std::chrono::nanoseconds user{};
    cpu_precision precision{};
    task_state state = task_state::running;
    /// When kernel and user were read (CLOCK_REALTIME).
    instant sampled_at{};

    [[nodiscard]] constexpr std::chrono::nanoseconds cpu() const noexcept { return kernel + user; }
    friend bool operator==(const task_times&, const task_times&) = default;
};

using process_times = task_times;
using thread_times = task_times;

/// The 128-bit id of the running kernel boot (/proc/sys/kernel/random/boot_id).
struct PROCTIMES_API boot_id {
    std::array<std::uint8_t, 16> bytes{};
    /// The canonical 8-4-4-4-12 lower-case hex form.
    [[nodiscard]] std::string to_string() const;
    friend auto operator<=>(const boot_id&, const boot_id&) = default;
};

/// An exact process (or thread) identity that survives pid reuse and compares
/// no wall-clock values: the boot, the id, the task's start in the system's
/// clock ticks, and a serial number the system never gives another task
/// during the boot.
///
/// Linux: start_ticks is the kernel's start time in clock ticks since boot
/// (USER_HZ); serial is the inode number of the task's pidfd where the kernel
/// has pidfs (Linux ≥ 6.9). (boot, id, start_ticks) alone tells apart every
/// pair of processes except a pid handed out twice within one 10 ms tick,
/// which pid allocation does only when forced (ns_last_pid, clone3 set_tid);
/// the serial closes that gap. Windows: start_ticks is the creation FILETIME
/// (100 ns) counted from the Unix epoch, exact on its own; serial is 0.
/// Identities from handles carry the serial where the system has one; it is
/// 0 where it is unknown (and always in snapshots).
struct task_identity {
    proctimes::boot_id boot{};
    pid_t id = 0;
    std::uint64_t start_ticks = 0;
    std::uint64_t serial = 0;
    friend auto operator<=>(const task_identity&, const task_identity&) = default;
};
using process_identity = task_identity;

}  // namespace proctimes::inline v1
