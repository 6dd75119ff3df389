// SPDX-License-Identifier: MIT
// The Linux backend's task core (backend/backend.hpp): the descriptors a process
// or thread handle keeps, and the state it shares with the exit monitor.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "backend/backend.hpp"
#include "cpu_split.hpp"
#include "exit/lifecycle.hpp"
#include "linux/sys.hpp"
#include "parse/netlink.hpp"
#include "parse/procfs.hpp"
#include "proctimes/process.hpp"
#include "proctimes/result.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1::detail {

/// The stat fields last read through a handle, keyed by the CPU total read
/// just before that read. A stat read costs about 4x a schedstat read and 6x
/// the CPU-clock read of a one-thread process (docs/PERFORMANCE.md). When the
/// total shows the same value again, the task has not run since, and stat
/// would print the same utime, stime and state: the kernel derives the split
/// from that run time and holds it when the run time holds (cputime_adjust),
/// and a thread cannot end, stop or change its split without running. The stat read is then skipped, for at most
/// `reuse_limit_ns` after it (on nohz_full CPUs a running task's time moves only with the 1 Hz residual tick).
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
    pid_t id = 0;                         // pid, or tid
    pid_t tgid = 0;                       // the thread group (== id for a process)
    pid_t opener_pid = 0;                 // this process's pid at open: its threads use the thread CPU clock
    std::uint64_t opener_generation = 0;  // fork_generation() at open: a forked child's copy is not self
    unique_fd pidfd;
    unique_fd dir;        // processes: /proc/<pid>
    unique_fd stat;       // /proc/<pid>/stat or /proc/<tgid>/task/<tid>/stat
    unique_fd schedstat;  // threads: /proc/<tgid>/task/<tid>/schedstat
    task_identity identity;
    instant creation;
    stat_memo memo;

    // Whether a zombie's stat field 52 (its wait status) may be trusted: it
    // reads 0 for callers without ptrace access (decided at open).
    bool status_readable = false;
    // Running, exited or exited_partial; the exit instant, status, last
    // values and the exit monitor's bookkeeping (portable policy).
    task_lifecycle life;
};

/// The error for "this task is gone" (no_such_process or no_such_thread).
inline std::error_code gone_error(const task_core& c) noexcept { return c.life.gone_error(); }

/// One read of a kept stat descriptor, parsed.
struct stat_read {
    char buf[small_file_max];
    parse::stat_record rec;
};
/// Reads and parses a stat file through its kept descriptor: ESRCH (the task
/// was reaped) is no_such_thread/no_such_process, a parse failure malformed_data.
std::error_code read_stat(int fd, stat_read& out, bool thread) noexcept;

/// The calling thread's creation instant (cached per thread; the main
/// thread's is the process's), for core_is_self (self.cpp).
result<instant> self_thread_creation() noexcept;

/// The granularity of creation instants: one USER_HZ tick.
std::chrono::nanoseconds creation_resolution() noexcept;

/// Opens a process core on a child whose pidfd clone3 returned (spawn.cpp).
result<task_core_ptr> open_child_core(pid_t pid, unique_fd pidfd) noexcept;

/// exit_backend::await (backend/backend.hpp; src/linux/exit/monitor.cpp), in
/// detail: for a task that is gone without a zombie read and without its exit
/// record: if a record is expected (the listener watched it, no record with
/// its id came, none was lost since), waits for it up to record_wait_limit,
/// delivering it when it comes. Returns at once otherwise. The kernel queues a
/// record before the task's end is visible, so the wait is a bound for the
/// unexpected, not a delay anyone pays normally.
inline constexpr std::chrono::milliseconds record_wait_limit{50};
/// The same with the eBPF exit stream, whose record comes an RCU grace period
/// after the task's release (a few ms; longer on a loaded machine).
inline constexpr std::chrono::milliseconds bpf_record_wait_limit{2000};
/// The bound instead, once an end whose task is unknown was lost since the
/// wait began (it may be this one's).
inline constexpr std::chrono::milliseconds bpf_record_unnamed_loss_wait{250};

/// The resolutions that go with each source (times.hpp, cpu_precision).
cpu_precision precision_of(cpu_source s) noexcept;

}  // namespace proctimes::inline v1::detail
