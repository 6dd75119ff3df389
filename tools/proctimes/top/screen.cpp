// SPDX-License-Identifier: MIT
// The full-screen view's entry point in a build without the view: it says so.
#include "top/screen.hpp"

#include <ostream>

#include "cli.hpp"

namespace proctimes::cli::top {

int run_screen(frame_feed&, const screen_options&, std::ostream& err) {
    err << "proctimes top: the full-screen view is not built; use -b for batch frames\n";
    return exit_failure;
}

}  // namespace proctimes::cli::top
