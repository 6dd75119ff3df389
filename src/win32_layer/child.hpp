// SPDX-License-Identifier: MIT
// A process started by CreateProcessA, shared by every HANDLE to it: its
// process and main-thread handles, and the ones OpenProcess/OpenThread return
// for its ids while any handle to it is open.
//
// Everything here rests on the core: proctimes::child starts it (clone3 with
// CLONE_PIDFD, so its handle refers to it from the first instant), the core's
// exit monitor stamps its exit instant and reads the zombie, and
// child::wait() reaps it with the final wait rusage. This object only adds
// what the Win32 semantics need on top:
//  * it is reaped as soon as a wait (or a query) finds it exited, so no zombie
//    waits for the last handle to close, and the exit status stays known;
//  * the main thread's last values are kept for kernels without thread pidfds
//    (< 6.9), where the core cannot watch the thread;
//  * kernel and user never decrease across the exit, whichever handle asks.
// Dropping the last reference before it exits leaves no zombie: the core's
// exit monitor reaps it (child's destructor).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include <sys/types.h>

#include "cpu_split.hpp"
#include "proctimes/process.hpp"
#include "proctimes/spawn.hpp"

namespace proctimes::inline v1::win32 {

class created_process {
public:
    /// Starts the child and opens its main thread. Once the program runs this
    /// succeeds: what could not be opened after the exec (child::handle_error,
    /// or the main thread) makes the queries that need it fail with the
    /// reason, while waits and the exit status rest on the pidfd.
    static result<std::shared_ptr<created_process>> create(const spawn_options& options) noexcept;

    /// The object of a child this process created with this pid while some
    /// reference to it is alive (after it is reaped the pid may name a newer
    /// process: check reaped()). Never an object inherited through fork.
    static std::shared_ptr<created_process> find(pid_t pid) noexcept;

    [[nodiscard]] pid_t id() const noexcept { return pid_; }
    /// Its creation instant, read from its handle; empty when the handle
    /// could not be opened (child::handle_error): not made up.
    [[nodiscard]] std::optional<instant> creation() const noexcept { return creation_; }
    [[nodiscard]] bool reaped() const noexcept;

    /// Waits until it has exited (timeout empty: forever), then reaps it.
    /// Returns true once it has exited, false on timeout.
    [[nodiscard]] result<bool> wait(std::optional<std::chrono::nanoseconds> timeout) noexcept;

    /// Waits until its main thread has exited: through the thread's pidfd
    /// (Linux ≥ 6.9), otherwise until the process has (then reaping it).
    [[nodiscard]] result<bool> wait_main_thread(std::optional<std::chrono::nanoseconds> timeout) noexcept;

    /// Its times, live while it runs; after the exit, the exit instant and the
    /// final values of the reaping wait (wait rusage, 1 µs). Never decreasing.
    [[nodiscard]] result<process_times> times() noexcept;
    /// Its main thread's times. After the exit: the thread's final values (its
    /// zombie's, or the last sample), and an exit instant no later than the
    /// process's (a thread cannot outlive its process).
    [[nodiscard]] result<thread_times> main_thread_times() noexcept;
    /// Empty while it runs; its status once it has exited (reaping it).
    /// Errors: not_supported if something else in this process reaped it
    /// before its status could be read.
    [[nodiscard]] result<std::optional<exit_status>> status() noexcept;
    /// TerminateProcess: kills it (SIGKILL through its pidfd) and records
    /// `code` as the exit code status() reports when it died of that SIGKILL
    /// (if it exited on its own first, its own status stands). False when it
    /// had already exited; the first code given wins.
    [[nodiscard]] result<bool> terminate(int code) noexcept;

    created_process(const created_process&) = delete;
    created_process& operator=(const created_process&) = delete;
    ~created_process();

private:
    created_process() = default;
    /// If it has exited (without blocking): record the main thread's last
    /// values and reap it. Requires mutex_.
    result<bool> finish_if_exited_locked() noexcept;
    result<void> finish_locked() noexcept;
    /// Polls for its exit: the handle's pidfd, or the child's own without one.
    result<bool> wait_exit(std::optional<std::chrono::nanoseconds> timeout) noexcept;

    mutable std::mutex mutex_;
    child child_;
    thread main_;
    std::error_code main_error_;  // why main_ is empty
    pid_t pid_ = 0;
    pid_t owner_ = 0;  // the process that created it (fork detection)
    std::optional<instant> creation_;
    std::optional<child_exit> exit_;
    std::optional<thread_times> main_final_;
    std::optional<int> terminate_code_;  // TerminateProcess's exit code
    detail::monotonic_split process_guard_, thread_guard_;
};

}  // namespace proctimes::inline v1::win32
