// SPDX-License-Identifier: MIT
// tools/proctimes/top/screen_state.hpp — what the full-screen view keeps
// between frames and key presses, shared by the drawing (draw.cpp), the keys
// (keys.cpp) and the loop (screen.cpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "top/cgroups.hpp"
#include "top/frame.hpp"
#include "top/view.hpp"

namespace proctimes::cli::top {

/// What the bottom line is reading from the keyboard.
enum class input_mode : std::uint8_t { none, search, filter, interval, signal, confirm_signal, jump };

struct screen_state {
    top_frame frame;
    bool have_frame = false;
    cgroup_names cgroups;           ///< read for the grouping by cgroup where the frame has none
    std::vector<display_row> rows;  ///< frame arranged by `view`
    view_state view;
    view_mode before_threads = view_mode::flat;  ///< where H goes back to
    std::chrono::nanoseconds interval{};
    bool paused = false;
    bool follow = false;  ///< the selection stays on its pid as rows move
    bool detail = false;  ///< the detail pane of the selected process
    bool help = false;
    bool quit = false;
    bool colour = false;
    bool allow_signals = true;
    /// A recording (top --replay): the header says REPLAY, and the keys ask
    /// the loop to move through it (step: -1 back, 1 forward; jump: the
    /// time typed after `j`).
    bool replay = false;
    int replay_step = 0;
    std::optional<std::string> replay_jump;
    input_mode input = input_mode::none;
    std::string typed;    ///< what the bottom line has read so far
    std::string search;   ///< the last search, for `n`
    std::string message;  ///< said once on the bottom line
    int signal_chosen = 0;
    proctimes::pid_t signal_pid = 0;
    std::string signal_name;  ///< the target's name, made safe
    // Where the last draw put things, for the mouse and the paging keys.
    int rows_y = 0;                                 ///< screen line of the first process row
    int header_y = -1;                              ///< screen line of the column headings (-1: not drawn)
    std::size_t page = 1;                           ///< process rows that fit
    std::vector<std::pair<int, column>> heading_x;  ///< where each heading starts
};

/// Arranges the frame again (after a new frame or a change of view) and places the cursor.
void rearrange(screen_state& s);

/// Draws everything on the current ncurses screen (stdscr), then refreshes.
void draw_screen(screen_state& s);

/// Acts on one key (a getch() value); KEY_MOUSE reads the mouse event.
void handle_key(screen_state& s, int key);

/// Colour pairs (0 where there is no colour).
enum pair_id : short { pair_title = 1, pair_bar, pair_heading, pair_ended, pair_label, pair_warn, pair_select };

}  // namespace proctimes::cli::top
