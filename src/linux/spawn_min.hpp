// A minimal way to start a child process and learn exactly when it exited and
// what it consumed, so that the Win32 layer's CreateProcess → WaitForSingleObject
// → GetProcessTimes works as on Windows.
//
// This is deliberately self-contained (this header and spawn_min.cpp) so that it
// can be replaced wholesale by the library's general spawning and exit-watching
// facility once that exists; nothing else in the library depends on its
// internals.
//
// How it works.
//  * posix_spawn(3) starts the program (PATH is searched here, in the parent,
//    so that "not found" is reported by the call); signal dispositions are
//    reset to their defaults and the signal mask is emptied in the child, so
//    that it starts like a freshly created Windows process.
//  * A pidfd (pidfd_open(2)) and a proctimes::process / proctimes::thread
//    handle for its main thread are opened at once. Nobody else can reap the
//    child in between unless the program has set SIGCHLD to SIG_IGN or reaps
//    with waitpid(-1) itself (see "Limits").
//  * One watcher thread per process, started at the first spawn, waits in
//    epoll(7) on the pidfds of all children that have not yet been reaped.
//    When one becomes readable (60–90 µs after its last thread exits on an
//    idle machine), the watcher stamps the exit instant with CLOCK_REALTIME,
//    samples the zombie's main thread, and reaps it with
//    waitid(P_PIDFD, ..., WEXITED, &rusage), keeping the final user and kernel
//    times (1 µs) and the exit status. The record outlives the kernel's
//    zombie: it lives as long as any shared_ptr to the spawned_process.
//  * Children are reaped even after every handle to them is gone: no zombies
//    accumulate, as on Windows where closing a handle never affects the
//    process.
//
// Limits.
//  * The exit instant is when the watcher saw the exit: later than the real
//    instant by the pidfd wake-up latency plus any scheduling delay of the
//    watcher thread (milliseconds on a loaded machine).
//  * If someone else reaps the child first (SIGCHLD ignored, waitpid(-1)), its
//    final times are unknown: times() then fails with no_such_process.
//  * Not fork-safe: a forked child of the caller cannot wait for, or learn the
//    exit of, the caller's children.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "proctimes/process.hpp"
#include "proctimes/result.hpp"
#include "proctimes/times.hpp"

namespace proctimes::detail {

struct spawn_options {
    /// The program: a path (anything containing '/'), or a bare name.
    std::string program;
    /// Search bare names in $PATH ("/bin:/usr/bin" when unset), as execvp(3).
    bool search_path = true;
    /// The argument vector including argv[0]; empty means { program }.
    std::vector<std::string> argv;
    /// "NAME=value" strings; nullopt inherits this process's environment.
    std::optional<std::vector<std::string>> environment;
    /// The child's working directory; empty inherits. A relative program path
    /// is resolved against the CALLER's working directory first.
    std::string working_directory;
    /// Put the child in a new process group (setpgid(0, 0)).
    bool new_process_group = false;
};

/// How and when a spawned child ended.
struct child_exit {
    instant when{};           ///< when the watcher observed the exit (see Limits)
    int how = 0;              ///< CLD_EXITED, CLD_KILLED or CLD_DUMPED (siginfo si_code); 0 if unknown
    int status = 0;           ///< the exit status, or the terminating signal
    bool final_times = false; ///< false when someone else reaped the child
};

class spawned_process {
public:
    /// Starts a child. Errors: the errno of posix_spawn(3) (ENOENT, EACCES,
    /// ENOEXEC, E2BIG, ...) or of the lookups that follow; ENOENT when a bare
    /// name is not found in PATH (EACCES when only non-executable files were).
    static result<std::shared_ptr<spawned_process>> spawn(const spawn_options& options) noexcept;

    /// The object of a child spawned by this process with this pid, if any
    /// shared_ptr to it is still alive (the pid may since have been reused by
    /// an unrelated process if the child has exited: check exit_info()).
    static std::shared_ptr<spawned_process> find(pid_t pid) noexcept;

    [[nodiscard]] pid_t id() const noexcept;
    [[nodiscard]] instant creation() const noexcept;
    [[nodiscard]] const process_identity& identity() const noexcept;

    /// Running: the live times of the process handle (exit empty). Exited:
    /// creation, the exit instant, and the final user/kernel times from the
    /// reaping wait (cpu_source::wait_rusage). Kernel and user never decrease
    /// between calls, including across the exit.
    [[nodiscard]] result<process_times> times() const noexcept;
    /// The same for the main thread; after the exit, its last sample taken from
    /// the zombie just before reaping, with the process's exit instant.
    [[nodiscard]] result<thread_times> main_thread_times() const noexcept;

    /// Set once the watcher has reaped the child.
    [[nodiscard]] std::optional<child_exit> exit_info() const noexcept;

    /// Waits until exit_info() is set, at most `timeout` (a negative timeout
    /// waits forever). Returns whether it is set.
    bool wait_for(std::chrono::nanoseconds timeout) const noexcept;

    spawned_process(const spawned_process&) = delete;
    spawned_process& operator=(const spawned_process&) = delete;
    ~spawned_process();

    /// The child's record, shared with the watcher until it has reaped the
    /// child. The spawned_process object itself is held only by users, so
    /// that it (and find()'s answer) goes away with their last reference.
    struct state;
    explicit spawned_process(std::shared_ptr<state> s) noexcept;

private:
    std::shared_ptr<state> s_;
};

}  // namespace proctimes::detail
