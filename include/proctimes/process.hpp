// SPDX-License-Identifier: MIT
// proctimes/process.hpp — handles to processes and threads, and the calling
// process's and thread's own times.
//
// A handle refers to ONE process or thread for its whole life, like a Windows
// HANDLE: it holds kernel references (a pidfd and open /proc descriptors), not
// a number. Once that process is reaped, every query answers
// errc::no_such_process / ESRCH — even after its pid has been given to a new
// process. A handle never re-resolves its pid.
//
// Thread-safety: all const member functions may be called concurrently on the
// same handle. Handles are move-only; moving or destroying a handle while
// another thread uses it is a data race, as for any object.
//
// Costs (see docs/PERFORMANCE.md): opening does the /proc lookups once;
// process::times() is one clock_gettime(2) and one pread(2) on the kept stat
// descriptor; thread::times() is one clock read (threads of this process) or
// one schedstat pread (others) plus one stat pread; this_process::times() is
// one getrusage(2); this_thread::times() one getrusage(2) and one
// clock_gettime(2) of the thread CPU clock.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proctimes/export.h"
#include "proctimes/result.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1 {

namespace detail {
struct handle_access;
}  // namespace detail

/// A handle to a process.
class PROCTIMES_API process {
public:
    /// An empty handle: every query returns errc::invalid_handle.
    process() noexcept;
    process(process&&) noexcept;
    process& operator=(process&&) noexcept;
    process(const process&) = delete;
    process& operator=(const process&) = delete;
    ~process();

    /// Opens the process `pid` (a thread-group leader).
    /// Errors: invalid_argument (pid ≤ 0 or above the kernel's PID_MAX_LIMIT),
    /// no_such_process, not_a_process (pid names a non-leader thread),
    /// access_denied (hidden by hidepid or an LSM), process_table_unavailable (/proc is
    /// not mounted), or the native errno of an unexpected failure.
    static result<process> open(pid_t pid) noexcept;
    /// Opens a real handle to the calling process (it still refers to this
    /// process when used in a forked child, like a duplicated Windows handle).
    static result<process> open_self() noexcept;

    /// Creation, exit (empty while running), kernel and user CPU time of all
    /// threads, exited ones included, children excluded.
    /// Sources: the process CPU clock (1 ns total) + the stat split (10 ms);
    /// a handle to the calling process (opened by it, not inherited through
    /// fork): this_process::times()'s, so that mixing the two never goes back.
    /// After the process exits the handle still answers, like a Windows
    /// handle: state exited with the exit instant and final values (read from
    /// the zombie), or exited_partial with the last values sampled when it was
    /// reaped before they could be read (include/proctimes/exit.hpp).
    /// Errors: no_such_process when it was reaped and nothing recorded its end
    /// (exit monitor off).
    [[nodiscard]] result<process_times> times() const noexcept;

    /// How the process ended, for any process, not only children: the kernel
    /// shows a zombie's wait status (stat field 52, Linux ≥ 3.5) until its
    /// parent reaps it, and the handle records it when its exit is observed
    /// (by the exit monitor, a query, or child::wait). Returns an empty
    /// optional while the process runs (GetExitCodeProcess: STILL_ACTIVE).
    /// Errors: not_supported when it exited but was reaped before anyone could
    /// read its status (the exit monitor off, the kernel before field 52, or a
    /// process of another user: the kernel shows its field 52 as 0).
    /// A process whose main thread ended (pthread_exit) before the others shows
    /// the main thread's own code in field 52, not the process's: when the
    /// handle saw that happen, the status is not_supported instead (unless
    /// child::wait read it); when it did not, the main thread's code (0).
    [[nodiscard]] result<std::optional<proctimes::exit_status>> exit_status() const noexcept;

    /// The command name (comm, at most 15 bytes, may contain any byte but NUL),
    /// read now: a process can rename itself.
    [[nodiscard]] result<std::string> name() const;
    /// The parent pid, read now (it changes when the parent exits).
    [[nodiscard]] result<pid_t> parent_id() const noexcept;
    /// The ids of the threads alive now, ascending.
    [[nodiscard]] result<std::vector<pid_t>> thread_ids() const;

    [[nodiscard]] pid_t id() const noexcept;
    [[nodiscard]] const process_identity& identity() const noexcept;
    /// The creation instant (cached at open: it never changes).
    [[nodiscard]] instant creation() const noexcept;
    [[nodiscard]] bool valid() const noexcept { return impl_ != nullptr; }
    explicit operator bool() const noexcept { return valid(); }

    struct PROCTIMES_LOCAL impl;

private:
    PROCTIMES_LOCAL explicit process(std::unique_ptr<impl> p) noexcept;
    std::unique_ptr<impl> impl_;
    friend struct detail::handle_access;
};

/// A handle to one thread (task) of any process.
class PROCTIMES_API thread {
public:
    thread() noexcept;
    thread(thread&&) noexcept;
    thread& operator=(thread&&) noexcept;
    thread(const thread&) = delete;
    thread& operator=(const thread&) = delete;
    ~thread();

    /// Opens thread `tid` of whichever process it belongs to.
    /// Errors: as process::open, with no_such_thread for an unknown tid.
    static result<thread> open(pid_t tid) noexcept;
    /// Opens thread `tid` of process `pid`; no_such_thread if it is not one of its threads.
    static result<thread> open(pid_t pid, pid_t tid) noexcept;
    /// Opens a real handle to the calling thread (usable from any thread).
    static result<thread> open_self() noexcept;

    /// Creation, exit (empty while running), kernel and user CPU time of this thread.
    /// Sources: this process's threads: the thread CPU clock (1 ns) + stat
    /// split; other processes' threads: schedstat (1 ns) + stat split. A
    /// handle to the calling thread, used by that thread: this_thread::times()'s
    /// (one split guard for both, so mixing them never goes back).
    [[nodiscard]] result<thread_times> times() const noexcept;
    /// The thread's name (comm), read now.
    [[nodiscard]] result<std::string> name() const;

    [[nodiscard]] pid_t id() const noexcept;
    [[nodiscard]] pid_t process_id() const noexcept;
    [[nodiscard]] const task_identity& identity() const noexcept;
    [[nodiscard]] instant creation() const noexcept;
    [[nodiscard]] bool valid() const noexcept { return impl_ != nullptr; }
    explicit operator bool() const noexcept { return valid(); }

    struct PROCTIMES_LOCAL impl;

private:
    PROCTIMES_LOCAL explicit thread(std::unique_ptr<impl> p) noexcept;
    std::unique_ptr<impl> impl_;
    friend struct detail::handle_access;
};

namespace this_process {
/// The calling process's times: one getrusage(RUSAGE_SELF) (1 µs, the
/// kernel's own split) plus the creation instant cached at first use.
PROCTIMES_API result<process_times> times() noexcept;
PROCTIMES_API pid_t id() noexcept;
}  // namespace this_process

namespace this_thread {
/// The calling thread's times: the total from its CPU clock
/// (CLOCK_THREAD_CPUTIME_ID, 1 ns, current to the call), split by the ratio of
/// one getrusage(RUSAGE_THREAD) (tick-sampled; neither side ever goes back
/// between two calls on the thread), plus its creation instant, cached per
/// thread at first use. cpu_source::thread_clock_and_rusage.
PROCTIMES_API result<thread_times> times() noexcept;
PROCTIMES_API pid_t id() noexcept;
}  // namespace this_thread

}  // namespace proctimes::inline v1
