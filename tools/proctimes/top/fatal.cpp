// SPDX-License-Identifier: MIT
// The terminal given back on a fault (fatal.hpp). The handler calls only
// async-signal-safe functions (write, tcsetattr, sigaction, raise) on data
// prepared beforehand.
#include "top/fatal.hpp"

#include <curses.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstddef>
#include <cstring>

namespace proctimes::cli::top {

namespace {

constexpr std::array<int, 5> faults{SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// What the handler writes and restores, filled before it is installed.
std::array<char, 256> undo{};
std::size_t undo_length = 0;
termios saved_settings{};
bool have_settings = false;
std::array<struct sigaction, faults.size()> previous{};

void append(const char* capability) {
    // tigetstr() answers (char*)-1 for a name that is not a string capability, 0 when absent.
    char* value = tigetstr(const_cast<char*>(capability));
    if (value == nullptr || value == reinterpret_cast<char*>(-1)) return;  // NOLINT(performance-no-int-to-ptr)
    const std::size_t n = std::strlen(value);
    if (undo_length + n > undo.size()) return;
    std::memcpy(undo.data() + undo_length, value, n);
    undo_length += n;
}

extern "C" void on_fault(int sig) {
    if (undo_length > 0 && ::write(STDOUT_FILENO, undo.data(), undo_length) < 0) {
        // The terminal is gone: nothing more to give back there.
    }
    if (have_settings) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_settings);
    // SA_RESETHAND put the default action back: the signal ends the process as it would have.
    ::raise(sig);
}

}  // namespace

fatal_signals::fatal_signals() { have_settings = ::tcgetattr(STDIN_FILENO, &saved_settings) == 0; }

void fatal_signals::arm() {
    undo_length = 0;
    append("sgr0");   // attributes off
    append("cnorm");  // the cursor shown
    append("rmkx");   // the keypad's normal mode
    append("rmcup");  // the alternate screen left
    // xterm's mouse reporting off (ncurses turns it on through kmous/XM).
    static constexpr char mouse_off[] = "\x1b[?1000l\x1b[?1002l\x1b[?1006l";
    if (undo_length + sizeof mouse_off - 1 <= undo.size()) {
        std::memcpy(undo.data() + undo_length, mouse_off, sizeof mouse_off - 1);
        undo_length += sizeof mouse_off - 1;
    }
    struct sigaction sa {};
    sa.sa_handler = on_fault;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    for (std::size_t i = 0; i < faults.size(); ++i) ::sigaction(faults[i], &sa, &previous[i]);
    armed_ = true;
}

fatal_signals::~fatal_signals() {
    if (!armed_) return;
    for (std::size_t i = 0; i < faults.size(); ++i) ::sigaction(faults[i], &previous[i], nullptr);
    undo_length = 0;
}

}  // namespace proctimes::cli::top
