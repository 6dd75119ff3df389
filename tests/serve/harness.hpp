// SPDX-License-Identifier: MIT
// Helpers of the serve tests: start and stop programs, free ports, HTTP.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace serve_test {

/// A program run for the length of a test; SIGTERM and reaped on destruction.
class program {
public:
    program() = default;
    program(const std::vector<std::string>& argv, const std::string& log) {
        pid_ = ::fork();
        if (pid_ == 0) {
            const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd >= 0) {
                ::dup2(fd, 1);
                ::dup2(fd, 2);
            }
            std::vector<char*> a;
            a.reserve(argv.size() + 1);
            for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
            a.push_back(nullptr);
            ::execv(a[0], a.data());
            ::_exit(127);
        }
    }
    program(program&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
    program& operator=(program&& o) noexcept {
        stop();
        pid_ = o.pid_;
        o.pid_ = -1;
        return *this;
    }
    ~program() { stop(); }
    pid_t pid() const { return pid_; }
    /// SIGTERM, then SIGKILL after `grace`; returns the wait status (-1 if none).
    int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000)) {
        if (pid_ <= 0) return -1;
        ::kill(pid_, SIGTERM);
        return wait_for(grace, true);
    }
    /// Waits up to `limit` for the program to end on its own; -1 if it has not.
    int wait_for(std::chrono::milliseconds limit, bool kill_after = false) {
        if (pid_ <= 0) return -1;
        const auto end = std::chrono::steady_clock::now() + limit;
        int st = 0;
        for (;;) {
            const pid_t r = ::waitpid(pid_, &st, WNOHANG);
            if (r == pid_) {
                pid_ = -1;
                return st;
            }
            if (std::chrono::steady_clock::now() >= end) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (!kill_after) return -1;
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
        return -1;
    }
    bool running() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }

private:
    pid_t pid_ = -1;
};

/// A loopback port that was free a moment ago.
inline int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);  // a failure shows in getsockname's port 0
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
}

inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Waits for a file to have content; its text, or "" after `limit`.
inline std::string wait_for_file(const std::string& path, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        std::string t = read_text(path);
        if (!t.empty() && t.back() == '\n') return t;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return {};
}

inline std::string temp_dir(const char* tag) {
    std::string t = "/tmp/proctimes-serve-" + std::string(tag) + "-XXXXXX";
    if (!::mkdtemp(t.data())) return {};
    return t;
}

inline double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace serve_test
