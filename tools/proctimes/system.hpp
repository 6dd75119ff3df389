// SPDX-License-Identifier: MIT
// tools/proctimes/system.hpp — the few things the command asks of the
// operating system itself rather than of the library: the terminal, the
// calendar, signal names, the console's interrupt key, a since-boot clock and
// user names. One implementation per system: system_posix.cpp (Linux) and
// system_windows.cpp; everything else in tools/ is the same on both.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "proctimes/times.hpp"

namespace proctimes::cli::sys {

/// The size of the terminal `out` writes to, in rows and columns (the visible
/// window of a Windows console); zeros when it is unknown, empty when `out`
/// is not a terminal.
struct terminal_size {
    int rows = 0;
    int cols = 0;
};
[[nodiscard]] std::optional<terminal_size> terminal_of(const std::ostream& out) noexcept;

/// The calendar fields of `t` in UTC or in local time, and the local time's
/// offset east of UTC at that instant in seconds (0 for UTC). false when the
/// system cannot convert it (outside its calendar's range).
[[nodiscard]] bool civil_fields(std::time_t t, bool utc, std::tm& fields, long& utc_offset_seconds) noexcept;

/// A signal's name ("SIGTERM"), or "signal N" when the system has none for
/// the number (Windows has no signals: an exit is a code).
[[nodiscard]] std::string signal_name(int sig);

/// Now on the scale of the library's since_boot values (snapshots, exit
/// records): CLOCK_BOOTTIME on Linux; on Windows, where the library counts
/// from the Unix epoch (docs/WINDOWS.md), the precise system time.
[[nodiscard]] std::chrono::nanoseconds since_boot_now() noexcept;

/// A user's id by name from the system's user database; empty when there is
/// no such user or the system has no uids (Windows).
[[nodiscard]] std::optional<user_id> user_by_name(const std::string& name);
/// A uid's user name from the user database; empty when it has none.
[[nodiscard]] std::optional<std::string> user_name(user_id uid);

/// Whether proctimes runs as a background job of an interactive shell (a
/// terminal whose foreground process group is not its own): then its
/// ancestors do not wait for it. Always false on Windows.
[[nodiscard]] bool in_background_job() noexcept;

/// At start: SIGCHLD back to its default disposition (a caller that ignored
/// it would have the kernel reap every child unaccounted), and the open-file
/// soft limit raised to the hard one. Returns the soft limit it replaced, if
/// it raised it. Nothing to do on Windows.
std::optional<std::uint64_t> prepare_process() noexcept;

/// For the lifetime of the object, the terminal's interrupt keys do not end
/// proctimes, only the command it runs (`run`): on Linux SIGINT and SIGQUIT
/// get a handler that does nothing (exec resets it in the command, where
/// SIG_IGN would be inherited; a signal proctimes inherited as ignored stays
/// so); on Windows the console's Ctrl+C and Ctrl+Break are ignored by
/// proctimes alone (SetConsoleCtrlHandler), while the command, which shares
/// the console, still gets them.
class interrupt_shield {
public:
    interrupt_shield() noexcept;
    ~interrupt_shield();
    interrupt_shield(const interrupt_shield&) = delete;
    interrupt_shield& operator=(const interrupt_shield&) = delete;

private:
    struct saved;
    std::unique_ptr<saved> saved_;
};

}  // namespace proctimes::cli::sys
