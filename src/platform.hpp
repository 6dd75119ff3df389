// SPDX-License-Identifier: MIT
// The platform seam: what a backend (src/linux/, src/windows/, src/stub/)
// supplies to the portable part of the library. Portable code includes this
// header, never a header of a backend's folder. CMake compiles exactly one
// backend (PROCTIMES_PLATFORM: auto picks src/linux/ on Linux, src/windows/
// on Windows, src/stub/ elsewhere). docs/DESIGN.md ("What a backend
// implements") lists every function a backend defines, read off the build by
// a test, so the list cannot drift from these headers.
//
// Who calls whom, for a task (a process or a thread):
//
//   public handles (src/handles.cpp: process, thread, this_process, this_thread)
//     -> open_*_core, core_* accessors, watch_exit/unwatch_exit   (backend)
//     -> query/record_exit (src/handles.cpp)
//          -> task_lifecycle (src/task_state.hpp: every rule of a task's end)
//               -> sample, deliver_exit_records, await_exit_record, realtime_now (backend)
//   backend internals (exit monitor, spawn) -> record_exit, task_lifecycle methods
//
// Besides these hooks, a backend defines the public functions whose state is
// its own: spawning and waiting (spawn.hpp, exit.hpp's waits; Linux:
// pidfds, src/linux/spawn.cpp, exit_monitor.cpp), the boot
// anchor (boot.hpp), cycle counts (cycles.hpp) and the system CPU times
// (ledger.hpp: read_system_cpu_times). Its waiters and exit
// monitor record an end through record_exit() and the task_lifecycle
// methods, never by their own rules.
//
// Every hook is thread-safe unless it says otherwise. A backend that cannot
// do something answers errc::not_supported (the stub answers it everywhere).
// The snapshot hooks are declared in platform_snapshot.hpp, the exit stream's
// listener in platform_exit_listener.hpp, and the environment lookup in
// platform_env.hpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "platform_snapshot.hpp"
#include "proctimes/process.hpp"
#include "proctimes/result.hpp"
#include "proctimes/spawn.hpp"
#include "proctimes/times.hpp"
#include "task_state.hpp"

namespace proctimes::inline v1::detail {

/// A backend's state of one open task: what it keeps to read the same task
/// again (Linux: a pidfd and /proc descriptors), and the task's lifecycle.
/// Defined by each backend (src/linux/task.hpp, src/stub/task.cpp); portable
/// code holds it only through this pointer and the hooks below.
struct task_core;
using task_core_ptr = std::shared_ptr<task_core>;

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
/// The platform's own handle on the task (Linux: the pidfd), or -1.
int core_native_handle(const task_core& c) noexcept;
/// Whether the task is the caller itself: a process core opened on the
/// calling process, or a thread core opened on the calling thread, by this
/// process (not inherited through fork). Decided by identity, never by the id
/// alone: a handle to an ended thread whose id a new thread reuses is not
/// that thread. Such a core takes the sources of self_process_times() and
/// self_thread_times(), so that every handle to the caller gives one answer.
bool core_is_self(const task_core& c) noexcept;
/// The same for a handle (false for an empty one).
bool core_is_self(const process& p) noexcept;
bool core_is_self(const thread& t) noexcept;
/// The task's lifecycle (src/task_state.hpp), shared with the exit watch.
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

/// Watches the task's exit (the backend's exit monitor): its first observer
/// stamps the instant through record_exit(). Does nothing when the backend
/// cannot watch. Called by open_*_core.
void watch_exit(const task_core_ptr& c) noexcept;
/// Stops watching (the handle closes). If `reap` and the task is a child
/// nobody reaped, the backend reaps it when it exits.
void unwatch_exit(const task_core_ptr& c, bool reap) noexcept;
/// Hands pending kernel exit records to the tasks they concern.
void deliver_exit_records() noexcept;
/// For a task gone unread: waits, bounded, for an exit record on its way.
void await_exit_record(task_core& c) noexcept;
/// Registers the exit-record listener if not tried yet (the portable part
/// calls it only with the monitor and records switched on). Empty when it is
/// registered, else why not (errc::not_supported where the backend has none).
/// The public exit_records_status() (src/exit_settings.cpp).
std::error_code exit_records_backend_status() noexcept;
/// True when the registered listener is the eBPF exit stream (false when
/// none is registered).
bool exit_records_backend_uses_bpf() noexcept;

// ---- ending and waiting, for the Win32 layer ------------------------------------------

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

// ---- the calling process and thread ---------------------------------------------------

pid_t self_process_id() noexcept;
pid_t self_thread_id() noexcept;
/// this_process::times() and this_thread::times() (process.hpp).
result<process_times> self_process_times() noexcept;
/// `with_creation` false: the creation instant is left empty (the epoch) and
/// not looked up, so the call opens no file (a thread's first lookup reads
/// /proc; the main thread's is the process's).
result<thread_times> self_thread_times(bool with_creation = true) noexcept;

// ---- clocks ----------------------------------------------------------------------------

/// The wall clock (CLOCK_REALTIME) as an instant.
instant realtime_now() noexcept;

// ---- portable, for backends (src/handles.cpp) ----------------------------------------

/// process::times(), thread::times(): the lifecycle's query with the hooks.
result<task_times> query(task_core& c) noexcept;
/// The lifecycle's record_exit with the hooks: the end of `c`, seen at `seen`.
void record_exit(task_core& c, instant seen) noexcept;
/// Whether exit records may come from the eBPF exit stream
/// (set_exit_records_bpf, PROCTIMES_EXIT_RECORDS_BPF; src/exit_settings.cpp).
/// The monitor and records switches are the public exit_monitor_enabled()
/// and exit_records_enabled().
bool exit_records_bpf_wanted() noexcept;

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

}  // namespace proctimes::inline v1::detail
