// SPDX-License-Identifier: MIT
// tools/proctimes/top/view.hpp — how the full-screen view arranges a frame
// into display rows: flat, as a process tree (each row carrying the CPU of
// its subtree), grouped by program, user or cgroup, or the threads of one
// process; sorted by any column either way; narrowed by a filter; with a
// selection that follows its process from frame to frame and the scrolling
// that keeps it in view. Pure: no terminal, so the unit tests drive it with
// frames made by hand.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "top/frame.hpp"

namespace proctimes::cli::top {

enum class view_mode : std::uint8_t { flat, tree, grouped, threads };
enum class grouping : std::uint8_t { program, user, cgroup };

/// The columns, left to right, as drawn: PID USER S CPU% KERNEL USER THR AGE RES COMMAND.
enum class column : std::uint8_t { pid, user, state, cpu, kernel, user_time, threads, age, rss, command };
inline constexpr std::array<column, 10> all_columns{column::pid,    column::user,      column::state,   column::cpu,
                                                    column::kernel, column::user_time, column::threads, column::age,
                                                    column::rss,    column::command};
/// The heading of a column ("PID", "CPU%", ...).
std::string_view column_title(column c) noexcept;

/// Which row is selected, kept from frame to frame: a process by pid, a thread
/// by tid, a group by its key.
struct row_key {
    proctimes::pid_t pid = 0;
    std::optional<proctimes::pid_t> tid;
    std::string group;
    friend bool operator==(const row_key&, const row_key&) = default;
};

/// One line of the process list.
struct display_row {
    enum class kind : std::uint8_t { process, thread, group };
    kind what = kind::process;
    const top_row* row = nullptr;  ///< the frame's row (null for a group); valid while the frame lives
    row_key key;
    int depth = 0;            ///< in the tree: 0 for a root
    std::string branch;       ///< the tree's line drawing before the command ("├─ ", "`- ")
    std::string group_name;   ///< a group's program, user or cgroup
    std::size_t members = 0;  ///< a group's processes
    /// CPU in the interval: own plus children reaped in it (for a group, of its
    /// members; in the tree, of the whole subtree).
    std::chrono::nanoseconds cpu{};
    std::chrono::nanoseconds own_cpu{};         ///< the row's own, without its subtree
    std::chrono::nanoseconds kernel{}, user{};  ///< since creation (summed for a group)
    std::uint64_t threads = 0;
    std::uint64_t rss = 0;
    bool has_rss = false;
};

struct view_state {
    view_mode mode = view_mode::flat;
    grouping group = grouping::program;
    column sort = column::cpu;
    bool descending = true;
    std::string filter;              ///< case-insensitive substring of name, command, user or pid
    proctimes::pid_t thread_of = 0;  ///< the process whose threads view_mode::threads lists
    bool utf8 = true;                ///< line drawing in UTF-8, else ASCII
    bool all_threads = false;        ///< flat and tree: each process's threads listed under it
    std::optional<row_key> selected;
    std::size_t cursor = 0;  ///< index of the selection in the rows last arranged
    std::size_t top = 0;     ///< first row shown
};

/// The frame's rows as the state asks. The rows point into `frame`.
std::vector<display_row> arrange(const top_frame& frame, const view_state& state);

/// Whether the row holds `needle` (case-insensitive) in its name, command,
/// user or pid; an empty needle matches every row.
bool row_matches(const display_row& row, std::string_view needle);

/// Puts the cursor back after the rows changed, then scrolls so that it is
/// within `page` rows of `top`. With `keep_key` (a followed pid, or the view
/// changed under the user's selection) the cursor goes to the selected key
/// where it is listed; otherwise, as in htop, it stays on its line and
/// selects the row now there. A selection no longer listed gives way to the
/// row on its line (clamped).
void place_cursor(view_state& state, const std::vector<display_row>& rows, std::size_t page, bool keep_key);
/// Moves the cursor by `delta` rows (clamped), selects that row and scrolls.
void move_cursor(view_state& state, const std::vector<display_row>& rows, std::ptrdiff_t delta, std::size_t page);
/// Selects row `index` (clamped) and scrolls.
void select_row(view_state& state, const std::vector<display_row>& rows, std::size_t index, std::size_t page);
/// The first row after `from` (wrapping around, `from` itself last) that
/// matches `needle`; empty when none does.
std::optional<std::size_t> find_row(const std::vector<display_row>& rows, std::string_view needle, std::size_t from);

/// A process's CPU share of one CPU over the interval, in percent (100 = one CPU busy).
double cpu_percent(std::chrono::nanoseconds cpu, std::chrono::nanoseconds interval) noexcept;

}  // namespace proctimes::cli::top
