// proctimes/spawn.hpp — start a command and measure it, exactly.
//
//   auto c = proctimes::child::spawn({.argv = {"make", "-j2"}}).value();
//   proctimes::child_exit e = c.wait().value();
//   e.times.user, e.times.kernel   // the process's own CPU time (children excluded)
//   e.children_user                // CPU time of the processes it waited for
//   e.status.code                  // or e.status.signal
//
// The child is created with clone3(CLONE_PIDFD), so its handle refers to it
// from the first instant, whatever else reaps children in this process.
#pragma once
#pragma GCC visibility push(default)  // the interface: exported; the rest of libproctimes is hidden

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "proctimes/process.hpp"
#include "proctimes/result.hpp"

namespace proctimes {

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
};

/// What is known once a spawned child has been waited for.
struct child_exit {
    exit_status status;
    /// The child's own times, as GetProcessTimes gives them: creation, exit,
    /// and the kernel and user time of all its threads, its children excluded.
    /// When it waited for no children, the split comes from wait rusage (1 µs,
    /// source wait_rusage); otherwise from its stat ticks (10 ms), the total
    /// being exact either way (its CPU clock read from the zombie, 1 ns).
    process_times times;
    /// CPU time of the descendants it waited for (wait rusage minus its own).
    std::chrono::nanoseconds children_kernel{};
    std::chrono::nanoseconds children_user{};
    /// Peak resident set size in KiB of it and its waited-for descendants (ru_maxrss).
    long max_rss_kib = 0;
};

/// A child process started by proctimes. Destroying a child that was not waited
/// for does not block and leaves no zombie: the exit monitor reaps it when it exits.
class child {
public:
    child() noexcept;
    child(child&&) noexcept;
    child& operator=(child&&) noexcept;
    child(const child&) = delete;
    child& operator=(const child&) = delete;
    ~child();

    /// Starts the command. Errors: invalid_argument (empty argv), the errno of a
    /// failed exec (ENOENT: no such program, EACCES: not executable) or of clone3.
    static result<child> spawn(const spawn_options& options) noexcept;

    /// Waits for it to exit, reaps it, and returns its exit status and times.
    /// Calling wait() again returns the same values.
    result<child_exit> wait() noexcept;
    /// As wait(), but gives up after `timeout` (then: an empty optional, not reaped).
    result<std::optional<child_exit>> wait_for(std::chrono::nanoseconds timeout) noexcept;

    /// The handle: times() while it runs, and after it exits.
    [[nodiscard]] const process& handle() const noexcept { return process_; }
    [[nodiscard]] pid_t id() const noexcept { return process_.id(); }
    [[nodiscard]] bool valid() const noexcept { return process_.valid(); }

private:
    process process_;
    std::optional<child_exit> result_;
};

}  // namespace proctimes
#pragma GCC visibility pop
