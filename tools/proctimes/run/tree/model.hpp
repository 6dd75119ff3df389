// SPDX-License-Identifier: MIT
// tools/proctimes/tree/model.hpp — `proctimes run --tree`: the recorded tree
// (proctimes::run_tree) and what every renderer derives from it. The
// renderers (table, JSON, CSV, Chrome trace, SVG icicle) are pure functions
// from a tree_report to a string, so tests call them on synthetic trees; only
// run_tree.cpp runs a command and writes files.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proctimes/spawn.hpp"
#include "proctimes/tree.hpp"

namespace proctimes::cli::tree {

/// What `run --tree` reports: the command as typed, how it ended, the tree
/// the library recorded, and the wall time measured around the recording.
struct tree_report {
    std::vector<std::string> command;
    child_exit exit;
    process_tree tree;
    std::chrono::nanoseconds wall{};  ///< steady clock, just before run_tree to just after it returned
};

/// What the renderers derive from a tree, index for index with
/// process_tree::processes. A parent_index that does not name an earlier
/// process (the header promises parents come first) is read as the command
/// (index 0), so every process is under the command and shown once.
struct tree_shape {
    std::vector<std::size_t> parent;                 ///< index of the parent; the command's is itself
    std::vector<std::vector<std::size_t>> children;  ///< in creation order
    std::vector<std::size_t> depth;                  ///< the command: 0
    std::vector<std::chrono::nanoseconds> own;       ///< own CPU, negative values as 0
    std::vector<std::chrono::nanoseconds> subtree;   ///< own CPU plus every descendant's
    std::vector<std::size_t> preorder;               ///< parents before children, siblings in creation order
    std::size_t max_depth = 0;
    std::chrono::nanoseconds total{};      ///< the sum of every process's own CPU (= subtree of the command)
    std::chrono::nanoseconds not_final{};  ///< the part of `total` whose values are not final
    instant origin{};                      ///< the earliest instant in the tree (creation of the command, usually)
    instant end{};                         ///< the latest instant in the tree: the end of processes not seen ending
};

tree_shape shape_of(const process_tree& t);

/// The program a process ran last (what it is named by); null when it has none.
const tree_program* last_program(const tree_process& p) noexcept;

/// The basename of the program's executable, else of its argv[0], else "?".
/// Raw bytes: each renderer escapes them its own way.
std::string program_name(const tree_program* p);

/// The process's wall time: exit − creation, or end − creation while not seen ending.
std::chrono::nanoseconds wall_of(const tree_process& p, instant end) noexcept;

/// How the process ended for people: "0", "SIGKILL", "SIGSEGV (core)", "-"
/// (not seen ending) or "?" (seen ending, status unknown).
std::string exit_text(const tree_process& p);

/// argv as a shell would need it typed, escaped for a table (ASCII only), cut
/// to at most `max_columns` columns with "..." at the end when longer (or when
/// the recorded argv was itself truncated).
std::string argv_for_table(const tree_program& p, std::size_t max_columns);

/// One group of the summary: the processes whose last program has this basename.
struct program_group {
    std::string name;
    std::size_t count = 0;
    std::chrono::nanoseconds cpu{};
    std::chrono::nanoseconds wall{};  ///< summed
    bool not_final = false;           ///< some member's times are not final
};
/// Groups by program_name, largest CPU first (then name).
std::vector<program_group> group_by_program(const process_tree& t, const tree_shape& s);

}  // namespace proctimes::cli::tree
