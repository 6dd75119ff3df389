// SPDX-License-Identifier: MIT
// tools/proctimes/watch/signals.hpp — SIGINT and SIGTERM as a readable pipe,
// for the poll(2) loops of `watch`.
#pragma once

#include <csignal>

namespace proctimes::cli {

/// SIGINT and SIGTERM write their number to a pipe for the lifetime of the
/// object; the previous dispositions are restored after. One at a time.
class stop_signals {
public:
    stop_signals();
    ~stop_signals();
    stop_signals(const stop_signals&) = delete;
    stop_signals& operator=(const stop_signals&) = delete;

    /// The pipe's read end, for poll(2); -1 when it could not be made.
    [[nodiscard]] int fd() const noexcept { return fds_[0]; }
    /// The signal received, or 0.
    [[nodiscard]] int received() const noexcept;

private:
    int fds_[2] = {-1, -1};
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
    bool ok_int_ = false, ok_term_ = false;
};

}  // namespace proctimes::cli
