// SPDX-License-Identifier: MIT
// The process tree of a command: every process it starts, at any depth, with
// its own final CPU, its instants, the programs it ran and how it ended.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proctimes/export.h"
#include "proctimes/filetime.hpp"
#include "proctimes/result.hpp"
#include "proctimes/spawn.hpp"
#include "proctimes/times.hpp"
#include "proctimes/words.hpp"

namespace proctimes::inline v1 {

/// Where a tree's processes were seen.
enum class tree_source : std::uint8_t {
    /// ptrace(2) with only fork/vfork/clone/exec/exit events (no syscall stops):
    /// each exiting task is stopped before it is released, with its final times.
    ptrace,
    /// eBPF programs on fork, exec, exit and free, filtered in the kernel to
    /// the command's descendants (root, or CAP_BPF and CAP_PERFMON; kernel
    /// BTF): nothing is stopped or traced, instants and CPU are the kernel's.
    bpf,
    /// Only the command and its wait rusage: no source could see descendants.
    none,
};

/// One program a process ran: the first is what it was forked as (its
/// parent's program), each exec adds one. The command's first is its first
/// exec (with source none: its /proc entry read after spawn, else the argv
/// it was given).
/// executable: /proc/PID/exe at the exec (empty when unreadable); argv:
/// /proc/PID/cmdline at the exec, so a program that rewrites its arguments
/// later is not seen doing it.
struct tree_program {
    std::string executable;         ///< absolute path of the executable, when known
    std::vector<std::string> argv;  ///< bounded (tree_options::max_argv_bytes); truncated says so
    bool argv_truncated = false;
    instant started{};  ///< fork for the first (== created), exec for the others (stamped as `created` is)
};

/// One process of the tree.
///
/// Instants (source bpf): the kernel's own, to the ns: `created` is the
/// process's start_boottime, `exited` when its last thread ran do_exit(), a
/// program's `started` its exec, each on the CLOCK_REALTIME scale through the
/// boot anchor.
/// Instants (source ptrace): `created` is the CLOCK_REALTIME stamp taken by
/// the recorder when it first met the process (its parent's fork event or
/// its own first stop, whichever came first): no earlier than the real
/// creation, normally within microseconds of it, later by the recorder's
/// scheduling delay on a loaded machine. `exited` is stamped when the
/// recorder found it a zombie (no later than its real end, all its exit work
/// done). A process is met after its parent and, if its parent waited for
/// it, found ended before its parent ends: so [created, exited] nests in its
/// parent's for every child its parent waited for. For the command itself
/// both are child::wait's (tree_run::command.times: creation from the
/// kernel's start time, one 10 ms tick; exit observed).
struct tree_process {
    pid_t pid = 0;
    pid_t parent_pid = 0;  ///< the process that forked it (0 for the command itself)
    /// Index of the parent in process_tree::processes, or -1 for the command.
    std::int64_t parent_index = -1;
    std::vector<tree_program> programs;  ///< at least one
    instant created{};
    std::optional<instant> exited;  ///< empty when it outlived the recording
    /// Its own CPU, all threads, children excluded. Final values when
    /// `final_times`; else the last values read before it was left behind.
    /// bpf: read when it was freed (after its last switch; precision bpf_exit,
    /// 1 ns) or, if nobody reaped it, from its zombie. The kernel runs no free
    /// program for a few tasks (about 1 process in 700 here): such a process
    /// has the values of its exit, a lower bound without its exit work
    /// (precision bpf_task, final_times false), and unaccounted_cpu holds the
    /// rest.
    /// ptrace: read from its zombie (so final, every thread and its exit work
    /// included): total from its process CPU clock (1 ns), the kernel/user
    /// split by its stat ticks (10 ms): precision cpu_clock_and_stat. Not
    /// final (final_times false): read when its exit began (PTRACE_EVENT_EXIT)
    /// because its zombie could not be read, or when it outlived the command
    /// (read as it was let go). The command's are child::wait's.
    std::chrono::nanoseconds kernel{};
    std::chrono::nanoseconds user{};
    cpu_precision precision{};
    bool final_times = false;
    std::optional<exit_status> status;  ///< empty when not seen ending (outlived the command)
    std::uint32_t threads = 1;          ///< threads it had over its life (the main one included)
    /// Still running when the command ended: the recording stops when the
    /// command has ended and been waited for; what still runs then (a
    /// daemon that double-forked) is let go (detached) with exited and
    /// status empty and its CPU as read then (final_times false). A
    /// descendant that ended before the command did has its exit instead.
    bool outlived_command = false;

    [[nodiscard]] std::chrono::nanoseconds cpu() const noexcept { return kernel + user; }
};

/// What a recording saw, and what it could not.
struct process_tree {
    tree_source source = tree_source::none;
    /// Why a better source was not used (e.g. "ptrace: Operation not permitted
    /// (kernel.yama.ptrace_scope=3)"); empty when the preferred one worked.
    std::string source_note;
    /// The command first, then every descendant in creation order; a parent
    /// always comes before its children.
    std::vector<tree_process> processes;
    /// Descendants known to exist but not recorded (e.g. events lost), and
    /// their CPU where the kernel still accounted it: shown, never hidden.
    /// bpf: processes whose fork event was lost (then recorded from their
    /// next event on) or that could not be tracked, plus events lost to a
    /// full ring buffer.
    std::uint64_t unseen_processes = 0;
    /// The command's own CPU plus its waited-for descendants' (wait rusage):
    /// what the tree's own CPU sums must account for. Includes the wait
    /// rusage of orphans the recorder reaped itself as their subreaper
    /// (orphans_rusage_cpu), which the command would otherwise never see.
    std::chrono::nanoseconds rusage_cpu{};
    /// The part of rusage_cpu that came from orphans the recorder reaped.
    std::chrono::nanoseconds orphans_rusage_cpu{};
    /// rusage_cpu minus the sum of every process's own CPU whose times are
    /// final (negative when the tree saw more, e.g. un-waited orphans).
    std::chrono::nanoseconds unaccounted_cpu{};
};

struct tree_options {
    /// Prefer this source; none picks the best available (bpf as root, else
    /// ptrace). One that cannot be used falls back to the next (bpf, ptrace,
    /// none), with source_note saying why.
    tree_source prefer = tree_source::none;
    std::size_t max_argv_bytes = 4096;
};

/// The result of running a command under a tree recorder.
struct tree_run {
    child_exit command;  ///< as child::wait gives it
    process_tree tree;
};

/// The words of tree_source (proctimes/words.hpp): `run --tree-source` takes
/// ptrace and bpf.
inline constexpr auto tree_source_words = std::to_array<word_row<tree_source>>({
    {tree_source::ptrace, "ptrace", "ptrace's fork, exec and exit events"},
    {tree_source::bpf, "bpf", "eBPF programs on fork, exec, exit and free (root)"},
    {tree_source::none, "none", "only the command and its wait rusage"},
});
constexpr const auto& word_rows(tree_source) noexcept { return tree_source_words; }
static_assert(words_in_order(tree_source_words));

/// "ptrace", "bpf" or "none".
PROCTIMES_API std::string_view to_string(tree_source s) noexcept;

/// Spawns `options` as child::spawn does, records every process it starts
/// until the command ends (orphans are kept as descendants with
/// PR_SET_CHILD_SUBREAPER), and waits for it. Blocks the calling thread.
/// Errors: those of child::spawn; a source that cannot start falls back to
/// the next (source_note says why), never hangs. invalid_argument: also
/// max_argv_bytes 0.
///
/// Linux, ptrace: the recording runs on a thread of its own, which traces
/// every task of the tree (fork, exec and exit events only, no syscall
/// stops; signals and group-stops are passed on as untraced). While it
/// runs, this process is a child subreaper (restored after). Limits of
/// ptrace the command can see: a set-user-ID program it runs does not gain
/// its privileges when the recorder is not root, and a tree member cannot
/// be attached to by a debugger. A thread of the caller that waits for any
/// child (waitpid(-1)) during the recording can take the recorder's events.
/// Linux, bpf (tree_options::prefer bpf, or none as root): programs on
/// sched_process_fork/exec/exit/free, loaded for this recording, report the
/// tree's processes alone (docs/TREE.md); the command runs untraced. When
/// they cannot be loaded (not built, no BTF, not permitted, another pid
/// namespace), ptrace records and source_note says why.
PROCTIMES_API result<tree_run> run_tree(const spawn_options& options, const tree_options& tree = {}) noexcept;

}  // namespace proctimes::inline v1
