// SPDX-License-Identifier: MIT
// tools/proctimes/top/draw.hpp — drawing primitives on ncurses' stdscr, for
// the files that draw the view (draw.cpp, draw_panes.cpp). Every text drawn
// goes through put(), which takes text made safe (text.hpp) and clips it to
// the screen: nothing is written past the last column or line.
#pragma once

#include <string>
#include <string_view>

#include "top/screen_state.hpp"

namespace proctimes::cli::top {

/// Draws `safe` at (y, x), at most `width` columns and never past the screen's
/// edge; returns the columns used.
int put(int y, int x, std::string_view safe, int width, int attributes);
/// The attributes of a colour pair, or `mono` without colour.
int colour_attr(const screen_state& s, short pair, int mono);
/// The detail pane of the selected row, in lines [top, top + height).
void draw_detail(const screen_state& s, int top, int height);
/// The key help, over lines [top, top + height).
void draw_help(const screen_state& s, int top, int height);

}  // namespace proctimes::cli::top
