// SPDX-License-Identifier: MIT
// proctimes/spawn.hpp — start a command and measure it, exactly.
//
//   auto c = proctimes::child::spawn({.argv = {"make", "-j2"}}).value();
//   proctimes::child_exit e = c.wait().value();
//   e.times.user, e.times.kernel   // the process's own CPU time (children excluded)
//   e.children_user                // CPU time of the processes it waited for
//   if (e.status) e.status->code   // or e.status->signal; empty: unknown
//
// The child is created with clone3(CLONE_PIDFD), so its handle refers to it
// from the first instant, whatever else reaps children in this process.
//
// Once exec has succeeded the command runs, and a child is returned whatever
// fails after that: if its /proc entry cannot be opened (/proc hidden, absent
// or mounted with subset=pid, or no descriptor left), handle() is empty,
// handle_error() says why, and wait() still reports what waitid(2) alone gives
// (exit status, exit instant, wait rusage). A running command is never
// reported as a failure to start, nor left unattended.
//
// SIGCHLD: when this process ignores SIGCHLD (SIG_IGN, or SA_NOCLDWAIT), the
// kernel reaps its children itself as they exit, so their exit status is lost
// to everyone; a SIGCHLD handler that waits for any child (waitpid(-1, ...))
// can take it too. wait() then reports the status as unknown (an empty
// child_exit::status), never a made-up 0.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "proctimes/export.h"
#include "proctimes/process.hpp"
#include "proctimes/result.hpp"

namespace proctimes::inline v1 {

namespace detail {
struct spawn_gate;  // the library's own hold before exec (run_tree's tracer attaches there)
}  // namespace detail

struct spawn_options {
    /// The program and its arguments. argv[0] without a '/' is searched in PATH
    /// (unless `program` is set). A relative path — argv[0] or `program` with a
    /// '/', or found through a relative PATH entry — means the CALLER's
    /// working directory, also when `working_directory` changes the child's.
    std::vector<std::string> argv;
    /// The file to execute when it is not argv[0] (CreateProcess's
    /// lpApplicationName): used as given, never searched in PATH. Empty: argv[0].
    std::string program;
    /// The environment; empty optional: inherit this process's.
    std::optional<std::vector<std::string>> environment;
    /// The working directory; empty: inherit.
    std::string working_directory;
    /// Descriptors to install as the child's 0, 1, 2; -1: inherit.
    int stdin_fd = -1;
    int stdout_fd = -1;
    int stderr_fd = -1;
    /// Put the child in a new process group of its own (setpgid(0, 0)), so
    /// that signals sent to the caller's group (Ctrl-C) do not reach it.
    bool new_process_group = false;
    /// Signals. false (the default): what exec(2) keeps — signals this process
    /// ignores stay ignored and its signal mask is inherited (caught signals
    /// are reset to their default, as exec must). true: every signal at its
    /// default disposition and none blocked, whatever this process has set, as
    /// a freshly created Windows process starts.
    bool default_signals = false;
    /// A file that is executable but not in a format the kernel runs (ENOEXEC:
    /// a script without "#!") is run by /bin/sh with the file as its $0 and
    /// the remaining arguments after it, as execvp(3), env(1) and time(1) do.
    /// false: such a file fails with ENOEXEC.
    bool run_scripts_with_sh = true;
    /// The soft limit on open files (RLIMIT_NOFILE) to set in the child before
    /// exec; empty: inherit this process's. For a caller that raised its own
    /// soft limit (to its hard one) and gives the command the limit it was
    /// itself given. Above the hard limit: the exec fails with EINVAL.
    std::optional<std::uint64_t> open_files_soft_limit;
};

/// What is known once a spawned child has been waited for.
struct child_exit {
    /// How it ended. Empty when that is unknown: something else in this
    /// process reaped it before wait() could — the kernel itself when SIGCHLD
    /// is ignored (see the top of this header), or a SIGCHLD handler — and
    /// nobody read the status from its zombie first.
    std::optional<exit_status> status;
    /// The child's own times, as GetProcessTimes gives them: creation, exit,
    /// and the kernel and user time of all its threads, its children excluded.
    /// When it waited for no children, the split comes from wait rusage (1 µs,
    /// source wait_rusage); otherwise from its stat ticks (10 ms), the total
    /// being exact either way (its CPU clock read from the zombie, 1 ns).
    /// When times_error is set, see there: fewer of these are known.
    process_times times;
    /// Empty when `times` are as described above. Otherwise why the child's
    /// own values could not be read (its /proc entry could not be opened:
    /// child::handle_error(); or it could not be read at its exit), and
    /// `times` holds only what waitid(2) gives: kernel and user from the wait
    /// rusage (1 µs, source wait_rusage), which then INCLUDE the descendants
    /// it waited for (they cannot be told apart without /proc, so
    /// children_kernel and children_user are 0); the exit instant stamped when
    /// the pidfd woke; and the creation instant from the handle when it was
    /// opened, else bracketed by two CLOCK_REALTIME samples around clone3 (the
    /// earlier one, creation_resolution being the width of the bracket).
    std::error_code times_error;
    /// CPU time of the descendants it waited for (wait rusage minus its own).
    std::chrono::nanoseconds children_kernel{};
    std::chrono::nanoseconds children_user{};
    /// Peak resident set size in KiB of it and its waited-for descendants (ru_maxrss).
    long max_rss_kib = 0;
};

/// A child process started by proctimes. Destroying a child that was not waited
/// for does not block and leaves no zombie: the exit monitor reaps it when it exits.
class PROCTIMES_API child {
public:
    child() noexcept;
    child(child&&) noexcept;
    child& operator=(child&&) noexcept;
    child(const child&) = delete;
    child& operator=(const child&) = delete;
    ~child();

    /// Starts the command. Errors: invalid_argument (empty argv), the errno of a
    /// failed exec (ENOENT: no such program, EACCES: not executable, ENOEXEC:
    /// not a format the kernel or /bin/sh runs) or of clone3. Once the exec has
    /// succeeded, spawn succeeds: a failure to open the handle afterwards is
    /// handle_error(), not an error of spawn.
    static result<child> spawn(const spawn_options& options) noexcept;

    /// Waits for it to exit, reaps it, and returns its exit status and times.
    /// Calling wait() again returns the same values. An unknown status is an
    /// empty child_exit::status, not an error. Errors: the errno of poll(2) or
    /// waitid(2); no_such_process (or handle_error()) when something else
    /// reaped it and nothing about its end could be read — neither its status
    /// nor its times (SIGCHLD ignored and the exit monitor off, or the child
    /// gone before the monitor could sample it).
    result<child_exit> wait() noexcept;
    /// As wait(), but gives up after `timeout` (then: an empty optional, not reaped).
    result<std::optional<child_exit>> wait_for(std::chrono::nanoseconds timeout) noexcept;

    /// The handle: times() while it runs, and after it exits. Empty (every
    /// query answers invalid_handle) when handle_error() is set.
    [[nodiscard]] const process& handle() const noexcept { return process_; }
    /// Why handle() is empty although the command runs: the error of opening
    /// its /proc entry after the exec (process_table_unavailable, access_denied, EMFILE
    /// ...). Empty when the handle is open. The child is still waited for.
    [[nodiscard]] std::error_code handle_error() const noexcept { return handle_error_; }
    [[nodiscard]] pid_t id() const noexcept { return pid_; }
    /// A started child (with or without its handle), not yet moved from.
    [[nodiscard]] bool valid() const noexcept { return process_.valid() || pidfd_ >= 0; }

private:
    friend int native_pidfd(const child& c) noexcept;  // proctimes/linux.hpp
    friend struct detail::spawn_gate;
    PROCTIMES_LOCAL static result<child> spawn_impl(const spawn_options& options, detail::spawn_gate* gate) noexcept;
    PROCTIMES_LOCAL result<std::optional<child_exit>> wait_without_handle(std::chrono::nanoseconds timeout) noexcept;
    PROCTIMES_LOCAL void release() noexcept;

    process process_;
    pid_t pid_ = 0;
    int pidfd_ = -1;  // owned; only when process_ could not be opened
    std::error_code handle_error_;
    instant clone_before_{}, clone_after_{};  // CLOCK_REALTIME around clone3
    std::optional<child_exit> result_;
};

}  // namespace proctimes::inline v1
