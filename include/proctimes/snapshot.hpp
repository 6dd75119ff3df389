// SPDX-License-Identifier: MIT
// proctimes/snapshot.hpp — every process (and, on request, every thread) of the
// system at one moment, with the four Windows times of each, and the CPU time
// each used between two snapshots.
//
//   auto snap = proctimes::take_snapshot({.threads = true}).value();
//   for (const auto& p : snap.processes)
//       for (const auto& t : snap.threads_of(p)) ...
//
// What a snapshot reads (proc(5)), per process: /proc/<pid>/stat once (name,
// state, parent, start time, utime/stime), the owner of /proc/<pid> (see
// snapshot_process::uid) and the process CPU clock when `cpu` asks for it.
// With threads: the
// /proc/<pid>/task listing and /proc/<pid>/task/<tid>/stat once per thread
// (plus .../schedstat with snapshot_cpu::precise). Nothing is kept open
// between snapshots except, in a snapshotter, the /proc directory itself.
//
// Consistency. /proc is not transactional: tasks are read one after another
// during the walk (a few ms per thousand tasks). A snapshot therefore carries
// ONE timestamp, taken when the walk starts, that every entry shares; tasks
// created during the walk may or may not appear, and tasks that exit during it
// are skipped (counted in `vanished`).
//
// Identities. Entries carry task_identity{boot, id, start_ticks} with
// serial = 0: a snapshot opens no pidfds (that would cost a syscall and a
// descriptor per task). Compare snapshot identities with each other, or with a
// handle's identity after clearing its serial. compute_delta() keys on
// (boot, id, start_ticks), so a pid reused between two snapshots is a
// different process (only a pid handed out twice within one 10 ms tick, which
// the kernel does only when forced through ns_last_pid or clone3 set_tid,
// would be confused).
//
// Errors. A snapshot fails as a whole only when the /proc root cannot be read
// (errc::process_table_unavailable, or the native errno), the boot anchor is unknown, or
// memory runs out. Everything about one process or thread — access denied by
// hidepid or an LSM, a malformed file — is recorded in `failures` and the walk
// goes on. Tasks that exit mid-walk are not failures.
//
// Thread-safety: take_snapshot() may be called from any number of threads; a
// snapshotter is used by one thread at a time. Snapshots are plain values.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "proctimes/export.h"
#include "proctimes/result.hpp"
#include "proctimes/times.hpp"
#include "proctimes/words.hpp"

namespace proctimes::inline v1 {

/// A task's command name (comm) stored inline, so a snapshot allocates nothing
/// per task. Up to 63 bytes: 15 for ordinary tasks (TASK_COMM_LEN), longer for
/// kernel workers ("kworker/0:1-events_power_efficient"). Any byte but NUL may
/// appear, including spaces, parentheses and newlines; longer input is cut.
class task_name {
public:
    static constexpr std::size_t capacity = 63;

    constexpr task_name() noexcept = default;
    constexpr explicit task_name(std::string_view s) noexcept { assign(s); }
    constexpr void assign(std::string_view s) noexcept {
        size_ = static_cast<std::uint8_t>(std::min(s.size(), capacity));
        std::copy_n(s.data(), size_, data_);
    }
    [[nodiscard]] constexpr std::string_view view() const noexcept { return {data_, size_}; }
    [[nodiscard]] std::string str() const { return std::string(view()); }
    [[nodiscard]] constexpr std::size_t size() const noexcept { return size_; }
    [[nodiscard]] constexpr bool empty() const noexcept { return size_ == 0; }

    friend constexpr bool operator==(const task_name& a, const task_name& b) noexcept { return a.view() == b.view(); }
    friend constexpr bool operator==(const task_name& a, std::string_view b) noexcept { return a.view() == b; }

private:
    char data_[capacity]{};
    std::uint8_t size_ = 0;
};

/// How precise the CPU times of a snapshot are, and what that costs (see
/// docs/PERFORMANCE.md, "Snapshots", for figures measured on one machine).
enum class snapshot_cpu : std::uint8_t {
    /// Only utime/stime of the stat files: 10 ms ticks (cpu_source::stat_ticks).
    /// The bare minimum of I/O.
    ticks,
    /// The default. Processes: total from the process CPU clock (1 ns; one
    /// clock_gettime(2), ~0.4 µs plus ~12 ns per thread of the process, a few
    /// percent of a walk), split by the stat tick ratio
    /// (cpu_source::cpu_clock_and_stat). Threads: stat ticks.
    precise_processes,
    /// As precise_processes, and threads: total from
    /// /proc/<pid>/task/<tid>/schedstat (1 ns; one more open+read+close per
    /// thread, which makes a thread walk about 1.4–1.6× as long)
    /// (cpu_source::schedstat_and_stat).
    precise,
};

/// Which reader fills a snapshot (docs/BPF.md). Both fill the same model; a
/// snapshot says in snapshot::source which one it came from.
enum class snapshot_source : std::uint8_t {
    /// take_snapshot(): procfs (a one-shot snapshot never pays the ~50 ms
    /// it costs to load the BPF program). snapshotter: bpf where it can be
    /// used, else procfs — a snapshotter takes many snapshots, and each from
    /// bpf costs a fraction of a millisecond — unless `workers` or
    /// `reuse_idle_threads_for` is set, which only the /proc walk uses.
    automatic,
    /// The /proc walk described at the top of this header.
    procfs,
    /// The eBPF task iterator: the whole system in one read(2), creation
    /// instants exact to 1 ns (start_boottime), CPU totals to 1 ns for
    /// processes and threads (cpu_source::bpf_task). Needs a build with
    /// PROCTIMES_BPF, a kernel with BTF, CAP_BPF + CAP_PERFMON (or root), the
    /// initial pid namespace and the live /proc as proc_root. Where any is
    /// missing the snapshot comes from procfs instead, silently;
    /// bpf_snapshot_status() says why. `cpu`, `workers` and
    /// `reuse_idle_threads_for` do not apply. The uid is the effective uid of
    /// the task's credentials (what the owner of /proc/<pid> shows); a
    /// kernel worker's name is its 15-byte comm, without the workqueue
    /// suffix /proc adds.
    bpf,
    /// Windows (docs/WINDOWS.md): one NtQuerySystemInformation
    /// (SystemProcessInformation) call gives every process and thread with
    /// their creation FILETIMEs and CPU times (cpu_source::os_times, in
    /// clock-interrupt ticks). The only source there: asking for automatic or
    /// procfs gives it; bpf is not_supported. uid is unknown_uid (Windows
    /// names owners by SID), state '?', and proc_root, `cpu`, `workers` and
    /// `reuse_idle_threads_for` do not apply.
    windows,
};

struct snapshot_options {
    /// Which reader fills the snapshot (see snapshot_source).
    snapshot_source source = snapshot_source::automatic;
    /// Also list every thread of every process.
    bool threads = false;
    /// Where procfs is mounted. Another mount (a container's /proc) or a
    /// captured copy of /proc (a directory tree with the same files) can be
    /// given. The process CPU clocks name pids of the CALLER's pid namespace,
    /// so they are used only when `proc_root` is the caller's own procfs (its
    /// "self" entry names the caller); otherwise processes fall back to stat
    /// ticks and say so in their precision.
    std::string proc_root = "/proc";
    snapshot_cpu cpu = snapshot_cpu::precise_processes;
    /// Threads that read /proc concurrently (the calling thread is one). 0
    /// chooses: 2 when the walk is large (at least 400 tasks), the caller may
    /// run on 2 or more CPUs, and one of them is idle at the start (the
    /// running count of /proc/loadavg); else 1. On a busy machine a second
    /// walker is preempted while holding part of the work and makes the walk
    /// slower, not faster (docs/PERFORMANCE.md). A larger request is cut to
    /// four per CPU the caller may run on, and never more than 64 (each
    /// walker is a thread and a 64 KiB buffer). If a thread cannot be
    /// started, the walk continues on fewer; snapshot::workers says how many
    /// ran.
    unsigned workers = 0;
    /// snapshotter only, with threads, on the live /proc: copy the thread
    /// entries of a process that has not run since the previous take()
    /// instead of reading each thread's stat again. A process qualifies when
    /// its CPU-clock total (1 ns) and its list of thread ids are both what the
    /// previous take() found. Its threads then have not run, so their CPU
    /// times and creation instants are exactly what a new read would give. On
    /// a system where most threads sleep, this skips most of a thread walk.
    /// (A name changes only through the thread group itself, which runs to do
    /// it: the kernel refuses writes to a thread's comm file from outside.)
    /// What a copy cannot see is a state change without running: a thread
    /// woken but not yet run still shows 'S'. A copied entry's stat was read
    /// at most this long ago: take() reads every thread again once this much
    /// time has passed since its last complete walk. 0 (the default) copies
    /// nothing. snapshot_process::threads_copied marks the processes whose
    /// threads were copied; snapshot::reused_threads counts the copies.
    std::chrono::nanoseconds reuse_idle_threads_for{0};
};

/// A task's own counters as the kernel keeps them (the values of its
/// /proc/<pid>/task/<tid>/ stat, status and io), read with its CPU.
struct task_counters {
    std::uint64_t minor_faults = 0;          ///< faults served without I/O (stat field 10)
    std::uint64_t major_faults = 0;          ///< faults that read storage (stat field 12)
    std::uint64_t voluntary_switches = 0;    ///< it gave up the CPU (status voluntary_ctxt_switches)
    std::uint64_t involuntary_switches = 0;  ///< it was preempted (status nonvoluntary_ctxt_switches)
    /// Bytes it made storage read and write (io read_bytes, write_bytes);
    /// empty where the kernel does not count them (no CONFIG_TASK_IO_ACCOUNTING).
    std::optional<std::uint64_t> read_bytes, write_bytes;
    friend bool operator==(const task_counters&, const task_counters&) = default;
};

/// Memory of a process, in bytes.
struct process_memory {
    std::uint64_t resident_bytes = 0;  ///< resident set (Windows: working set)
    std::uint64_t virtual_bytes = 0;   ///< virtual size (Windows: commit charge)
    std::uint64_t swap_bytes = 0;      ///< swapped out (0 for a kernel thread; Windows: 0)
    friend bool operator==(const process_memory&, const process_memory&) = default;
};

/// A process as a snapshot saw it.
struct snapshot_process {
    /// {boot, pid, start_ticks, serial = 0}.
    process_identity identity{};
    pid_t parent_pid = 0;  ///< field 4 of stat; 0 for init and kthreadd
    /// The effective uid (as ps's USER column; psutil reports the real uid):
    /// the owner of the /proc/<pid> directory, which procfs sets to the
    /// effective uid even for a non-dumpable process (whose FILES it gives to
    /// root). On a proc_root that is not procfs (a captured tree) it comes from
    /// the "Uid:" line of <pid>/status. unknown_uid when neither could be read
    /// (`failures` then says why).
    user_id uid = unknown_uid;
    /// State letter of proc(5): R running, S sleeping, D disk sleep, Z zombie,
    /// T stopped, t traced, X dead, I idle (kernel thread).
    char state = '?';
    /// A kernel thread (PF_KTHREAD in field 9 of stat): no user space, uid 0,
    /// parent 2 (kthreadd) or 0.
    bool kernel_thread = false;
    /// Threads alive when stat was read (field 20). It may differ from the
    /// number of thread entries of a snapshot: threads come and go mid-walk.
    std::int32_t thread_count = 0;
    task_name name;
    /// creation: the instant of the start tick on this process's boot anchor
    /// (bit-identical with process handles); exit: always empty — a snapshot
    /// does not know exit instants, even of zombies; state: exited for a
    /// zombie (its values are final), else running (also when only the
    /// leader thread has exited, which /proc shows as 'Z' too); sampled_at:
    /// the snapshot's `taken`; kernel/user: all threads, exited ones
    /// included, children excluded; precision: see snapshot_cpu.
    task_times times{};
    /// This process's threads are snapshot::threads[first_thread ..
    /// first_thread + thread_entries); empty without snapshot_options::threads.
    std::size_t first_thread = 0;
    std::size_t thread_entries = 0;
    /// The thread entries were copied from the snapshotter's previous take()
    /// because the process had not run since
    /// (snapshot_options::reuse_idle_threads_for): their CPU times are
    /// current; their state letters are as read then.
    bool threads_copied = false;
    /// CPU time of the children this process has waited for (and, through
    /// them, of their waited-for descendants): stat fields 17 (cstime) and
    /// 16 (cutime), 10 ms ticks (USER_HZ), from the /proc source; the same
    /// counters (signal->cstime, ->cutime) in nanoseconds from the eBPF
    /// source. The kernel adds a child's final times when the parent reaps it
    /// with wait(2); children reaped automatically (SIGCHLD ignored,
    /// SA_NOCLDWAIT) are not added. Empty when the snapshot's source could
    /// not read them.
    std::optional<std::chrono::nanoseconds> children_kernel, children_user;
    /// The process's counters as its own /proc/<pid>/ files show them, read
    /// with its CPU: faults (stat) and storage I/O (io) of all its threads,
    /// ended ones included; switches of its main thread only, as status
    /// states them. Empty from the /proc source, which reads none of them
    /// (read_process_resources does); the eBPF source fills them.
    std::optional<task_counters> counters;
    /// Its memory as its /proc/<pid>/stat (rss, vsize) and status (VmSwap)
    /// state it, read with its CPU from its address space's counters. Empty
    /// from the /proc source, and for a process with no address space (a
    /// kernel thread, a leader that exited before its threads).
    std::optional<process_memory> memory;
    /// Its soft limit of open files (RLIMIT_NOFILE, as prlimit(2) gives it;
    /// unlimited: the largest value), read with its CPU. Empty from the /proc
    /// source.
    std::optional<std::uint64_t> open_files_limit;

    static constexpr user_id unknown_uid = static_cast<user_id>(-1);

    [[nodiscard]] pid_t pid() const noexcept { return identity.id; }
    friend bool operator==(const snapshot_process&, const snapshot_process&) = default;
};

/// A thread as a snapshot saw it.
struct snapshot_thread {
    /// {boot, tid, start_ticks, serial = 0}.
    task_identity identity{};
    pid_t pid = 0;  ///< the process (thread group) it belongs to
    char state = '?';
    task_name name;
    /// As for processes, for this thread alone.
    task_times times{};
    /// Its faults, switches and storage I/O at the instant its CPU was read,
    /// where the snapshot's source reads them in the same pass
    /// (snapshot_source::bpf); empty from /proc, whose walk reads stat and
    /// schedstat only (they are three more files a thread).
    std::optional<task_counters> counters;

    [[nodiscard]] pid_t tid() const noexcept { return identity.id; }
    friend bool operator==(const snapshot_thread&, const snapshot_thread&) = default;
};

/// What a failure was about.
enum class snapshot_item : std::uint8_t {
    process,      ///< the process's stat: the process is missing from the snapshot
    owner,        ///< its status (for the uid): the process is there, uid unknown
    thread_list,  ///< its task directory: the process is there, its threads are not
    thread,       ///< one thread's stat/schedstat: that thread is missing
};

/// One process or thread the walk could not read. Access refusals (EACCES,
/// EPERM: hidepid=1, an LSM) are reported as errc::access_denied; a file
/// without the documented format as errc::malformed_data; anything else with
/// its native errno.
struct snapshot_failure {
    pid_t pid = 0;
    pid_t tid = 0;  ///< 0 unless `item` is thread
    snapshot_item item = snapshot_item::process;
    std::error_code error;
    friend bool operator==(const snapshot_failure&, const snapshot_failure&) = default;
};

struct PROCTIMES_API snapshot {
    /// The instant the walk started, on the boot anchor's scale (boot + the
    /// CLOCK_BOOTTIME reading), the scale of every creation instant: a process
    /// listed here has creation <= taken + 10 ms, even after clock steps.
    instant taken{};
    /// CLOCK_BOOTTIME when the walk started: intervals between snapshots.
    std::chrono::nanoseconds since_boot{};
    /// How long the walk took (CLOCK_BOOTTIME).
    std::chrono::nanoseconds walk_duration{};
    /// How many threads walked /proc (see snapshot_options::workers).
    unsigned workers = 1;
    boot_id boot{};
    /// Whether threads were requested.
    bool has_threads = false;
    /// Which reader produced it: procfs or bpf (never automatic).
    snapshot_source source = snapshot_source::procfs;

    /// Ascending by pid.
    std::vector<snapshot_process> processes;
    /// Grouped by process in the order of `processes`, ascending tid within.
    std::vector<snapshot_thread> threads;
    /// Items that could not be read, ascending by (pid, tid).
    std::vector<snapshot_failure> failures;
    /// Processes and threads that exited during the walk and were skipped.
    std::size_t vanished = 0;
    /// Thread entries copied from the previous take() of the snapshotter
    /// (snapshot_options::reuse_idle_threads_for); 0 in any other snapshot.
    std::size_t reused_threads = 0;

    /// The threads of `p` (one of this snapshot's processes).
    [[nodiscard]] std::span<const snapshot_thread> threads_of(const snapshot_process& p) const noexcept {
        if (p.first_thread > threads.size() || p.thread_entries > threads.size() - p.first_thread) return {};
        return {threads.data() + p.first_thread, p.thread_entries};
    }
    /// The process with this pid, or nullptr. Binary search.
    [[nodiscard]] const snapshot_process* find(pid_t pid) const noexcept;
};

/// Takes a snapshot. Errors: process_table_unavailable (the default /proc is not a
/// mounted procfs, or proc_root does not exist), the native errno of opening
/// or listing proc_root, the boot anchor's error, ENOMEM.
PROCTIMES_API result<snapshot> take_snapshot(const snapshot_options& options = {}) noexcept;

/// Takes snapshot after snapshot with the same options, keeping the /proc
/// directory open and reusing buffers and, through take(snapshot&), the
/// memory of a previous snapshot: in a steady state a walk allocates nothing.
/// Not thread-safe; movable.
class PROCTIMES_API snapshotter {
public:
    /// Opens options.proc_root. Errors as take_snapshot.
    static result<snapshotter> open(snapshot_options options = {}) noexcept;

    snapshotter() noexcept;
    snapshotter(snapshotter&&) noexcept;
    snapshotter& operator=(snapshotter&&) noexcept;
    snapshotter(const snapshotter&) = delete;
    snapshotter& operator=(const snapshotter&) = delete;
    ~snapshotter();

    [[nodiscard]] result<snapshot> take() noexcept;
    /// Overwrites `out`, reusing its vectors' capacity. On error `out` is empty.
    result<void> take(snapshot& out) noexcept;

    [[nodiscard]] const snapshot_options& options() const noexcept;

    struct PROCTIMES_LOCAL impl;

private:
    PROCTIMES_LOCAL explicit snapshotter(std::unique_ptr<impl> p) noexcept;
    std::unique_ptr<impl> impl_;
};

/// Whether the eBPF snapshot source can be used by this process, and if not,
/// why. The first call (or the first snapshotter that asks for bpf) loads the
/// BPF program once (about 50 ms) unless another snapshotter holds it loaded;
/// the answer is kept for the life of the process. Thread-safe.
struct PROCTIMES_API bpf_source_status {
    bool built = false;   ///< compiled in (CMake PROCTIMES_BPF)
    bool usable = false;  ///< loaded and attached here
    /// Empty when usable; else one line ("not built", "needs CAP_BPF and
    /// CAP_PERFMON (or root): Operation not permitted", ...).
    std::string reason;
    /// What loading and attaching took, when it was tried.
    std::chrono::nanoseconds load_time{};
    /// When usable, the program that reads the tasks: "task walk" (one run
    /// over the task list with the open-coded task iterator, Linux 6.7+) or
    /// "task iterator" (bpf_iter/task, older kernels, or
    /// PROCTIMES_BPF_TASK_ITER=1 in the environment); docs/BPF.md.
    std::string program;
};
PROCTIMES_API bpf_source_status bpf_snapshot_status() noexcept;

/// The words of snapshot_source (proctimes/words.hpp): `ps --source` takes
/// them (the command line's older "proc" and "automatic" still work).
inline constexpr auto snapshot_source_words = std::to_array<word_row<snapshot_source>>({
    {snapshot_source::automatic, "auto", "eBPF where it can be used and pays, else the /proc walk", "automatic"},
    {snapshot_source::procfs, "procfs", "the /proc walk", "proc"},
    {snapshot_source::bpf, "bpf", "the eBPF task iterator (falls back to the /proc walk, saying why)"},
    {snapshot_source::windows, "windows", "Windows' process snapshot"},
});
constexpr const auto& word_rows(snapshot_source) noexcept { return snapshot_source_words; }
static_assert(words_in_order(snapshot_source_words));

/// "auto", "procfs", "bpf" or "windows".
PROCTIMES_API std::string_view to_string(snapshot_source s) noexcept;

// ---- CPU used between two snapshots ---------------------------------------------

/// How a delta entry's baseline was found.
enum class delta_basis : std::uint8_t {
    /// In both snapshots (same boot, id and start tick): after − before.
    both,
    /// Created after `before` was taken: all its CPU time was used in the interval.
    created,
    /// Missing from `before` although created before it (it could not be read
    /// then): no baseline, reported as 0.
    unseen,
};

/// CPU time one process or thread used between two snapshots.
struct cpu_delta {
    task_identity identity{};
    pid_t pid = 0;  ///< the process (== identity.id for a process entry)
    /// CPU used in the interval. kernel + user is the exact difference of the
    /// totals; each side is clamped to [0, total] (a tick-ratio split can shift
    /// between samples, the total cannot).
    std::chrono::nanoseconds kernel{};
    std::chrono::nanoseconds user{};
    /// 100 × (kernel + user) / interval: a process busy on N CPUs shows N×100.
    double cpu_percent = 0;
    delta_basis basis = delta_basis::both;
    /// The coarser of the precisions of the two samples.
    cpu_precision precision{};

    [[nodiscard]] std::chrono::nanoseconds cpu() const noexcept { return kernel + user; }
};

struct PROCTIMES_API snapshot_delta {
    /// after.since_boot − before.since_boot.
    std::chrono::nanoseconds interval{};
    /// One entry per process of `after`, in the same order (processes[i]
    /// belongs to after.processes[i]).
    std::vector<cpu_delta> processes;
    /// One entry per thread of `after`, in the same order, when both snapshots
    /// have threads; empty otherwise.
    std::vector<cpu_delta> threads;
    /// Processes of `before` that are not in `after` (exited, or their pid was
    /// reused): the CPU they used after `before` is not known.
    std::vector<process_identity> exited;

    /// Sum of the processes' CPU used.
    [[nodiscard]] std::chrono::nanoseconds total_cpu() const noexcept;
};

/// The CPU each process (and thread) of `after` used since `before`, matched by
/// identity (boot, id, start_ticks). Errors: invalid_argument when the
/// snapshots come from different boots or `after` was taken before `before`;
/// ENOMEM.
PROCTIMES_API result<snapshot_delta> compute_delta(const snapshot& before, const snapshot& after) noexcept;

}  // namespace proctimes::inline v1
