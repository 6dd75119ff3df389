// SPDX-License-Identifier: MIT
// The process tree of a command: every process it starts, at any depth, with
// its own final CPU, its instants, the programs it ran and how it ended.
#pragma once

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

namespace proctimes {

/// Where a tree's processes were seen.
enum class tree_source : std::uint8_t {
    /// ptrace(2) with only fork/vfork/clone/exec/exit events (no syscall stops):
    /// each exiting task is stopped before it is released, with its final times.
    ptrace,
    /// The eBPF exit stream plus fork/exec events, filtered to the command's
    /// descendants (root).
    bpf,
    /// Only the command and its wait rusage: no source could see descendants.
    none,
};

/// One program a process ran: the first is what it was forked as (its
/// parent's program), each exec adds one.
struct tree_program {
    std::string executable;         ///< absolute path of the executable, when known
    std::vector<std::string> argv;  ///< bounded (tree_options::max_argv_bytes); truncated says so
    bool argv_truncated = false;
    instant started{};  ///< fork for the first, exec for the others
};

/// One process of the tree.
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
    std::chrono::nanoseconds kernel{};
    std::chrono::nanoseconds user{};
    cpu_precision precision{};
    bool final_times = false;
    std::optional<exit_status> status;  ///< empty when not seen ending
    std::uint32_t threads = 1;          ///< threads it had over its life (the main one included)
    bool outlived_command = false;      ///< still running when the command's tree was recorded

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
    std::uint64_t unseen_processes = 0;
    /// The command's own CPU plus its waited-for descendants' (wait rusage):
    /// what the tree's own CPU sums must account for.
    std::chrono::nanoseconds rusage_cpu{};
    /// rusage_cpu minus the sum of every process's own CPU whose times are
    /// final (negative when the tree saw more, e.g. un-waited orphans).
    std::chrono::nanoseconds unaccounted_cpu{};
};

struct tree_options {
    /// Prefer this source; none picks the best available (bpf as root, else ptrace).
    tree_source prefer = tree_source::none;
    std::size_t max_argv_bytes = 4096;
};

/// The result of running a command under a tree recorder.
struct tree_run {
    child_exit command;  ///< as child::wait gives it
    process_tree tree;
};

/// Spawns `options` as child::spawn does, records every process it starts
/// until the command ends (orphans are kept as descendants with
/// PR_SET_CHILD_SUBREAPER), and waits for it. Blocks the calling thread.
/// Errors: those of child::spawn; a source that cannot start falls back to
/// the next (source_note says why), never hangs.
PROCTIMES_API result<tree_run> run_tree(const spawn_options& options, const tree_options& tree = {}) noexcept;

}  // namespace proctimes
