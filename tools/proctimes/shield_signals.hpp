// SPDX-License-Identifier: MIT
// tools/proctimes/shield_signals.hpp — SIGINT and SIGQUIT without effect on
// proctimes while `run` waits for its command (with or without --tree).
#pragma once

#include <csignal>
#include <cstddef>

namespace proctimes::cli {

extern "C" inline void shield_ignore_signal(int) {}

// SIGINT and SIGQUIT have no effect on proctimes for the lifetime of the
// object; the previous dispositions are restored after. Installed before the
// spawn, so that a signal sent as soon as the command starts is not lost on
// proctimes. A handler that does nothing, not SIG_IGN: exec resets handled
// signals to their default in the command, whereas an ignored signal would stay
// ignored there. A signal that proctimes itself inherited as ignored is left
// so, for the command to inherit too (as any program would).
class shield_terminal_signals {
public:
    shield_terminal_signals() {
        struct sigaction sa {};
        sa.sa_handler = shield_ignore_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        for (std::size_t i = 0; i < 2; ++i) {
            if (::sigaction(signals_[i], nullptr, &old_[i]) != 0 || old_[i].sa_handler == SIG_IGN) continue;
            changed_[i] = ::sigaction(signals_[i], &sa, nullptr) == 0;
        }
    }
    ~shield_terminal_signals() {
        for (std::size_t i = 0; i < 2; ++i)
            if (changed_[i]) ::sigaction(signals_[i], &old_[i], nullptr);
    }
    shield_terminal_signals(const shield_terminal_signals&) = delete;
    shield_terminal_signals& operator=(const shield_terminal_signals&) = delete;

private:
    static constexpr int signals_[2] = {SIGINT, SIGQUIT};
    struct sigaction old_[2]{};
    bool changed_[2] = {false, false};
};

}  // namespace proctimes::cli
