// SPDX-License-Identifier: MIT
// tools/proctimes/top/screen.hpp — the full-screen view of `proctimes top`
// (ncurses), drawn from any frame_feed.
#pragma once

#include <chrono>
#include <iosfwd>
#include <optional>

#include "top/frame.hpp"

namespace proctimes::cli::top {

struct screen_options {
    std::chrono::nanoseconds interval = std::chrono::seconds(2);
    std::optional<proctimes::pid_t> follow;  ///< -p: keep this pid selected and in view
    bool threads = false;                    ///< start with every thread listed
    bool allow_signals = true;               ///< `k` may signal a process (after a confirmation)
};

/// Runs the view until the user quits (q, F10) or a signal ends it; the
/// terminal is left as it was found on every way out. Refuses, with a clear
/// message on `err` and exit status 2, when stdin or stdout is not a terminal.
int run_screen(frame_feed& feed, const screen_options& opts, std::ostream& err);

}  // namespace proctimes::cli::top
