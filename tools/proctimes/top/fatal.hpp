// SPDX-License-Identifier: MIT
// tools/proctimes/top/fatal.hpp — the terminal given back even when the
// process dies of a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) while the
// full-screen view holds it: the handler writes the terminal's own sequences
// that leave the alternate screen, show the cursor and reset attributes,
// restores the terminal's settings as they were found, and dies of the signal
// as it would have.
#pragma once

namespace proctimes::cli::top {

class fatal_signals {
public:
    /// Takes the terminal's settings now; call before ncurses changes them.
    fatal_signals();
    ~fatal_signals();
    fatal_signals(const fatal_signals&) = delete;
    fatal_signals& operator=(const fatal_signals&) = delete;
    /// Reads the sequences that undo the view from the terminal's description
    /// (call once ncurses has it) and installs the handlers.
    void arm();

private:
    bool armed_ = false;
};

}  // namespace proctimes::cli::top
