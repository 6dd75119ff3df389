// SPDX-License-Identifier: MIT
// system.hpp on Linux (POSIX).
#include "system.hpp"

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <iostream>
#include <new>
#include <vector>

#include <fcntl.h>
#include <pwd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

namespace proctimes::cli::sys {

namespace {
// Whether `out` is the process's standard output and that is a terminal.
bool is_terminal(const std::ostream& out) noexcept {
    return out.rdbuf() == std::cout.rdbuf() && ::isatty(STDOUT_FILENO) == 1;
}
}  // namespace

std::optional<terminal_size> terminal_of(const std::ostream& out) noexcept {
    if (!is_terminal(out)) return std::nullopt;
    terminal_size t;
    winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
        t.rows = ws.ws_row;
        t.cols = ws.ws_col;
    }
    return t;
}

bool civil_fields(std::time_t t, bool utc, std::tm& fields, long& utc_offset_seconds) noexcept {
    const bool ok = utc ? ::gmtime_r(&t, &fields) != nullptr : ::localtime_r(&t, &fields) != nullptr;
    utc_offset_seconds = ok && !utc ? fields.tm_gmtoff : 0;
    return ok;
}

std::string signal_name(int sig) {
    const char* d = ::sigabbrev_np(sig);
    return d ? "SIG" + std::string(d) : "signal " + std::to_string(sig);
}

std::chrono::nanoseconds since_boot_now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec};
}

bool in_background_job() noexcept {
    const int tty = ::open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (tty < 0) return false;
    const pid_t fg = ::tcgetpgrp(tty);
    ::close(tty);
    return fg > 0 && fg != ::getpgrp();
}

std::optional<std::uint64_t> prepare_process() noexcept {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;  // also clears SA_NOCLDWAIT
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGCHLD, &sa, nullptr);
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        const rlim_t was = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &rl) == 0) return static_cast<std::uint64_t>(was);
    }
    return std::nullopt;
}

namespace {
constexpr std::size_t max_buffer = std::size_t{1} << 20;
}  // namespace

std::optional<user_id> user_by_name(const std::string& name) {
    passwd pw{};
    passwd* res = nullptr;
    std::vector<char> buf(4096);
    int rc = 0;
    while ((rc = ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &res)) == ERANGE && buf.size() < max_buffer)
        buf.resize(buf.size() * 2);
    if (rc == 0 && res) return static_cast<user_id>(res->pw_uid);
    return std::nullopt;
}

std::optional<std::string> user_name(user_id uid) {
    passwd pw{};
    passwd* res = nullptr;
    std::vector<char> buf(4096);
    int rc = 0;
    while ((rc = ::getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &res)) == ERANGE &&
           buf.size() < max_buffer)
        buf.resize(buf.size() * 2);
    if (rc == 0 && res) return std::string(res->pw_name);
    return std::nullopt;
}

namespace {
extern "C" void shield_ignore_signal(int) {}
constexpr int shielded[2] = {SIGINT, SIGQUIT};
}  // namespace

struct interrupt_shield::saved {
    struct sigaction old[2]{};
    bool changed[2] = {false, false};
};

interrupt_shield::interrupt_shield() noexcept : saved_(new (std::nothrow) saved) {
    if (!saved_) return;
    struct sigaction sa {};
    sa.sa_handler = shield_ignore_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (std::size_t i = 0; i < 2; ++i) {
        if (::sigaction(shielded[i], nullptr, &saved_->old[i]) != 0 || saved_->old[i].sa_handler == SIG_IGN) continue;
        saved_->changed[i] = ::sigaction(shielded[i], &sa, nullptr) == 0;
    }
}

interrupt_shield::~interrupt_shield() {
    if (!saved_) return;
    for (std::size_t i = 0; i < 2; ++i)
        if (saved_->changed[i]) ::sigaction(shielded[i], &saved_->old[i], nullptr);
}

}  // namespace proctimes::cli::sys
