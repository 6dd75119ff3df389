// SPDX-License-Identifier: MIT
// Helpers of the serve tests: start and stop programs, free ports, HTTP.
#pragma once

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace serve_test {

/// A program run for the length of a test; SIGTERM and reaped on destruction.
class program {
public:
    program() = default;
    /// `exe`, when given, is the file executed (argv[0] is then only the
    /// name the program is given): its base name is the process's comm from
    /// the exec on, while argv[0] is what exe rules match.
    program(const std::vector<std::string>& argv, const std::string& log, const std::string& exe = {}) {
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
            ::execv(exe.empty() ? a[0] : exe.c_str(), a.data());
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

/// A loopback port that was free a moment ago, from outside the kernel's
/// ephemeral range (ip_local_port_range), where bind(0) and every outgoing
/// connection take their ports: a port picked there can be taken by a
/// client socket of a test running beside before the program told to
/// listen on it binds it ("Address already in use"). Below the range (from
/// 10000), else above it, in an order seeded by the pid and the clock; 0
/// when none could be bound. Never the same port twice in one process.
inline int free_port() {
    static std::vector<int> given;
    int lo = 32768, hi = 60999;
    if (std::ifstream r("/proc/sys/net/ipv4/ip_local_port_range"); r) r >> lo >> hi;
    int first = 10000, last = lo - 1;
    if (last - first < 1000) first = hi + 1, last = 65535;
    if (last < first) return 0;
    auto seed = static_cast<std::uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ULL ^
                static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    for (int attempt = 0; attempt < 500; ++attempt) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        const int port = first + static_cast<int>((seed >> 33) % static_cast<std::uint64_t>(last - first + 1));
        if (std::find(given.begin(), given.end(), port) != given.end()) continue;
        const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0) return 0;
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(static_cast<std::uint16_t>(port));
        const bool bound = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
        ::close(s);
        if (bound) {
            given.push_back(port);
            return port;
        }
    }
    return 0;
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

/// At the end of a suite that wrote its programs' logs to DIR: removes DIR when
/// every test of the run passed, else keeps it and says where it is.
inline void remove_unless_failed(const std::string& dir, bool failed) {
    if (dir.empty()) return;
    if (!failed) {
        std::system(("rm -rf '" + dir + "'").c_str());
        return;
    }
    std::cout << "logs kept in " << dir << "\n";
}

/// The program the serve system tests run: PROCTIMES_SERVE_BIN when set (to
/// measure another build), else the one built with them.
inline std::string serve_bin(const char* built) {
    const char* e = std::getenv("PROCTIMES_SERVE_BIN");
    return e && *e ? e : built;
}

/// A TCP connection from loopback address `from` (any of 127.0.0.0/8, so that
/// a test can play several clients) to 127.0.0.1:port; -1 on failure.
inline int connect_from(const char* from, int port, bool block = true) {
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (block ? 0 : SOCK_NONBLOCK), 0);
    if (s < 0) return -1;
    sockaddr_in src{};
    src.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &src.sin_addr);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(s, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0 ||
        (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS)) {
        ::close(s);
        return -1;
    }
    return s;
}

struct http_answer {
    int status = 0;  ///< 0: no answer
    std::string head, body;
    std::string header(const std::string& name) const {
        std::istringstream in(head);
        for (std::string line; std::getline(in, line);) {
            if (line.size() <= name.size() || line[name.size()] != ':') continue;
            bool same = true;
            for (std::size_t i = 0; i < name.size() && same; ++i)
                same = std::tolower(static_cast<unsigned char>(line[i])) ==
                       std::tolower(static_cast<unsigned char>(name[i]));
            if (!same) continue;
            std::string v = line.substr(name.size() + 1);
            while (!v.empty() && (v.front() == ' ')) v.erase(0, 1);
            while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
            return v;
        }
        return {};
    }
};

/// Sends `request` on a new connection from `from` and reads the answer until
/// the server closes or Content-Length is complete, for at most `limit`.
inline http_answer http_exchange(int port, const std::string& request, std::chrono::milliseconds limit,
                                 const char* from = "127.0.0.1") {
    http_answer a;
    const auto end = std::chrono::steady_clock::now() + limit;
    const int s = connect_from(from, port);
    if (s < 0) return a;
    timeval tv{static_cast<time_t>(limit.count() / 1000), static_cast<suseconds_t>(limit.count() % 1000 * 1000)};
    ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    for (std::size_t off = 0; off < request.size();) {
        const ssize_t n = ::send(s, request.data() + off, request.size() - off, MSG_NOSIGNAL);
        if (n <= 0) break;
        off += static_cast<std::size_t>(n);
    }
    std::string got;
    std::size_t want = std::string::npos;
    char buf[65536];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{s, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
        const ssize_t n = ::recv(s, buf, sizeof buf, 0);
        if (n <= 0) break;
        got.append(buf, static_cast<std::size_t>(n));
        const auto he = got.find("\r\n\r\n");
        if (he != std::string::npos && want == std::string::npos) {
            a.head = got.substr(0, he + 2);
            const std::string cl = a.header("Content-Length");
            if (!cl.empty()) want = he + 4 + std::stoul(cl);
        }
        if (want != std::string::npos && got.size() >= want) break;
    }
    ::close(s);
    if (got.rfind("HTTP/1.", 0) == 0 && got.size() >= 12) a.status = std::atoi(got.c_str() + 9);
    const auto he = got.find("\r\n\r\n");
    if (he != std::string::npos) {
        a.head = got.substr(0, he + 2);
        a.body = got.substr(he + 4);
    }
    return a;
}

/// A GET of `path`, closing the connection after the answer.
inline http_answer http_get(int port, const std::string& path, std::chrono::milliseconds limit,
                            const char* from = "127.0.0.1", const std::string& extra_headers = "") {
    return http_exchange(
        port, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + extra_headers + "\r\n", limit,
        from);
}

/// A field of /proc/PID/status in KiB (VmRSS, VmHWM), or -1.
inline long status_kib(pid_t pid, const std::string& field) {
    std::istringstream in(read_text("/proc/" + std::to_string(pid) + "/status"));
    for (std::string line; std::getline(in, line);)
        if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
    return -1;
}

inline double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace serve_test
