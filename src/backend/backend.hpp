// SPDX-License-Identifier: MIT
// The backend seam: everything a backend (src/linux/, src/windows/, src/stub/)
// supplies to the portable part of the library, in one file. To add a
// backend, copy src/stub/ and define what this file declares in the groups
// marked "contract:" below; tests/layout/backend_contract.py reads those
// groups from this file (and from nowhere else) and fails the build when a
// backend's objects lack one of them, so the list cannot drift from the code.
//
// Portable code includes this header, never a header of a backend's folder.
// CMake compiles exactly one backend (PROCTIMES_PLATFORM: auto picks
// src/linux/ on Linux, src/windows/ on Windows, src/stub/ elsewhere).
//
// Who calls whom, for a task (a process or a thread):
//
//   public handles (src/handles.cpp: process, thread, this_process, this_thread)
//     -> open_*_core, core_* accessors, exit_backend: watch/unwatch   (backend)
//     -> query/record_exit (src/handles.cpp)
//          -> task_lifecycle (src/exit/lifecycle.hpp: every rule of a task's end)
//               -> sample, exit_backend: deliver/await, realtime_now (backend)
//   backend internals (exit monitor, spawn) -> record_exit, task_lifecycle methods
//
// The groups:
//   hooks        proctimes::detail functions and the interfaces a backend
//                implements (snapshot_source, exit_backend): what the
//                portable sources call;
//   public       functions of the public headers whose state is the
//                platform's own (spawning and waiting, the boot anchor, cycle
//                counts, cgroups, the system's CPU times), re-declared here by
//                name: the compiler checks each against its public header;
//                members of public classes, which C++ cannot re-declare
//                outside their class, are named on "owes:" lines;
//   win32_layer  what the Win32 layer (src/win32_layer/, built with the Linux
//                and stub backends, not with Windows', which has the real
//                API) needs of the platform;
//   given        not owed: what the portable part gives a backend.
// The POSIX sources (CMakeLists.txt: PROCTIMES_POSIX_SOURCES) define some of
// the public group (the cgroup reads) for the backends that carry them.
//
// Every hook is thread-safe unless it says otherwise. A backend that cannot
// do something answers errc::not_supported (the stub answers it everywhere).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "exit/lifecycle.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/cgroup.hpp"
#include "proctimes/cycles.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/export.h"
#include "proctimes/ledger.hpp"
#include "proctimes/machine.hpp"
#include "proctimes/process.hpp"
#include "proctimes/resources.hpp"
#include "proctimes/result.hpp"
#include "proctimes/snapshot.hpp"
#include "proctimes/spawn.hpp"
#include "proctimes/times.hpp"
#include "proctimes/tree.hpp"
#include "report.hpp"

namespace proctimes::inline v1::detail {

/// A backend's state of one open task: what it keeps to read the same task
/// again (Linux: a pidfd and /proc descriptors; Windows: a HANDLE), and the
/// task's lifecycle. Defined by each backend (src/linux/task.hpp,
/// src/windows/task.hpp, src/stub/process.cpp); portable code holds it only
/// through this pointer and the hooks below.
struct task_core;
using task_core_ptr = std::shared_ptr<task_core>;

/// The platform's own handle on a task, wide enough for any platform's
/// (Linux: a pidfd; Windows: a HANDLE's value); no_native_handle when none.
using native_handle = std::intptr_t;
inline constexpr native_handle no_native_handle = -1;

/// One source of whole-system snapshots (src/snapshot.cpp owns everything
/// around it: when a snapshot is taken, whether an idle process's threads may
/// be copied from the previous snapshot, clearing a failed take, the deltas).
/// A snapshotter owns one and calls it from one thread at a time; a source
/// need not be thread-safe itself (it may use threads inside take()).
/// Portable helpers a source may use: src/worker_pool.hpp (share a walk out
/// over threads), src/snapshot_records.hpp (per-walker output, the merge into
/// pid order, the copy of an idle process's threads). Sources today: /proc
/// (src/linux/snapshot.cpp), the eBPF task iterator
/// (src/linux/bpf/tree_source.cpp), NtQuerySystemInformation
/// (src/windows/snapshot.cpp); the stub has none.
class snapshot_source {
public:
    snapshot_source() = default;
    snapshot_source(const snapshot_source&) = delete;
    snapshot_source& operator=(const snapshot_source&) = delete;
    snapshot_source(snapshot_source&&) = delete;
    snapshot_source& operator=(snapshot_source&&) = delete;
    virtual ~snapshot_source() = default;

    /// Stamps the snapshot about to be taken: out.taken (the instant every
    /// entry's sampled_at shares), out.since_boot (the same instant on the
    /// boot-relative clock that start ticks count), out.boot. Called first in
    /// every take. Errors: the boot anchor is unknown (error of
    /// get_boot_anchor()).
    [[nodiscard]] virtual result<void> stamp(snapshot& out) noexcept = 0;

    /// Whether this source's process CPU totals are exact to the nanosecond
    /// (a CPU clock, not 10 ms ticks), with this snapshotter's options. Only
    /// then does an unchanged total prove that a process has not run, so that
    /// its threads may be copied from the previous snapshot.
    [[nodiscard]] virtual bool exact_process_totals() const noexcept = 0;

    /// Reads every task into `out` (stamped by stamp()): out.processes in
    /// ascending pid order, their threads (when out.has_threads) contiguous in
    /// out.threads at first_thread, in ascending tid order; out.failures in
    /// (pid, tid) order; out.vanished, out.reused_threads, out.workers,
    /// out.walk_duration. `reuse_from`, when not null, is the previous
    /// snapshot of this snapshotter (same boot, taken with threads): a process
    /// whose identity, exact total and thread ids are unchanged since it may
    /// have its threads copied from it (see copy_idle_threads()) instead of
    /// read. Returns an error only when the walk as a whole failed (ENOMEM, an
    /// unreadable root); per-task problems go to out.failures. `out`'s vectors
    /// may be swapped with the source's buffers (capacity is kept, contents
    /// are not).
    [[nodiscard]] virtual result<void> take(snapshot& out, const snapshot* reuse_from) noexcept = 0;
};

}  // namespace proctimes::inline v1::detail

namespace proctimes::inline v1 {

/// One open listener for the end of every task on the system: the backend's
/// side of exit_stream (proctimes/ledger.hpp). exit_backend::open_stream()
/// gives one, and src/exit/public_stream.cpp makes the public class of it.
/// Sources today: the eBPF exit stream and taskstats
/// (src/linux/exit/listener.cpp); Windows and the stub have none.
///
/// Used by one thread at a time (the public class's rule). Hidden like every
/// implementation type (PROCTIMES_LOCAL): a shared libproctimes exports none of it.
struct PROCTIMES_LOCAL exit_stream::impl {
    impl() = default;
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;
    impl(impl&&) = delete;
    impl& operator=(impl&&) = delete;
    virtual ~impl() = default;

    /// exit_stream::read: appends what waits, without blocking; false when
    /// records were lost since the previous read.
    virtual result<bool> read(std::vector<ended_task>& out) noexcept = 0;
    /// exit_stream::wait: true once a record waits, false on timeout or EINTR.
    virtual result<bool> wait(std::chrono::milliseconds timeout) noexcept = 0;
    /// exit_stream::native_handle: a descriptor readable while records wait.
    [[nodiscard]] virtual int native_handle() const noexcept = 0;
    /// exit_stream::source: the source read (bpf or taskstats).
    [[nodiscard]] virtual exit_stream_source source() const noexcept = 0;
    /// exit_stream::lost: exact count of lost records, where the source has one.
    [[nodiscard]] virtual std::optional<std::uint64_t> lost() const noexcept = 0;
    /// exit_stream::settle: true once every released task's end of the
    /// window can be read (or was counted lost); false at the deadline. A
    /// source that sends each record as its task exits has nothing to wait for.
    [[nodiscard]] virtual result<bool> settle(std::chrono::nanoseconds /*from*/, std::chrono::nanoseconds /*to*/,
                                              std::chrono::milliseconds /*timeout*/) const noexcept {
        return true;
    }
};

}  // namespace proctimes::inline v1

namespace proctimes::inline v1::detail {

// contract: hooks ----------------------------------------------------------------

// ---- opening a task ------------------------------------------------------------

/// Opens the process `pid` (1 ≤ pid ≤ max_task_id(), checked by the backend):
/// identity, creation, a first sample, and the exit watch. Errors as
/// process::open documents.
result<task_core_ptr> open_process_core(pid_t pid) noexcept;
/// Opens the thread `tid` of whatever process it belongs to.
result<task_core_ptr> open_thread_core(pid_t tid) noexcept;
/// Opens the thread `tid` of process `pid` (no_such_thread when not its).
result<task_core_ptr> open_thread_core(pid_t pid, pid_t tid) noexcept;

/// The largest process or thread id the platform can ever hand out.
pid_t max_task_id() noexcept;

// ---- what was fixed at open (no I/O) ----------------------------------------------

pid_t core_id(const task_core& c) noexcept;          ///< pid, or tid
pid_t core_process_id(const task_core& c) noexcept;  ///< the process (== core_id for a process)
const task_identity& core_identity(const task_core& c) noexcept;
instant core_creation(const task_core& c) noexcept;
/// The platform's own handle on the task (Linux: the pidfd; Windows: the
/// HANDLE), or no_native_handle. Owned by the core.
native_handle core_native_handle(const task_core& c) noexcept;
/// Whether the task is the caller itself: a process core opened on the
/// calling process, or a thread core opened on the calling thread, by this
/// process (not inherited through fork). Decided by identity, never by the id
/// alone: a handle to an ended thread whose id a new thread reuses is not
/// that thread. Such a core takes the sources of self_process_times() and
/// self_thread_times(), so that every handle to the caller gives one answer.
bool core_is_self(const task_core& c) noexcept;
/// The task's lifecycle (src/exit/lifecycle.hpp), shared with the exit watch.
task_lifecycle& core_lifecycle(task_core& c) noexcept;

// ---- sampling ----------------------------------------------------------------------

/// Reads the task's values now: CPU total and its kernel/user split, the
/// precision of its source, creation and sampled_at. `dead`: readable, but
/// ended (a zombie). A task that is gone answers the lifecycle's
/// gone_error(). This is task_sampler::sample for the task's lifecycle.
result<task_times> sample(task_core& c, bool& dead) noexcept;
/// The task's name (Linux: comm).
result<std::string> core_name(const task_core& c);
/// The process's parent's id.
result<pid_t> core_parent_id(const task_core& c) noexcept;
/// The process's thread ids, sorted.
result<std::vector<pid_t>> core_thread_ids(const task_core& c);

// ---- exits -------------------------------------------------------------------------

/// A backend's exit records: the watch on each open task's end, the kernel's
/// records of ended tasks handed to the tasks they concern, and the listener
/// for the end of every task on the system. One instance per backend, for
/// the life of the process (platform_exit_backend()), holding no state of
/// its own: a call costs one indirect call, and no allocation. Linux:
/// src/linux/exit/monitor.cpp (the exit monitor, taskstats and the eBPF exit
/// stream); Windows (src/windows/exit.cpp) and the stub (src/stub/exit.cpp)
/// watch nothing and have no listener (no_exit_records).
class exit_backend {
public:
    exit_backend(const exit_backend&) = delete;
    exit_backend& operator=(const exit_backend&) = delete;
    exit_backend(exit_backend&&) = delete;
    exit_backend& operator=(exit_backend&&) = delete;

    /// Watches the task's exit (the backend's exit monitor): its first
    /// observer stamps the instant through record_exit(). Does nothing when
    /// the backend cannot watch. Called by open_*_core.
    virtual void watch(const task_core_ptr& c) noexcept = 0;
    /// Stops watching (the handle closes). If `reap` and the task is a child
    /// nobody reaped, the backend reaps it when it exits.
    virtual void unwatch(const task_core_ptr& c, bool reap) noexcept = 0;
    /// Hands pending kernel exit records to the tasks they concern.
    virtual void deliver() noexcept = 0;
    /// For a task gone unread: waits, bounded, for an exit record on its way.
    virtual void await(task_core& c) noexcept = 0;
    /// Registers the listener that hands the kernel's exit records to open
    /// handles, if not tried yet (the portable part calls it only with the
    /// monitor and records switched on): the source of the registered
    /// listener (Linux: exit_stream_source::bpf or ::taskstats), else why
    /// there is none (errc::not_supported where the backend has none). The
    /// public exit_records_status() and exit_records_use_bpf()
    /// (src/exit/settings.cpp).
    virtual result<exit_stream_source> records_source() noexcept = 0;
    /// Opens the listener for the end of every task on the system that
    /// `from` names, its records delivered as `delivery` says
    /// (exit_stream::open's contract and errors); errc::not_supported where
    /// the backend has none. src/exit/public_stream.cpp makes the public
    /// class of it.
    virtual result<std::unique_ptr<exit_stream::impl>> open_stream(exit_stream_source from,
                                                                   exit_stream_delivery delivery) noexcept = 0;

protected:
    // Constant-initialised, never destroyed through this class: an instance
    // with static storage stays usable by handles closed while the process
    // exits.
    exit_backend() = default;
    ~exit_backend() = default;
};

/// The exit records of a backend that has none (Windows, the stub): it
/// watches no task's exit, hands no records and has no listener for task
/// ends (errc::not_supported). Such a backend's platform_exit_backend()
/// returns instance().
class no_exit_records final : public exit_backend {
public:
    constexpr no_exit_records() noexcept = default;
    /// The one instance: constant-initialised and never destroyed, so that
    /// handles closed while the process exits can still use it.
    static no_exit_records& instance() noexcept {
        static constinit no_exit_records one;
        return one;
    }
    void watch(const task_core_ptr&) noexcept override {}
    void unwatch(const task_core_ptr&, bool) noexcept override {}
    void deliver() noexcept override {}
    void await(task_core&) noexcept override {}
    result<exit_stream_source> records_source() noexcept override { return make_error_code(errc::not_supported); }
    result<std::unique_ptr<exit_stream::impl>> open_stream(exit_stream_source, exit_stream_delivery) noexcept override {
        return make_error_code(errc::not_supported);
    }
};
static_assert(std::is_trivially_destructible_v<no_exit_records>);

/// The backend's exit records (exit_backend), one instance for the life of
/// the process.
exit_backend& platform_exit_backend() noexcept;

// ---- the calling process and thread ---------------------------------------------------

pid_t self_process_id() noexcept;
pid_t self_thread_id() noexcept;
/// this_process::times() and this_thread::times() (process.hpp).
result<process_times> self_process_times() noexcept;
/// `with_creation` false: the creation instant is left empty (the epoch) and
/// not looked up, so the call opens no file (a thread's first lookup reads
/// /proc; the main thread's is the process's).
result<thread_times> self_thread_times(bool with_creation = true) noexcept;

// ---- clocks, snapshots, the environment -------------------------------------------

/// The wall clock (CLOCK_REALTIME) as an instant.
instant realtime_now() noexcept;

/// Opens the snapshot source for `options` (proc_root, threads, cpu,
/// workers). Errors as snapshotter::open() documents; the stub returns
/// errc::not_supported.
[[nodiscard]] result<std::unique_ptr<snapshot_source>> open_snapshot_source(const snapshot_options& options) noexcept;

/// The backend's lookup of the environment variable `name`: its value, or
/// null when it is not set. With `secure`, a backend ignores the environment
/// of a program that gained privileges at its start (Linux: secure_getenv(3),
/// which answers nothing in a setuid, setgid or file-capability program);
/// settings that name files use it. Portable code reads the environment only
/// through src/settings.hpp, which calls this.
const char* platform_env_lookup(const char* name, bool secure) noexcept;

// ---- per-process resources (resources.hpp) ---------------------------------------
//
// The backend reads the families a caller asks for, each source at most once,
// and reports what it could not read in `missing`. The portable
// read_process_resources (src/resources.cpp) checks the arguments and calls
// it. Linux: src/linux/resources.cpp (parsers in src/parse/procfs.hpp and
// src/parse/resources.hpp); Windows: src/windows/resources.cpp; the stub
// answers errc::not_supported.

/// Reads process `pid` (> 0) as read_process_resources documents.
result<process_resources> read_resources(pid_t pid, const resource_options& options) noexcept;
/// read_boot_time_seconds as documented.
result<std::int64_t> boot_time_seconds(const std::string& proc_root) noexcept;

// contract: win32_layer ----------------------------------------------------------

/// Ends the process at once (TerminateProcess), through the handle's own
/// reference to it, never by id (Linux: SIGKILL through its pidfd). ESRCH
/// once it has been reaped; invalid_handle for an empty handle;
/// not_supported where the platform cannot (Linux < 5.3: no pidfd).
std::error_code terminate_process(const process& p) noexcept;
/// The same for a spawned child: through its handle, or without one
/// (child::handle_error) through the child's own reference.
std::error_code terminate_child(const child& c) noexcept;
/// Waits until the child has exited, without reaping it: true once it has,
/// false on timeout (empty: forever). With a handle this is wait_for_exit;
/// without one (child::handle_error) it waits on the child's own reference.
/// Errors: invalid_handle for an empty child, not_supported where the
/// platform cannot.
result<bool> wait_child_exit(const child& c, std::optional<std::chrono::nanoseconds> timeout) noexcept;

}  // namespace proctimes::inline v1::detail

namespace proctimes::inline v1 {

// contract: public ---------------------------------------------------------------

// ---- spawning and waiting (spawn.hpp, exit.hpp, tree.hpp) ---------------------------
// owes: proctimes::child::spawn
// owes: proctimes::child::wait
// owes: proctimes::child::wait_for
// owes: proctimes::child::wait_without_handle
// owes: proctimes::child::release
PROCTIMES_API result<bool> wait_for_exit(const process& p, std::optional<std::chrono::nanoseconds> timeout) noexcept;
PROCTIMES_API result<bool> wait_for_exit(const thread& t, std::optional<std::chrono::nanoseconds> timeout) noexcept;
PROCTIMES_API result<std::optional<std::size_t>> wait_for_any(std::span<const process* const> ps,
                                                              std::optional<std::chrono::nanoseconds> timeout) noexcept;
PROCTIMES_API result<tree_run> run_tree(const spawn_options& options, const tree_options& tree) noexcept;

// ---- the boot anchor and start ticks (boot.hpp) --------------------------------------
// owes: proctimes::boot_anchor::clock_step
PROCTIMES_API result<boot_anchor> get_boot_anchor() noexcept;
PROCTIMES_API result<instant> instant_from_start_ticks(std::uint64_t start_ticks) noexcept;
PROCTIMES_API std::int64_t clock_ticks_per_second() noexcept;

// ---- cycle counts (cycles.hpp) ---------------------------------------------------------
PROCTIMES_API const tsc_rate& get_tsc_rate() noexcept;
namespace this_process {
PROCTIMES_API std::uint64_t cycles() noexcept;
}  // namespace this_process
namespace this_thread {
PROCTIMES_API std::uint64_t cycles() noexcept;
}  // namespace this_thread
PROCTIMES_API result<void> hardware_cycle_counter_status() noexcept;

// ---- the system: CPU times, cgroups, the eBPF source (ledger.hpp, cgroup.hpp, snapshot.hpp)
PROCTIMES_API result<system_cpu_times> read_system_cpu_times(const std::string& proc_root) noexcept;
PROCTIMES_API result<std::string> process_cgroup(pid_t pid, const std::string& proc_root) noexcept;
PROCTIMES_API result<std::string> process_cgroup(pid_t pid, cgroup_hierarchy in, const std::string& proc_root) noexcept;
PROCTIMES_API result<cgroup_location> find_cgroup(const std::string& cgroup_path) noexcept;
PROCTIMES_API result<std::chrono::nanoseconds> cgroup_cpu_usage(const std::string& cgroup_path) noexcept;
PROCTIMES_API bpf_source_status bpf_snapshot_status() noexcept;

// ---- the machine: load, memory, each CPU (machine.hpp)
PROCTIMES_API result<machine_status> read_machine_status(machine_part parts, const std::string& proc_root) noexcept;

}  // namespace proctimes::inline v1

namespace proctimes::inline v1::detail {

// contract: given -----------------------------------------------------------------
// Defined by the portable part (src/handles.cpp, src/exit/settings.cpp) for
// the backends' use.

/// process::times(), thread::times(): the lifecycle's query with the hooks.
result<task_times> query(task_core& c) noexcept;
/// The lifecycle's record_exit with the hooks: the end of `c`, seen at `seen`.
void record_exit(task_core& c, instant seen) noexcept;
/// Whether exit records may come from the eBPF exit stream
/// (set_exit_records_bpf, PROCTIMES_EXIT_RECORDS_BPF; src/exit/settings.cpp).
/// The monitor and records switches are the public exit_monitor_enabled()
/// and exit_records_enabled().
bool exit_records_bpf_wanted() noexcept;
/// Whether a handle is one to the caller (core_is_self of its core; false
/// for an empty handle).
bool core_is_self(const process& p) noexcept;
bool core_is_self(const thread& t) noexcept;

/// Reaches the core behind a handle (the handles keep it private), and makes
/// handles from cores (spawn's children).
struct handle_access {
    static task_core* core(const process& p) noexcept;
    static task_core* core(const thread& t) noexcept;
    static result<process> make_process(result<task_core_ptr> core) noexcept;
    static result<thread> make_thread(result<task_core_ptr> core) noexcept;
    /// Closes a child's handle; the backend reaps the child if nobody did.
    static void release_child(process& p) noexcept;
};

/// platform_env_lookup's value as a string, or nullopt when it is not set,
/// or cannot be copied (out of memory: the setting keeps its default, and
/// stderr says so once per process).
inline std::optional<std::string> platform_getenv(const char* name, bool secure) noexcept {
    const char* v = platform_env_lookup(name, secure);
    if (v == nullptr) return std::nullopt;
    try {
        return std::string(v);
    } catch (...) {
        static std::atomic<bool> once{false};
        (void)report_once(once, "out of memory reading %s: the setting keeps its default", name);
        return std::nullopt;
    }
}

}  // namespace proctimes::inline v1::detail
