// SPDX-License-Identifier: MIT
// system.hpp on Windows.
#include "system.hpp"

#include <iostream>
#include <new>

#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <cstdio>

namespace proctimes::cli::sys {

namespace {
// Whether `out` is the process's standard output and that is a console.
bool is_terminal(const std::ostream& out) noexcept {
    if (out.rdbuf() != std::cout.rdbuf()) return false;
    DWORD mode = 0;
    // A console, not a pipe or a file (a Wine or mintty pty is a pipe).
    return ::GetConsoleMode(::GetStdHandle(STD_OUTPUT_HANDLE), &mode) != 0;
}
}  // namespace

std::optional<terminal_size> terminal_of(const std::ostream& out) noexcept {
    if (!is_terminal(out)) return std::nullopt;
    terminal_size t;
    CONSOLE_SCREEN_BUFFER_INFO info{};
    if (::GetConsoleScreenBufferInfo(::GetStdHandle(STD_OUTPUT_HANDLE), &info)) {
        t.rows = info.srWindow.Bottom - info.srWindow.Top + 1;
        t.cols = info.srWindow.Right - info.srWindow.Left + 1;
    }
    return t;
}

bool civil_fields(std::time_t t, bool utc, std::tm& fields, long& utc_offset_seconds) noexcept {
    utc_offset_seconds = 0;
    if (utc) return ::gmtime_s(&fields, &t) == 0;
    if (::localtime_s(&fields, &t) != 0) return false;
    // The offset at that instant: the local fields read back as UTC, minus t.
    std::tm copy = fields;
    const std::time_t as_utc = ::_mkgmtime(&copy);
    if (as_utc == static_cast<std::time_t>(-1)) return false;
    utc_offset_seconds = static_cast<long>(as_utc - t);
    return true;
}

std::string signal_name(int sig) { return "signal " + std::to_string(sig); }

std::chrono::nanoseconds since_boot_now() noexcept {
    FILETIME ft{};
    ::GetSystemTimePreciseAsFileTime(&ft);
    const auto ticks = (static_cast<std::uint64_t>(ft.dwHighDateTime) << 32) | ft.dwLowDateTime;
    constexpr std::uint64_t unix_epoch = 116444736000000000ULL;  // 1970-01-01 in FILETIME units
    return std::chrono::nanoseconds{static_cast<std::int64_t>((ticks - unix_epoch) * 100)};
}

bool in_background_job() noexcept { return false; }

// Lines end in LF, as on Linux (docs/CLI.md): the C runtime's text mode
// would write every '\n' as CRLF.
std::optional<std::uint64_t> prepare_process() noexcept {
    (void)::_setmode(::_fileno(stdout), _O_BINARY);
    (void)::_setmode(::_fileno(stderr), _O_BINARY);
    return std::nullopt;
}

std::optional<user_id> user_by_name(const std::string&) { return std::nullopt; }
std::optional<std::string> user_name(user_id) { return std::nullopt; }

namespace {
// Handled, so that proctimes goes on waiting; the command, on the same
// console, gets the event and acts on it. A handler rather than
// SetConsoleCtrlHandler(NULL, TRUE), whose "ignore Ctrl+C" the command would
// inherit.
BOOL WINAPI swallow_interrupt(DWORD event) { return event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT ? TRUE : FALSE; }
}  // namespace

struct interrupt_shield::saved {
    bool changed = false;
};

interrupt_shield::interrupt_shield() noexcept : saved_(new (std::nothrow) saved) {
    if (saved_) saved_->changed = ::SetConsoleCtrlHandler(swallow_interrupt, TRUE) != 0;
}

interrupt_shield::~interrupt_shield() {
    if (saved_ && saved_->changed) ::SetConsoleCtrlHandler(swallow_interrupt, FALSE);
}

}  // namespace proctimes::cli::sys
