// SPDX-License-Identifier: MIT
// run_tree's ptrace recorder (tree.hpp): the state of one recording, the
// /proc reads it makes (tree_read.cpp) and its event loop (tree_trace.cpp).
// Everything here runs on the one thread that spawned the command and traces
// it: ptrace(2) answers only the thread that attached.
#pragma once

#include <cstdint>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <csignal>

#include <sys/types.h>

#include "proctimes/spawn.hpp"
#include "proctimes/tree.hpp"

namespace proctimes::inline v1::parse {
struct stat_record;
}

namespace proctimes::inline v1::detail {

/// What /proc says about a task the recorder has just met.
struct task_kin {
    pid_t tgid = 0;  // its process
    pid_t ppid = 0;  // its process's parent
};
/// /proc/<tid>/status: the task's process and that process's parent.
std::error_code read_task_kin(pid_t tid, task_kin& out) noexcept;

/// A process's CPU now (final once it is a zombie): the total from its CPU
/// clock (1 ns), split by the utime:stime ticks of /proc/<pid>/stat. `ppid`
/// gets its parent (stat field 4), `stat` the whole stat record (read after
/// the clock: its start time tells whether the pid still named the same
/// process). Precision: cpu_clock_and_stat, or stat_ticks when the clock refuses.
std::error_code read_process_cpu(pid_t pid, tree_process& into, pid_t* ppid = nullptr,
                                 parse::stat_record* stat = nullptr) noexcept;

/// The program a process runs now: /proc/<pid>/exe and /proc/<pid>/cmdline,
/// the arguments cut at `max_argv_bytes` (argv_truncated then set).
tree_program read_program(pid_t pid, std::size_t max_argv_bytes, instant started);

/// The executable of a running process: /proc/<pid>/exe's link, less the
/// " (deleted)" the kernel appends once the file has been removed (kept
/// when it is the file's real name). Empty when it cannot be read.
std::string executable_path(pid_t pid);

/// Whether signal `sig`, delivered to task `tid` now, ends its process: its
/// action is the default one (neither caught nor ignored: /proc/<tid>/status
/// SigCgt, SigIgn) and that default is to terminate (with or without a core
/// dump); SIGKILL always. false when the task cannot be read.
bool signal_ends_process(pid_t tid, int sig) noexcept;

/// Whether a signal pending for task `tid` (its own or its process's, not
/// blocked) ends its process once delivered (signal_ends_process), as a
/// terminal's Ctrl-C does to a whole process group.
bool ending_signal_pending(pid_t tid) noexcept;

/// When the command made itself a tracee of this thread (PTRACE_TRACEME, as
/// a program that expects a debugger does) and sits in a trace-stop: lets
/// it go (PTRACE_DETACH), the exec's SIGTRAP dropped, any other signal
/// delivered, so that it runs on as untraced rather than stopped for ever.
/// Whether it did.
bool release_trace_stop(pid_t pid) noexcept;

/// child::wait on this thread, releasing the command from any trace-stop
/// it put itself in (release_trace_stop), looked for every 100 ms.
result<child_exit> wait_untraced(child& command) noexcept;

/// Why ptrace refused, in words, with what the system says about it
/// (kernel.yama.ptrace_scope, TracerPid of the recorder).
std::string ptrace_refusal_note(int err);

/// One recording by ptrace.
class tree_tracer {
public:
    tree_tracer(process_tree& tree, const tree_options& options) : tree_(tree), options_(options) {}

    /// Attaches to the command (held before its exec): PTRACE_SEIZE. false
    /// with errno when refused.
    bool seize(pid_t pid) noexcept;
    /// The event loop, until the command has ended and been waited for by
    /// `command` (child::wait); then every remaining tracee is detached,
    /// its process marked outlived_command. Throws only std::bad_alloc.
    void run(child& command, result<child_exit>& command_exit);

    /// Wait rusage of the orphans the recorder reaped as subreaper.
    [[nodiscard]] std::chrono::nanoseconds orphans_rusage() const noexcept { return orphans_rusage_; }

private:
    struct task {
        std::size_t proc = 0;  // index in tree_.processes
        bool started = false;  // its first stop was seen
    };
    std::size_t add_process(pid_t pid, std::int64_t parent, instant now);
    // A task seen for the first time: its process (a new one, or the one it
    // is a thread of) by /proc; forker_tgid 0 when met at its own first stop.
    std::size_t meet(pid_t tid, pid_t forker_tgid, instant now, bool clone_event = false);
    void on_stop(pid_t tid, int status);
    void on_event(pid_t tid, unsigned event, instant now);
    void on_exited(pid_t tid, const siginfo_t& si, bool peeked, child& command, result<child_exit>& command_exit);
    void resume(pid_t tid, int sig) noexcept;
    void detach_all();
    // What each recorded exit instant promises (observed, and how early the
    // real end can be), once the recording is over.
    void set_exit_precision();

    process_tree& tree_;
    const tree_options& options_;
    pid_t command_pid_ = 0;
    bool command_options_set_ = false;
    bool command_done_ = false;
    bool detaching_ = false;
    std::unordered_map<pid_t, task> tasks_;         // every traced task by tid
    std::unordered_map<pid_t, std::size_t> procs_;  // live processes by pid
    // Tasks whose first stop came before their creator's fork or clone
    // event, by tid (their process's index), until that event comes: their
    // whole life may come first (a vfork child that exec'd and ended while
    // its parent's event waited to be taken), and the event must then not
    // add them a second time.
    std::unordered_map<pid_t, std::size_t> early_;
    std::vector<std::uint32_t> live_threads_;  // per process index
    // Per process index: the last instant one of its tasks was seen stopped,
    // so not yet ended (its creation until then): its exit came later.
    std::vector<instant> last_alive_;
    std::chrono::nanoseconds orphans_rusage_{};
};

}  // namespace proctimes::inline v1::detail
