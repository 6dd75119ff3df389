// SPDX-License-Identifier: MIT
#include "watch/signals.hpp"

#include <atomic>
#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace proctimes::cli {

namespace {

std::atomic<int> g_signal_pipe{-1};

extern "C" void on_stop_signal(int sig) {
    const int saved = errno;
    const int fd = g_signal_pipe.load();
    if (fd >= 0) {
        const unsigned char b = static_cast<unsigned char>(sig);
        [[maybe_unused]] auto n = ::write(fd, &b, 1);
    }
    errno = saved;
}

}  // namespace

stop_signals::stop_signals() {
    if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
        fds_[0] = fds_[1] = -1;
        return;
    }
    g_signal_pipe.store(fds_[1]);
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ok_int_ = ::sigaction(SIGINT, &sa, &old_int_) == 0;
    ok_term_ = ::sigaction(SIGTERM, &sa, &old_term_) == 0;
}

stop_signals::~stop_signals() {
    if (ok_int_) ::sigaction(SIGINT, &old_int_, nullptr);
    if (ok_term_) ::sigaction(SIGTERM, &old_term_, nullptr);
    g_signal_pipe.store(-1);
    if (fds_[0] >= 0) ::close(fds_[0]);
    if (fds_[1] >= 0) ::close(fds_[1]);
}

int stop_signals::received() const noexcept {
    unsigned char b = 0;
    return ::read(fds_[0], &b, 1) == 1 ? b : 0;
}

}  // namespace proctimes::cli
