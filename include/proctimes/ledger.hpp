// SPDX-License-Identifier: MIT
// proctimes/ledger.hpp — where the machine's CPU time went between two
// snapshots: a ledger that closes.
//
//   live + ended + reaped_children + irq + softirq + steal + unattributed == busy
//
// (guest time is shown beside the sum, never in it: the kernel has already
// counted it as user time of the vCPU threads and of the machine.)
//
// `busy` is what /proc/stat says every CPU spent outside idle and iowait over
// the interval; every other term is CPU time some reader can name. Tools that
// diff two walks of /proc (top, ps, psutil, process-exporter) see only `live`:
// a process born and reaped between the walks leaves no trace in /proc. The
// kernel still tells a privileged listener about every task that ends
// (taskstats exit records, exit_stream below), so `ended` can hold them; what
// nobody could name stays in `unattributed`, shown, never hidden.
//
//   auto es = proctimes::exit_stream::open();            // root: CAP_NET_ADMIN
//   auto s0 = snapper.take().value(); auto c0 = proctimes::read_system_cpu_times().value();
//   ... later ...
//   auto s1 = snapper.take().value(); auto c1 = proctimes::read_system_cpu_times().value();
//   std::vector<proctimes::ended_task> exits; if (es) (void)es->read(exits);
//   auto l = proctimes::compute_ledger(s0, s1, exits, c0, c1).value();
//
// Units: every duration is CPU time in nanoseconds (a value can exceed the
// interval on several CPUs). /proc/stat counts in USER_HZ ticks (10 ms), so the
// ledger's terms from it (busy, irq, softirq, steal, guest) have 10 ms
// resolution per CPU; `live` and `ended` are exact to 1 ns where the snapshot
// and the records are.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proctimes/export.h"
#include "proctimes/result.hpp"
#include "proctimes/snapshot.hpp"
#include "proctimes/words.hpp"

namespace proctimes::inline v1 {

// ---- the system's CPU time (/proc/stat) ------------------------------------------

/// The aggregate "cpu" line of /proc/stat: CPU time by state summed over all
/// CPUs since boot, converted from USER_HZ ticks (10 ms resolution per CPU).
struct PROCTIMES_API system_cpu_times {
    std::chrono::nanoseconds user{}, nice{}, system{}, idle{}, iowait{};
    std::chrono::nanoseconds irq{}, softirq{}, steal{};
    /// Time spent running guests (vCPUs). Already part of `user` and `nice`
    /// (the kernel charges it to both, and to the vCPU thread's user time).
    std::chrono::nanoseconds guest{}, guest_nice{};
    /// CLOCK_BOOTTIME when the file was read.
    std::chrono::nanoseconds since_boot{};
    /// CPUs online when it was read (its "cpuN" lines).
    int cpus = 0;

    /// Everything but idle and iowait. Guest time is inside user and nice.
    [[nodiscard]] std::chrono::nanoseconds busy() const noexcept {
        return user + nice + system + irq + softirq + steal;
    }
};

/// Reads <proc_root>/stat. Errors: the native errno of the read,
/// errc::malformed_data when it has no valid "cpu" line. Thread-safe.
PROCTIMES_API result<system_cpu_times> read_system_cpu_times(const std::string& proc_root = "/proc") noexcept;

// ---- tasks that ended (eBPF exit stream, or taskstats exit records) ---------------

/// One task (thread) that ended, as the kernel described it: from the eBPF
/// exit stream (docs/BPF.md; `exact` is true) or a taskstats exit record.
struct PROCTIMES_API ended_task {
    pid_t tid = 0;  ///< the thread that ended
    /// Its process (thread group); 0 when the kernel's record does not carry
    /// it (struct taskstats before version 12, Linux < 5.19).
    pid_t pid = 0;
    pid_t parent_pid = 0;  ///< the parent process when it ended
    user_id uid = 0;       ///< real uid
    task_name name;        ///< the thread's comm (a one-thread process's name)
    /// Final CPU time of this thread: kernel + user is the scheduler's run time (1 ns); the split is the record's
    /// tick-sampled utime:stime ratio (all kernel when both are 0). eBPF reads it after the last switch-out (`exact`);
    /// taskstats in do_exit(), as last brought up to date (a tick, a switch): it lacks what the thread ran since, up
    /// to a tick (4 ms at HZ=250), and its teardown: most of the CPU of a task that lives a few ms (docs/EXIT.md).
    std::chrono::nanoseconds kernel{}, user{};
    /// taskstats: from the thread's start to its exit, 1 µs (ac_etime).
    /// eBPF: from its start to received_since_boot, 1 ns, so that
    /// received_since_boot − elapsed is its exact start.
    std::chrono::nanoseconds elapsed{};
    /// CLOCK_BOOTTIME, 1 ns. taskstats: when the record was read from the
    /// kernel (the end was no later than this; received_since_boot − elapsed
    /// is its start, late by the reader's delay). eBPF: when the kernel
    /// released the task and its final values were read (after its exit and
    /// its reaping; never later than read() returning it).
    std::chrono::nanoseconds received_since_boot{};
    /// The last thread of its process: the process ended with it. (eBPF: the
    /// leader's record, sent once every thread of the process was released.)
    bool process_ended = false;
    /// process_ended, and the process never had another thread, so this
    /// record's values are the whole process's final values.
    bool whole_process = false;
    /// The task was forked and never exec'd (taskstats' AFORK, the kernel's
    /// PF_FORKNOEXEC; every thread has it): a process's leader with it runs
    /// the program, and has the command line, of the parent it forked from.
    bool forked_no_exec = false;

    // ---- what only the eBPF exit stream knows (defaults otherwise) ----

    /// From the eBPF exit stream: kernel/user are final to the ns (read after
    /// the thread's last switch-out), and the fields below are filled in.
    bool exact = false;
    /// When the task ran do_exit() (CLOCK_REALTIME through the boot anchor,
    /// 1 ns; as a FILETIME, 100 ns). Empty from taskstats, and for a task that
    /// began exiting before the stream was opened.
    std::optional<instant> exit;
    /// When the task was created (start_boottime + the boot anchor, 1 ns).
    /// Empty from taskstats (which only gives elapsed, above).
    std::optional<instant> creation;
    /// /proc's start time field (22) of the task, in USER_HZ ticks since boot:
    /// with tid, the identity proctimes' handles and snapshots use. 0 from
    /// taskstats.
    std::uint64_t start_ticks = 0;
    /// For a process's end (process_ended): what wait(2) reported for the
    /// process; for a thread, its own exit code. From taskstats, a process's
    /// is its last thread's exit code, which is wait(2)'s whenever the process
    /// ended in a group exit (exit(3), a return from main, a fatal signal); it
    /// differs only where a thread left by the bare exit system call with a
    /// code of its own.
    std::optional<exit_status> status;
    /// For a process's end from eBPF (process_ended && exact): the whole
    /// process's final CPU time, every thread included (the kernel's
    /// signal_struct totals, 1 ns, split by the tick-sampled ratio). 0 otherwise.
    std::chrono::nanoseconds process_kernel{}, process_user{};
    /// For a process's end from eBPF: the command line its last exec gave it,
    /// as /proc/<pid>/cmdline reads it (each argument followed by a NUL), when
    /// that exec came after the stream was opened. Empty from taskstats, for a
    /// process that did not exec while the stream was open (one that forked
    /// and never exec'd runs its parent's), and when the argument area was
    /// longer than 8 KiB or its record was lost: never a part, never an
    /// earlier exec's.
    std::optional<std::string> command_line;

    [[nodiscard]] std::chrono::nanoseconds cpu() const noexcept { return kernel + user; }
};

/// Where an exit_stream's records come from.
enum class exit_stream_source : std::uint8_t {
    /// eBPF where it can be used, else taskstats.
    automatic,
    /// The eBPF exit stream only (docs/BPF.md): CAP_BPF + CAP_PERFMON (or
    /// root), a kernel with BTF, a build with PROCTIMES_BPF.
    bpf,
    /// The taskstats exit records only: CAP_NET_ADMIN, CONFIG_TASKSTATS.
    taskstats,
};

/// The words of exit_stream_source (proctimes/words.hpp): printed for the
/// source an exit_stream reads (the `exits` label of serve's
/// proctimes_exporter_source, watch's note on where ends come from).
inline constexpr auto exit_stream_source_words = std::to_array<word_row<exit_stream_source>>({
    {exit_stream_source::automatic, "auto", "eBPF where it can be used, else taskstats"},
    {exit_stream_source::bpf, "bpf", "the eBPF exit stream"},
    {exit_stream_source::taskstats, "taskstats", "the taskstats exit records"},
});
constexpr const auto& word_rows(exit_stream_source) noexcept { return exit_stream_source_words; }
static_assert(words_in_order(exit_stream_source_words));

/// "auto", "bpf" or "taskstats".
PROCTIMES_API std::string_view to_string(exit_stream_source s) noexcept;

/// How an eBPF exit stream's records reach read(). taskstats sends each
/// record as its task exits, whichever is asked.
enum class exit_stream_delivery : std::uint8_t {
    /// The stream's thread takes each record as it comes (the kernel wakes
    /// it) into the queue read() drains: wait() and native_handle() signal
    /// each. For a reader that waits for ends.
    pushed,
    /// read() takes what the kernel holds itself; the kernel wakes the
    /// stream's thread only when its ring buffer is a quarter full, and the
    /// thread looks at least every 5 s. For a reader that reads on its own
    /// schedule (an exporter's scrape): no wake-up per end, which cost each
    /// ending task a self-IPI and the reader's process a thread wake-up
    /// (about 40 µs on a 2-core VM, docs/BPF.md). wait() and native_handle()
    /// signal only what that thread took.
    on_read,
};

/// A listener for the end of every task on the system (one record per
/// thread), from one of two kernel sources (source() says which):
///
/// - eBPF (preferred where permitted): records come once the task has been
///   reaped and has switched out for the last time (an RCU grace period after
///   the reap, usually a few ms), with the exact exit instant, exact final CPU,
///   exit status and creation instant (`ended_task::exact`). A thread of the
///   stream's own collects them from a 4 MiB ring buffer into a queue that
///   read() drains; native_handle() is an eventfd that thread signals. A
///   record the ring buffer or the queue (1,048,576 records) had no room for
///   is counted exactly in lost().
/// - taskstats: one record per thread as it ends, about 170 µs after. Needs
///   CAP_NET_ADMIN, the initial pid namespace and CONFIG_TASKSTATS. Records
///   wait in a 4 MiB socket buffer (about 9,000 records) until read: read them
///   often (a thread blocked in wait(), or an event loop on native_handle()),
///   or a burst overflows it and read() says records were lost (the kernel
///   does not say how many: lost() is empty).
///
/// Movable; one thread at a time.
class PROCTIMES_API exit_stream {
public:
    /// Opens the source `from` names (automatic: eBPF, else taskstats).
    /// Errors: std::errc::operation_not_permitted without the source's
    /// privileges (with automatic, taskstats' error when neither can be used);
    /// errc::foreign_namespace outside the initial pid namespace (records
    /// carry its ids); errc::not_supported without taskstats, or (bpf) a build
    /// without the eBPF source; the native errno of the socket and load calls.
    static result<exit_stream> open(exit_stream_source from = exit_stream_source::automatic) noexcept;
    /// The same, with the eBPF stream's records delivered as `delivery` says.
    static result<exit_stream> open(exit_stream_source from, exit_stream_delivery delivery) noexcept;

    exit_stream() noexcept;
    exit_stream(exit_stream&&) noexcept;
    exit_stream& operator=(exit_stream&&) noexcept;
    ~exit_stream();

    /// Appends every record waiting in the socket to `out`, without blocking.
    /// Returns true when none was lost since the previous read (false: the
    /// socket overflowed and some tasks' records are missing). Errors:
    /// invalid_handle on a moved-from stream; ENOMEM.
    result<bool> read(std::vector<ended_task>& out) noexcept;
    /// Waits until a record is waiting or `timeout` passes (false), or an
    /// error. EINTR returns false.
    result<bool> wait(std::chrono::milliseconds timeout) noexcept;
    /// The socket (taskstats) or an eventfd (eBPF), for poll(2)/epoll(7):
    /// readable while records wait; -1 when moved from.
    [[nodiscard]] int native_handle() const noexcept;
    /// The source the stream reads, bpf or taskstats (never automatic);
    /// empty when moved from. to_string() names it.
    [[nodiscard]] std::optional<exit_stream_source> source() const noexcept;
    /// eBPF: records lost since open(), exactly (ends the ring buffer had no
    /// room for, runs of the program the kernel skipped, records the queue had
    /// no room for). Empty for taskstats (whose socket reports that records
    /// were lost, not how many) and when moved from.
    [[nodiscard]] std::optional<std::uint64_t> lost() const noexcept;
    /// Waits until the end of every task that exited in (from_since_boot,
    /// to_since_boot] (CLOCK_BOOTTIME) and has been released (reaped) can be
    /// read, or was counted in lost(): true then, false once `timeout`
    /// passed. eBPF records come an RCU grace period after the release, later
    /// when the stream's thread is slow; a reader that accounts for an
    /// interval (a frame of `ps --interval`) calls this with the interval
    /// before its last read(), so that no end of the interval comes after.
    /// Tasks not yet released (zombies) are not waited for. A task whose
    /// final values the kernel never reports (docs/BPF.md, "Losses") keeps
    /// it waiting until `timeout`. taskstats: true at once (records are sent
    /// as tasks exit). Errors: invalid_handle on a moved-from stream; ENOMEM.
    result<bool> settle(std::chrono::nanoseconds from_since_boot, std::chrono::nanoseconds to_since_boot,
                        std::chrono::milliseconds timeout) const noexcept;

    struct impl;

private:
    PROCTIMES_LOCAL explicit exit_stream(std::unique_ptr<impl> p) noexcept;
    std::unique_ptr<impl> impl_;
};

// ---- the ledger ----------------------------------------------------------------

/// A process that ended between the two snapshots, as the ledger counted it.
struct PROCTIMES_API ended_process {
    pid_t pid = 0;
    /// Its parent when it ended (the record's), else as `before` saw it.
    pid_t parent_pid = 0;
    /// The start tick (stat field 22) when `before` saw it; otherwise the
    /// estimate from its records (received − elapsed), floored to a tick.
    std::uint64_t start_ticks = 0;
    user_id uid = 0;
    task_name name;  ///< as `before` saw it, else the leader's (or last thread's) record
    /// The name it had when it ended: its leader's (or last thread's)
    /// record's. Differs from `name` for a process that ran another program
    /// (exec) or renamed itself after `before` saw it.
    task_name end_name;
    /// CPU it used inside the interval (after `before` read it, or since it
    /// started when `before` did not see it), by mode.
    std::chrono::nanoseconds kernel{}, user{};
    /// Its final CPU time over its whole life.
    std::chrono::nanoseconds final_kernel{}, final_user{};
    /// CLOCK_BOOTTIME when its last exit record was received: it ended no
    /// later than this.
    std::chrono::nanoseconds ended_since_boot{};
    /// From the eBPF exit stream (ended_task::exact): when it ended (the
    /// latest do_exit() of its threads' records, 1 ns; empty when one of them
    /// has no stamp) and when it was created (1 ns). Empty from taskstats.
    std::optional<instant> exit, creation;
    /// `before` listed it (so kernel/user are final − what `before` read).
    bool seen_before = false;
    /// Its leader's record says it forked and never exec'd
    /// (ended_task::forked_no_exec); false without the leader's record.
    bool forked_no_exec = false;
    /// The command line of its last exec, from its end record
    /// (ended_task::command_line): empty unless the eBPF exit stream saw it exec.
    std::optional<std::string> command_line;
    /// The values are exact (1 ns totals): eBPF's end of a process carries
    /// the whole process's totals (ended_task::process_kernel). False only
    /// for a multi-threaded process that `before` saw without its threads,
    /// ended through taskstats: then kernel/user are a lower bound (its
    /// threads' records minus what `before` read).
    bool exact = true;

    [[nodiscard]] std::chrono::nanoseconds cpu() const noexcept { return kernel + user; }
};

/// The children a process of `after` reaped in the interval, by the kernel's
/// own account (its stat fields 16–17, snapshot_process::children_kernel and
/// children_user): what they grew by since `before` (all of them, for a
/// process created in the interval), in 10 ms ticks.
struct PROCTIMES_API children_account {
    pid_t pid = 0;                  ///< the parent, alive in `after`
    std::uint64_t start_ticks = 0;  ///< its start tick (stat field 22)
    /// Growth of its children's kernel and user time: the final times of the
    /// children it waited for in the interval, their own waited-for
    /// descendants included.
    std::chrono::nanoseconds kernel{}, user{};
    /// Of kernel + user, what the ledger counts in `reaped_children`: less
    /// the CPU those children used before the interval (what `before` read of
    /// them) and less the CPU of children counted in `ended` from their exit
    /// records, so no CPU-second is counted twice. Never negative.
    std::chrono::nanoseconds counted{};

    [[nodiscard]] std::chrono::nanoseconds cpu() const noexcept { return kernel + user; }
};

struct PROCTIMES_API cpu_ledger {
    /// after.since_boot − before.since_boot.
    std::chrono::nanoseconds interval{};
    /// stat_after.since_boot − stat_before.since_boot (the /proc/stat interval).
    std::chrono::nanoseconds stat_interval{};
    int cpus = 0;  ///< from stat_after
    /// Busy CPU time from /proc/stat over the interval.
    std::chrono::nanoseconds busy{};
    /// CPU used by the processes of `after` since `before` (compute_delta:
    /// processes created in the interval count whole; kernel threads included).
    std::chrono::nanoseconds live{};
    /// CPU used in the interval by processes that ended in it (`processes`).
    std::chrono::nanoseconds ended{};
    /// CPU used in the interval by children that their parents reaped in it
    /// and that `ended` does not hold: as given by the caller, or (with
    /// children_from_snapshots) the sum of `children`'s counted parts. 0 when
    /// exits cover every ended task.
    std::chrono::nanoseconds reaped_children{};
    std::chrono::nanoseconds irq{}, softirq{}, steal{};
    /// Guest time: informational, already inside `live`/`ended` (vCPU threads'
    /// user time) and busy's user; not a term of the sum.
    std::chrono::nanoseconds guest{};
    /// busy − every other term. Can be negative by up to the skew between the
    /// /proc/stat reads and the snapshots and their 10 ms ticks per CPU.
    std::chrono::nanoseconds unattributed{};
    /// Processes of `before` that ended with no record here: the CPU they used
    /// after `before` is in `unattributed`.
    std::size_t ended_without_record = 0;
    /// Processes that ended in the interval, counted in `ended`.
    std::vector<ended_process> processes;
    /// With children_from_snapshots: every process of `after` whose children
    /// grew in the interval. Empty otherwise.
    std::vector<children_account> children;
    /// With children_from_snapshots: processes of `after` (or of `before`)
    /// whose snapshot entry has no children times (its source could not read
    /// them), so their reaped children could not be counted.
    std::size_t children_unknown = 0;

    /// The attributed part: live + ended + reaped_children + irq + softirq + steal.
    [[nodiscard]] std::chrono::nanoseconds attributed() const noexcept {
        return live + ended + reaped_children + irq + softirq + steal;
    }
};

/// Accounts for the CPU time of the interval between two snapshots (taken with
/// the same snapshotter or options, on the live /proc), given the exit records
/// read in that interval (records received outside (before.since_boot,
/// after.since_boot] are ignored, so a caller may pass everything it holds) and
/// /proc/stat read next to each snapshot. A pid reused inside the interval is
/// told apart by the records' start (received − elapsed) against
/// `before.since_boot`. A process that ended in the interval and that `before`
/// did not list (it began after `before`, or during its walk) counts whole:
/// no reading holds any of its CPU. Errors: invalid_argument when the snapshots come from
/// different boots, `after` precedes `before`, or a stat reading precedes the
/// other; ENOMEM. Pure: reads nothing, thread-safe.
PROCTIMES_API result<cpu_ledger> compute_ledger(const snapshot& before, const snapshot& after,
                                                std::span<const ended_task> exits, const system_cpu_times& stat_before,
                                                const system_cpu_times& stat_after,
                                                std::chrono::nanoseconds reaped_children = {}) noexcept;

/// Selects the compute_ledger that takes reaped children from the snapshots.
struct children_from_snapshots_t {
    explicit children_from_snapshots_t() = default;
};
inline constexpr children_from_snapshots_t children_from_snapshots{};

/// compute_ledger, with `reaped_children` taken from the snapshots' children
/// times (snapshot_process::children_kernel/children_user, stat fields
/// 16–17): each process of `after` gives the growth of its children's times
/// since `before` (cpu_ledger::children). The growth is the whole final CPU of
/// each child reaped, so the ledger takes away, from the nearest ancestor
/// alive in `after` (a child of a parent that ended too counts towards its
/// grandparent): what `before` read of each process that is gone (used before
/// the interval: already counted then), and the in-interval CPU of each
/// process counted in `ended` from its exit records (counted once). What is
/// left (never negative, per parent) is cpu_ledger::reaped_children. Children
/// a parent did not wait for (SIGCHLD ignored: reaped without accounting) are
/// in no parent's times; nor is a child reaped by a parent that ended in the
/// interval itself, unless that parent was waited for in turn. Same errors as
/// above. Pure, thread-safe.
PROCTIMES_API result<cpu_ledger> compute_ledger(const snapshot& before, const snapshot& after,
                                                std::span<const ended_task> exits, const system_cpu_times& stat_before,
                                                const system_cpu_times& stat_after, children_from_snapshots_t) noexcept;

}  // namespace proctimes::inline v1
