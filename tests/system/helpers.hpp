// SPDX-License-Identifier: MIT
// Shared helpers for the system tests: children that wait for a signal from
// the test, busy loops measured by the CPU clocks, descriptor counts.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "burn.hpp"
#include "proctimes/clock.hpp"

namespace testing_helpers {

/// Runs for `wall` of wall-clock time without any syscall: steady_clock is
/// read through the vDSO. Reading a CPU clock would make the kernel bring the
/// thread's runtime up to date, which hides a source that lags behind it.
inline void spin_without_syscalls(std::chrono::nanoseconds wall) {
    const auto end = std::chrono::steady_clock::now() + wall;
    volatile unsigned long sink = 0;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 1000; ++i) sink = sink + static_cast<unsigned long>(i);
}

/// A forked child that runs `body` once the test writes to its pipe, then
/// exits with the body's return value. The child is killed and reaped by the
/// destructor if the test did not reap it.
class forked {
public:
    explicit forked(const std::function<int()>& body) {
        int p[2];
        if (::pipe2(p, O_CLOEXEC) != 0) std::abort();
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(p[1]);
            char c;
            if (::read(p[0], &c, 1) != 1) ::_exit(99);
            ::_exit(body());
        }
        ::close(p[0]);
        go_ = p[1];
    }
    forked(const forked&) = delete;
    forked& operator=(const forked&) = delete;
    ~forked() {
        if (go_ >= 0) ::close(go_);
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    pid_t pid() const { return pid_; }
    void start() {
        char c = 'g';
        if (::write(go_, &c, 1) != 1) std::abort();
        ::close(go_);
        go_ = -1;
    }
    /// Waits until it is a zombie, without reaping it.
    void wait_exited_unreaped() {
        siginfo_t si{};
        ::waitid(P_PID, static_cast<id_t>(pid_), &si, WEXITED | WNOWAIT);
    }
    int reap() {
        int status = 0;
        ::waitpid(pid_, &status, 0);
        reaped_ = true;
        return status;
    }

private:
    pid_t pid_ = -1;
    int go_ = -1;
    bool reaped_ = false;
};

/// Whether every thread of `pid` is sleeping ('S' in its stat), and false if
/// the process cannot be read.
inline bool all_threads_sleep(pid_t pid) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return false;
    bool sleeping = true;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        std::FILE* f = std::fopen((dir + "/" + e->d_name + "/stat").c_str(), "re");
        if (f == nullptr) continue;  // a thread that just ended
        char line[512] = {};
        const bool got = std::fgets(line, sizeof line, f) != nullptr;
        std::fclose(f);
        const char* close = got ? std::strrchr(line, ')') : nullptr;
        if (close == nullptr || close[1] != ' ' || close[2] != 'S') sleeping = false;
    }
    ::closedir(d);
    return sleeping;
}

/// Waits (up to 5 s) until the process `pid` is idle: every thread sleeps and
/// its CPU clock stands still across a 10 ms pause. A child that has just told
/// the test it is about to block may not have blocked yet; tests that need a
/// target that does not run wait here first. Returns whether it became idle.
inline bool wait_until_idle(pid_t pid) {
    clockid_t clock{};
    if (::clock_getcpuclockid(pid, &clock) != 0) return false;
    const auto cpu_now = [clock] {
        timespec ts{};
        ::clock_gettime(clock, &ts);
        return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
    };
    for (int attempt = 0; attempt < 500; ++attempt) {
        const auto before = cpu_now();
        ::usleep(10'000);
        if (all_threads_sleep(pid) && cpu_now() == before) return true;
    }
    return false;
}

/// Read syscalls made by this process so far (/proc/self/io syscr), or -1.
inline long long read_syscalls() {
    std::FILE* f = std::fopen("/proc/self/io", "re");
    if (!f) return -1;
    long long v = -1;
    char line[128];
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "syscr: %lld", &v) == 1) break;
    std::fclose(f);
    return v;
}

inline int open_fd_count() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (::readdir(d)) ++n;
        ::closedir(d);
    }
    return n;
}

// How many process descriptors (pidfds) this process holds.
inline int open_pidfd_count() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (const dirent* e = ::readdir(d)) {
            char link[64];
            const std::string path = std::string("/proc/self/fd/") + e->d_name;
            const ssize_t len = ::readlink(path.c_str(), link, sizeof link - 1);
            if (len <= 0) continue;
            link[len] = 0;
            if (std::strcmp(link, "anon_inode:[pidfd]") == 0) ++n;
        }
        ::closedir(d);
    }
    return n;
}

// The descriptor count once no process descriptor is open, for a test that
// holds no handle: the exit monitor keeps an ended task's descriptors until
// it is done with it, which can be its eBPF record's whole wait (seconds)
// after the handle closed. Waits at most `limit`; the count then is returned
// as it is.
inline int settled_fd_count(std::chrono::milliseconds limit = std::chrono::seconds{30}) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (open_pidfd_count() != 0 && std::chrono::steady_clock::now() < deadline) {
        const timespec pause{0, 5'000'000};
        ::nanosleep(&pause, nullptr);
    }
    return open_fd_count();
}

// The calling process's thread count (field 20 of /proc/self/stat), with
// async-signal-safe calls only (it runs in forked children); -1 if unknown.
inline int threads_now() {
    char buf[1024];
    const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    const char* p = nullptr;
    for (const char* q = buf; *q; ++q)
        if (*q == ')') p = q;
    if (!p) return -1;
    int field = 2, value = 0;  // p is the end of field 2 (comm)
    for (++p; *p && field < 20; ++p)
        if (*p == ' ') ++field;
    for (; *p >= '0' && *p <= '9'; ++p) value = value * 10 + (*p - '0');
    return value;
}

}  // namespace testing_helpers
