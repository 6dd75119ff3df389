// The state a process or thread handle shares with the exit monitor.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "cpu_split.hpp"
#include "linux/sys.hpp"
#include "parse/netlink.hpp"
#include "parse/procfs.hpp"
#include "proctimes/process.hpp"
#include "proctimes/result.hpp"
#include "proctimes/times.hpp"

namespace proctimes::detail {

/// The stat fields last read through a handle, keyed by the CPU total read
/// just before that read. A stat read costs about 4x a schedstat read and 6x
/// the CPU-clock read of a one-thread process (docs/PERFORMANCE.md). When the
/// total shows the same value again, the task has not run since, and stat
/// would print the same utime, stime and state: the kernel derives the split
/// from that run time and holds it when the run time holds (cputime_adjust),
/// and a thread cannot end, stop or change its split without running. The stat read is then skipped, for at most `reuse_limit_ns` after
/// it (on nohz_full CPUs a running task's time moves only with the 1 Hz
/// residual tick).
///   - Threads of other processes (schedstat total): as above; a thread that
///     is gone fails the schedstat read itself.
///   - Processes (CPU-clock total): the clock is read by pid, and a thread
///     leaving the group can leave the group total unchanged, so a hit also
///     needs the pidfd to show a live thread group (poll, not readable). That
///     check proves the pid was not reused under the clock read and that the
///     process has not exited. Without a pidfd there is no memo.
struct stat_memo {
    static constexpr std::int64_t reuse_limit_ns = 1'000'000'000;
    std::mutex mutex;
    bool valid = false;
    std::int64_t total_ns = 0;    // the CPU total read just before the stat read
    std::int64_t read_at_ns = 0;  // CLOCK_MONOTONIC_COARSE at the stat read
    parse::stat_record rec;       // without comm (it viewed the read buffer)
};

struct task_core {
    bool is_thread = false;
    pid_t id = 0;          // pid, or tid
    pid_t tgid = 0;        // the thread group (== id for a process)
    pid_t opener_pid = 0;  // this process's pid at open: its threads use the thread CPU clock
    unique_fd pidfd;
    unique_fd dir;        // processes: /proc/<pid>
    unique_fd stat;       // /proc/<pid>/stat or /proc/<tgid>/task/<tid>/stat
    unique_fd schedstat;  // threads: /proc/<tgid>/task/<tid>/schedstat
    task_identity identity;
    instant creation;
    monotonic_split split;
    stat_memo memo;

    // What is known about the end, guarded by `mutex`.
    std::mutex mutex;
    // The exit instant and what it promises (exit_bounds.hpp), set once by
    // the first observer of the end (stamp_exit_locked).
    std::optional<instant> exit;
    std::optional<instant> exit_earliest;
    exit_source exit_from = exit_source::none;
    std::chrono::nanoseconds exit_resolution{};
    // CLOCK_REALTIME just before the last sample that saw the task alive: the
    // end came after it.
    std::optional<instant> last_alive;
    task_state state = task_state::running;
    std::optional<task_times> last;  // the last values read
    bool watched = false;            // registered with the exit monitor
    bool auto_reap = false;          // a child nobody will wait for: the monitor reaps it
    bool reaped = false;             // a child already reaped by proctimes
    // How a process ended: its zombie's stat field 52, or child::wait's
    // siginfo. Field 52 reads 0 for callers without ptrace access, so it is
    // only trusted when status_readable (decided at open).
    std::optional<exit_status> status;
    bool status_readable = false;
    // Seen as a zombie main thread with live threads: field 52 will then hold
    // the main thread's own code, not the process's (wait(2) reports the group
    // exit code), so it is not trusted.
    bool leader_exited_early = false;
    // The kernel's exit record of this task (a thread's, or a one-thread
    // process's), delivered by the exit monitor when records are enabled.
    std::optional<parse::taskstats_exit> exit_record;
    // Exit-record bookkeeping, set by the exit monitor (under `mutex`): the
    // task was registered while the listener ran (so its records reach it),
    // any record with its id came (usable or not), and the listener's count
    // of lost-record bursts at registration.
    bool records_watched = false;
    bool record_seen = false;
    std::uint64_t record_losses_at_watch = 0;
};

/// The error for "this task is gone" (no_such_process or no_such_thread).
std::error_code gone_error(const task_core& c) noexcept;

/// Reads the live values through the kept descriptors: the CPU clock (or
/// schedstat) first, then stat. `state_char` gets stat field 3.
result<task_times> sample(task_core& c, char* state_char) noexcept;

/// times(): a fresh sample when the task can still be read, otherwise what was
/// recorded about its end (exit instant, final or last values).
result<task_times> query(task_core& c) noexcept;

/// Records that the task has ended, observed at `seen`: stamps the exit instant
/// (first observer wins) and captures final values if the zombie is still
/// readable. Called by the exit monitor, and by a query that finds the task
/// gone while it is watched.
void record_exit(task_core& c, instant seen) noexcept;

/// Stamps the end of the task, seen at `seen`, unless it is stamped already:
/// from its exit record when it has one, else as observed with the lower
/// bounds the task showed (`cpu`: CPU time known at the end). Requires c.mutex.
void stamp_exit_locked(task_core& c, instant seen, std::chrono::nanoseconds cpu) noexcept;
/// Copies the exit instant and its bounds into a result. Requires c.mutex.
void fill_exit_locked(task_times& t, const task_core& c) noexcept;

/// Hands the pending taskstats exit records to the watched tasks they concern
/// (does nothing without a registered listener). record_exit calls it before
/// it looks at task_core::exit_record.
void deliver_exit_records() noexcept;

/// For a task that is gone without a zombie read and without its exit
/// record: if a record is expected (the listener watched it, no record with
/// its id came, none was lost since), waits for it up to record_wait_limit,
/// delivering it when it comes. Returns at once otherwise. The kernel queues a
/// record before the task's end is visible, so the wait is a bound for the
/// unexpected, not a delay anyone pays normally.
void await_exit_record(task_core& c) noexcept;
inline constexpr std::chrono::milliseconds record_wait_limit{50};

/// Registers a task with the process-wide exit monitor (started on first use).
/// Does nothing when the monitor is disabled or the task has no pidfd.
void watch_exit(const std::shared_ptr<task_core>& c) noexcept;
/// Removes it (handle closed). If `reap` and it is an unreaped child, the
/// monitor reaps it when it exits so that no zombie is left behind.
void unwatch_exit(const std::shared_ptr<task_core>& c, bool reap) noexcept;

/// Reaches the core behind a handle (the handles keep it private).
struct handle_access {
    static task_core* core(const process& p) noexcept;
    static task_core* core(const thread& t) noexcept;
    /// Opens a process handle on a child whose pidfd clone3 returned.
    static result<process> open_child(pid_t pid, unique_fd pidfd) noexcept;
    /// Closes a child's handle; the monitor reaps the child if it was not.
    static void release_child(process& p) noexcept;
    static result<process> make_process(result<std::shared_ptr<task_core>> core) noexcept;
    static result<thread> make_thread(std::unique_ptr<thread::impl> p) noexcept;
};

/// CLOCK_REALTIME now.
instant realtime_now() noexcept;

/// The resolutions that go with each source (times.hpp, cpu_precision).
cpu_precision precision_of(cpu_source s) noexcept;

}  // namespace proctimes::detail
