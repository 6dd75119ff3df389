// SPDX-License-Identifier: MIT
// The eBPF exit stream (docs/BPF.md): the end of every task of the system —
// processes and threads, any user, any parent — with its exact final values,
// delivered on a thread of its own. Built only with PROCTIMES_BPF; elsewhere
// start() fails with errc::not_supported.
//
// Where a value comes from (exits.bpf.c): the exit instant is stamped when the
// task runs do_exit() (tp_btf/sched_process_exit, CLOCK_BOOTTIME, 1 ns); the
// CPU counters are read at sched_process_free, which fires once the task has
// been released (reaped) and has switched out for the last time, so they are
// final. A process's record is its leader's, sent when the whole thread group
// has been released: its group values are the totals of every thread.
//
// Nothing is lost silently: a record that does not fit in the ring buffer
// (4 MiB, ~35,000 records), a run of the program the kernel skipped (it
// does not nest a BPF program within itself on one CPU), or an end whose free
// never ran, is counted in dropped().
//
// Thread-safety: the callback runs on the stream's thread, one record at a
// time; the counters may be read from any thread. Destroying the stream stops
// the thread and detaches the programs (they belong to this process: a crash
// detaches them too; nothing is pinned).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <sys/types.h>

#include "proctimes/result.hpp"
#include "proctimes/snapshot.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1 {
struct ended_task;  // proctimes/ledger.hpp
}  // namespace proctimes::inline v1

namespace proctimes::inline v1::detail {

/// One task's end.
struct bpf_task_end {
    pid_t pid = 0;  ///< the thread group (process) id
    pid_t tid = 0;  ///< the task; == pid for a process's leader
    pid_t parent_pid = 0;
    uid_t uid = 0;  ///< effective uid
    bool kernel_thread = false;
    bool forked_no_exec = false;  ///< PF_FORKNOEXEC: forked and never exec'd
    task_name name;
    std::uint64_t start_ticks = 0;  ///< as /proc's field 22, for identities
    instant creation{};             ///< exact (start_boottime + the boot anchor)
    /// When the task ran do_exit(); empty if that was before the stream began.
    std::optional<instant> exit;
    /// When its final values were read (it had been reaped and switched out).
    instant released{};
    /// The same instant as CLOCK_BOOTTIME (ns since boot).
    std::chrono::nanoseconds released_since_boot{};
    /// Leader only: whether the process ever had a second thread is known
    /// (the kernel keeps taskstats group data), and if so, whether it had.
    bool threads_known = false;
    bool had_threads = false;
    /// This task's own final CPU time (1 ns total, split by its tick-sampled ratio).
    std::chrono::nanoseconds kernel{}, user{};
    /// Leader only (tid == pid): the process's final totals, every thread included.
    std::chrono::nanoseconds group_kernel{}, group_user{};
    /// For the leader, what wait(2) reports for the process; for a thread,
    /// its own exit code.
    exit_status status{};
    /// Leader only, and only from a stream started with command lines: the
    /// argument area (as /proc/<pid>/cmdline reads it) its last exec gave it,
    /// when it exec'd after the stream began and the area was copied whole.
    std::optional<std::string> command_line;

    [[nodiscard]] bool is_process() const noexcept { return pid == tid; }
};

/// A task whose end was lost, as far as the stream knows who it was (a
/// record that did not fit in the ring buffer, or a task whose free program
/// never ran). Its end may still come, late (a free that ran after the sweep
/// counted it): a delivered end always wins over a loss.
struct bpf_lost_task {
    pid_t pid = 0;                  ///< the thread group
    pid_t tid = 0;                  ///< the task
    std::uint64_t start_ticks = 0;  ///< as /proc's field 22
    instant creation{};             ///< exact
};

/// Ends the exit monitor's eBPF listener (handles' exit records) lost,
/// system-wide, since it began; 0 when it is not the listener.
std::uint64_t exit_records_bpf_lost() noexcept;

/// The public exit_stream's record for an eBPF end (pure; Linux backend).
/// Throws std::bad_alloc (the command line is copied).
ended_task to_ended_task(const bpf_task_end& e);

class bpf_exit_stream {
public:
    using callback = std::function<void(const bpf_task_end&)>;
    using lost_callback = std::function<void(const bpf_lost_task&)>;

    /// Loads and attaches the programs and starts the thread that calls `cb`
    /// for every end from now on, and `on_lost` (if set) for every lost end
    /// whose task is known. With `command_lines`, the exec program is loaded
    /// as well and each process's end carries the command line of its last
    /// exec (bpf_task_end::command_line). With `on_read`, the kernel wakes
    /// the thread for records only once the ring buffer is a quarter full
    /// (it still looks at least every 5 s): take_waiting() takes them.
    /// Errors: not_supported (not built), the load's errno (EPERM without
    /// CAP_BPF + CAP_PERFMON), ENOMEM.
    static result<std::unique_ptr<bpf_exit_stream>> start(callback cb, lost_callback on_lost = {},
                                                          bool command_lines = false, bool on_read = false) noexcept;

    /// Passes every record the ring buffers hold now to the callbacks, on the
    /// caller's thread (one at a time with the stream's own thread).
    void take_waiting() noexcept;

    ~bpf_exit_stream();
    bpf_exit_stream(const bpf_exit_stream&) = delete;
    bpf_exit_stream& operator=(const bpf_exit_stream&) = delete;

    /// Ends lost, system-wide, since start(), exactly: records that did not
    /// fit in the full ring buffer; runs of the free program the kernel
    /// skipped because it was already running on that CPU (recursion_misses);
    /// and tasks whose exit the exit program saw but for which the free
    /// program never ran (on kernel 6.18, a few per 10,000 ends in a storm):
    /// each leaves its stamp behind, found either when a new task's exit
    /// reuses its address or by a sweep once its task has been gone from
    /// /proc for 5 s, at least 5 s after its exit (so such a loss shows up
    /// 10-11 s late). Never 0 while
    /// ends are missing.
    [[nodiscard]] std::uint64_t dropped() const noexcept;
    /// Of dropped(), the ends whose task is not known (on_lost was not called
    /// for them): runs of the free program the kernel skipped, and lost ends
    /// whose identity did not fit in the programs' small ring of lost tasks.
    [[nodiscard]] std::uint64_t unnamed_lost() const noexcept;
    /// Ends whose exit instant could not be stamped (delivered without
    /// `exit`), including runs of the exit program the kernel skipped.
    [[nodiscard]] std::uint64_t unstamped() const noexcept;
    /// Waits until every end of a task that ran do_exit() in (from, to]
    /// (CLOCK_BOOTTIME) and is gone from /proc (released) has been passed to
    /// the callback or counted lost; true once so, false when `deadline`
    /// passed first. The free program runs an RCU grace period after the
    /// release, and its record then waits in the ring buffer for this
    /// stream's thread: a reader that must hold every end up to an instant (a
    /// frame of `ps --interval`) calls this first. Tasks not yet released
    /// (zombies, a leader waiting for its threads) are not waited for. Reads
    /// the map of exit stamps and the /proc entry of each task in (from, to]
    /// that has one, every 2 ms. A task whose free never runs
    /// (docs/BPF.md, "Losses") keeps it waiting until the deadline, or until
    /// the sweep counts that end lost.
    [[nodiscard]] bool settle(std::chrono::nanoseconds from, std::chrono::nanoseconds to,
                              std::chrono::steady_clock::time_point deadline) const;
    /// Records delivered to the callback so far.
    [[nodiscard]] std::uint64_t delivered() const noexcept { return delivered_.load(); }
    /// Records that were not a well-formed record (never expected).
    [[nodiscard]] std::uint64_t malformed() const noexcept { return malformed_.load(); }
    /// The programs' own counts since start(), for diagnostics.
    struct counters {
        std::uint64_t exit_runs = 0;          ///< runs of the exit program
        std::uint64_t free_runs = 0;          ///< runs of the free program
        std::uint64_t submitted = 0;          ///< records put into the ring buffer
        std::uint64_t ring_full = 0;          ///< records that did not fit
        std::uint64_t free_recursion = 0;     ///< runs of the free program the kernel skipped
        std::uint64_t exit_recursion = 0;     ///< runs of the exit program the kernel skipped
        std::uint64_t swept = 0;              ///< ends whose free never ran (stamp left, task gone)
        std::uint64_t sweeps = 0;             ///< reads of a whole stamp map by a sweep (it held stamps)
        std::uint64_t sweeps_more = 0;        ///< of those, reads of the large map (a storm's stamps)
        std::int64_t stamps_live = 0;         ///< stamps in the maps: tasks between exit and free
        std::int64_t stamps_live_more = 0;    ///< of those, in the large map (the small one was full)
        std::uint64_t found_after_sweep = 0;  ///< of those, frees that ran after all
        std::uint64_t freed_unseen = 0;       ///< ends whose free never ran (stamp found at a new task)
        std::uint64_t lost_unnamed = 0;       ///< lost ends whose identity did not fit either
        std::uint64_t execs_sent = 0;         ///< exec records put into the ring buffer
        std::uint64_t execs_dropped = 0;      ///< exec records that did not fit
        /// Command lines received but not kept: too long to copy whole, or
        /// more live processes than the stream keeps command lines for.
        std::uint64_t command_lines_unkept = 0;
    };
    [[nodiscard]] counters count() const noexcept;
    /// What loading and attaching took.
    [[nodiscard]] std::chrono::nanoseconds load_time() const noexcept { return load_time_; }

    struct impl;

private:
    bpf_exit_stream() = default;
    std::unique_ptr<impl> impl_;
    std::atomic<std::uint64_t> delivered_{0};
    std::atomic<std::uint64_t> malformed_{0};
    std::chrono::nanoseconds load_time_{};
};

}  // namespace proctimes::inline v1::detail
