// SPDX-License-Identifier: MIT
// Hostile clients against `proctimes serve`: 1,000 concurrent connections, a
// 1 MiB header, a client sending one byte a second, malformed request lines.
// The exporter must keep answering a well-behaved scraper, keep its descriptors
// and memory bounded, give them back, and never crash.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <atomic>

#include "harness.hpp"

using namespace serve_test;
using namespace std::chrono_literals;

namespace {

int count_fds(pid_t pid) {
    DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
    if (!d) return -1;
    int n = 0;
    while (dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    return n;
}

long rss_kib(pid_t pid) {
    std::istringstream in(read_text("/proc/" + std::to_string(pid) + "/status"));
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

int connect_to(int port, bool block = true) {
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (block ? 0 : SOCK_NONBLOCK), 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
        ::close(s);
        return -1;
    }
    return s;
}

// Sends `request` and returns the start of the answer ("" when the server
// closed without one), waiting at most `limit`.
std::string exchange(int port, const std::string& request, std::chrono::seconds limit = 10s) {
    const int s = connect_to(port);
    if (s < 0) return "connect failed";
    timeval tv{static_cast<time_t>(limit.count()), 0};
    ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    std::size_t off = 0;
    while (off < request.size()) {
        const ssize_t n = ::send(s, request.data() + off, request.size() - off, MSG_NOSIGNAL);
        if (n <= 0) break;  // the server may close on an oversized request: that is an answer
        off += static_cast<std::size_t>(n);
    }
    char buf[64] = {};
    const ssize_t n = ::recv(s, buf, sizeof buf - 1, 0);
    ::close(s);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

int status_of(const std::string& answer) {
    if (answer.rfind("HTTP/1.", 0) != 0 || answer.size() < 12) return 0;
    return std::stoi(answer.substr(9, 3));
}

}  // namespace

TEST(ServeHostileClients, KeepsAnsweringWithBoundedResources) {
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 1200)
        GTEST_SKIP() << "needs 1,200 descriptors for 1,000 connections; the hard limit is " << rl.rlim_cur;

    const std::string dir = temp_dir("hostile");
    program serve({serve_bin(PROCTIMES_BIN), "serve", "--listen", "127.0.0.1:0", "--port-file", dir + "/port",
                   "--connection-deadline", "5", "--no-exit-records"},
                  dir + "/serve.log");
    // Port 0: the kernel picks a free one (a port free a moment ago can be
    // taken by another test before serve binds it).
    const std::string port_text = wait_for_file(dir + "/port", 20s);
    ASSERT_FALSE(port_text.empty()) << "serve did not start: " << read_text(dir + "/serve.log");
    const int port = std::stoi(port_text);
    // The scraper comes from an address of its own, as Prometheus would: the
    // flood below comes from 127.0.0.1 and meets its per-address limit.
    const auto scrape = [port] { return http_get(port, "/metrics", 20s, "127.0.0.2"); };
    int first = 0;
    for (int i = 0; i < 50 && first == 0; ++i) {
        first = scrape().status;
        if (first == 0) std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(first, 200) << "serve did not start: " << read_text(dir + "/serve.log");
    const int fds0 = count_fds(serve.pid());
    const long rss0 = rss_kib(serve.pid());

    // Malformed request lines and an oversized header: an error status or a
    // closed connection, never a 200, never a crash.
    const std::string malformed[] = {
        "GARBAGE\r\n\r\n",
        "GET\r\n\r\n",
        "GET /metrics HTTP/9.9\r\n\r\n",
        std::string("\x00\x01\x02\xff\xfe\r\n\r\n", 8),
        "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(1 << 20, 'h') + "\r\n\r\n",
    };
    for (const auto& m : malformed) {
        const int st = status_of(exchange(port, m));
        // 505 (HTTP Version Not Supported) is the answer to HTTP/9.9.
        const bool version = m.find("HTTP/9.9") != std::string::npos;
        EXPECT_TRUE(st == 0 || (st >= 400 && st < 500) || (version && st == 505))
            << "status " << st << " for a request of " << m.size() << " bytes starting " << m.substr(0, 20);
    }

    // A GET's body is never read, so nonsense lengths on one are answered or
    // refused, but never make the exporter wait for or allocate that much.
    for (const char* m : {"GET /metrics HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
                          "GET /metrics HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n"}) {
        const int st = status_of(exchange(port, m));
        EXPECT_TRUE(st == 0 || st == 200 || (st >= 400 && st < 500)) << st;
    }

    // A client that sends one byte a second, for the whole test.
    std::atomic<bool> stop{false};
    std::atomic<int> slow_bytes{0};
    std::thread slow([&] {
        const int s = connect_to(port);
        const std::string req = "GET /metrics HTTP/1.1\r\nHost: slow\r\nX-Slow: " + std::string(100, 'z');
        for (char c : req) {
            if (stop.load() || ::send(s, &c, 1, MSG_NOSIGNAL) != 1) break;
            ++slow_bytes;
            std::this_thread::sleep_for(1s);
        }
        ::close(s);
    });
    struct joiner {
        std::atomic<bool>& stop;
        std::thread& t;
        ~joiner() {
            stop = true;
            if (t.joinable()) t.join();
        }
    } join_slow{stop, slow};

    // 1,000 concurrent connections: half send an unfinished request, half nothing.
    std::vector<int> flood;
    for (int i = 0; i < 1000; ++i) {
        const int s = connect_to(port, false);
        if (s < 0) continue;
        flood.push_back(s);
    }
    std::this_thread::sleep_for(500ms);
    for (std::size_t i = 0; i < flood.size(); i += 2) (void)::send(flood[i], "GET /metr", 9, MSG_NOSIGNAL);
    std::cout << flood.size() << " flood connections open\n";
    EXPECT_GE(flood.size(), 900u);

    // The well-behaved scraper is still answered, again and again.
    int peak_fds = 0;
    for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const http_answer r = scrape();
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ASSERT_EQ(r.status, 200) << "scrape " << i << " failed under the flood";
        EXPECT_NE(r.body.find("proctimes_group_cpu_seconds_total"), std::string::npos);
        std::cout << "scrape " << i << " under the flood: " << took << " s\n";
        peak_fds = std::max(peak_fds, count_fds(serve.pid()));
    }
    const long rss_peak = rss_kib(serve.pid());
    // Descriptors: never more than one per connection (1,000 + the slow one +
    // the scraper + its own), and memory: no more than a few KiB per connection.
    EXPECT_LE(peak_fds, fds0 + 1010) << "descriptors at the peak";
    EXPECT_LT(rss_peak - rss0, 64 * 1024) << "RSS grew from " << rss0 << " to " << rss_peak << " KiB";

    // The deadline (5 s) cuts the flood and the slow client even while they
    // stay connected: the exporter gives its descriptors back.
    std::this_thread::sleep_for(8s);
    const int fds_after = count_fds(serve.pid());
    std::cout << "descriptors: " << fds0 << " before, " << peak_fds << " at the peak, " << fds_after
              << " 8 s later with the flood still connected; the slow client sent " << slow_bytes << " bytes\n";
    EXPECT_LE(fds_after, fds0 + 10);
    for (int s : flood) ::close(s);

    EXPECT_EQ(scrape().status, 200);
    ASSERT_TRUE(serve.running()) << "the exporter died";
    const int st = serve.stop();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "wait status " << st;
    std::system(("rm -rf '" + dir + "'").c_str());
}

// A connection flood from the scraper's own address, as users meet it on a
// loopback listener: 2,000 connections opened over about 4 s, half sending
// the start of a request line and stopping, half nothing, all kept open by
// the flooder. Scrapes every 250 ms from the same address must keep being
// answered (the oldest idle or partial connection is shed for a new one),
// and once the flood stops, the connections still held are cut at the
// inactivity deadline (2 s here): the descriptors come back near where they
// were.
TEST(ServeHostileClients, ScrapesAreAnsweredDuringAConnectionFloodFromTheirAddress) {
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2300)
        GTEST_SKIP() << "needs 2,300 descriptors for 2,000 connections; the hard limit is " << rl.rlim_cur;

    const std::string dir = temp_dir("flood");
    program serve({serve_bin(PROCTIMES_BIN), "serve", "--listen", "127.0.0.1:0", "--port-file", dir + "/port",
                   "--connection-deadline", "2", "--no-exit-records"},
                  dir + "/serve.log");
    // Port 0: the kernel picks a free one (a port free a moment ago can be
    // taken by another test before serve binds it).
    const std::string port_text = wait_for_file(dir + "/port", 20s);
    ASSERT_FALSE(port_text.empty()) << "serve did not start: " << read_text(dir + "/serve.log");
    const int port = std::stoi(port_text);
    const auto scrape = [port] { return http_get(port, "/metrics", 3s, "127.0.0.1"); };
    int first = 0;
    for (int i = 0; i < 50 && first == 0; ++i) {
        first = scrape().status;
        if (first == 0) std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(first, 200) << "serve did not start: " << read_text(dir + "/serve.log");
    std::this_thread::sleep_for(200ms);
    const int fds0 = count_fds(serve.pid());

    // The flood: 2,000 connections in 40 rounds of 50, 100 ms apart.
    std::vector<int> flood;
    flood.reserve(2000);
    std::atomic<bool> flooding{true};
    std::thread flooder([&] {
        for (int round = 0; round < 40; ++round) {
            for (int i = 0; i < 50; ++i) {
                const int s = connect_to(port, false);
                if (s < 0) continue;
                if (i % 2 == 0) {
                    pollfd p{s, POLLOUT, 0};
                    if (::poll(&p, 1, 100) == 1) (void)::send(s, "GET /metr", 9, MSG_NOSIGNAL);
                }
                flood.push_back(s);
            }
            std::this_thread::sleep_for(100ms);
        }
        flooding = false;
    });
    struct closer {
        std::thread& t;
        std::vector<int>& fds;
        ~closer() {
            if (t.joinable()) t.join();
            for (int s : fds) ::close(s);
        }
    } close_flood{flooder, flood};

    int scrapes = 0, answered = 0, peak_fds = 0;
    double slowest = 0;
    while (flooding && scrapes < 40) {
        const auto t0 = std::chrono::steady_clock::now();
        const http_answer r = scrape();
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++scrapes;
        if (r.status == 200 && r.body.find("proctimes_group_cpu_seconds_total") != std::string::npos) ++answered;
        slowest = std::max(slowest, took);
        peak_fds = std::max(peak_fds, count_fds(serve.pid()));
        std::this_thread::sleep_for(250ms);
    }
    flooder.join();
    const auto flood_end = std::chrono::steady_clock::now();
    std::cout << "[ measured ] " << flood.size() << " flood connections; " << answered << " of " << scrapes
              << " scrapes answered during it, the slowest in " << slowest << " s; descriptors " << fds0 << " before, "
              << peak_fds << " at the peak\n";
    EXPECT_GE(flood.size(), 1900u);
    EXPECT_GE(scrapes, 8);
    EXPECT_EQ(answered, scrapes) << "scrapes during the flood";
    // Bounded: the per-address limit (64) and what is being closed.
    EXPECT_LE(peak_fds, fds0 + 64 + 64 + 10);

    // The flooder keeps its connections open; the deadline (2 s) cuts those
    // the exporter still holds. Polled up to 2 s past it.
    int fds_after = count_fds(serve.pid());
    while (fds_after > fds0 + 5 && std::chrono::steady_clock::now() < flood_end + 4s) {
        std::this_thread::sleep_for(100ms);
        fds_after = count_fds(serve.pid());
    }
    const double after = std::chrono::duration<double>(std::chrono::steady_clock::now() - flood_end).count();
    std::cout << "[ measured ] descriptors " << fds_after << " " << after << " s after the flood\n";
    EXPECT_LE(fds_after, fds0 + 5) << after << " s after the flood, with a 2 s deadline";
    EXPECT_EQ(scrape().status, 200);
    ASSERT_TRUE(serve.running()) << "the exporter died";
    const int st = serve.stop();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "wait status " << st;
    std::system(("rm -rf '" + dir + "'").c_str());
}

// Slow heads from the scraper's own address: 200 connections that send a
// request line and one header and stop, kept open. A scrape's new connection
// sheds the oldest of them (the new connection itself is shed only when no
// other can be), so it is answered.
TEST(ServeHostileClients, ScrapesAreAnsweredPastSlowHeadsFromTheirAddress) {
    const std::string dir = temp_dir("slowheads");
    program serve({serve_bin(PROCTIMES_BIN), "serve", "--listen", "127.0.0.1:0", "--port-file", dir + "/port",
                   "--no-exit-records"},
                  dir + "/serve.log");
    // Port 0: the kernel picks a free one (a port free a moment ago can be
    // taken by another test before serve binds it).
    const std::string port_text = wait_for_file(dir + "/port", 20s);
    ASSERT_FALSE(port_text.empty()) << "serve did not start: " << read_text(dir + "/serve.log");
    const int port = std::stoi(port_text);
    const auto scrape = [port] { return http_get(port, "/metrics", 3s, "127.0.0.1"); };
    int first = 0;
    for (int i = 0; i < 50 && first == 0; ++i) {
        first = scrape().status;
        if (first == 0) std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(first, 200) << "serve did not start: " << read_text(dir + "/serve.log");
    const int fds0 = count_fds(serve.pid());

    std::vector<int> slow;
    for (int i = 0; i < 200; ++i) {
        const int s = connect_to(port);
        if (s < 0) continue;
        (void)::send(s, "GET /metrics HTTP/1.1\r\nHost: slow\r\n", 36, MSG_NOSIGNAL);
        slow.push_back(s);
        if (i % 50 == 49) std::this_thread::sleep_for(100ms);
    }
    std::this_thread::sleep_for(300ms);
    int answered = 0;
    for (int i = 0; i < 5; ++i) {
        answered += scrape().status == 200;
        std::this_thread::sleep_for(200ms);
    }
    const int fds = count_fds(serve.pid());
    for (int s : slow) ::close(s);
    std::cout << "[ measured ] " << answered << " of 5 scrapes answered past " << slow.size()
              << " slow heads; descriptors " << fds0 << " before, " << fds << " with them open\n";
    EXPECT_EQ(slow.size(), 200u);
    EXPECT_EQ(answered, 5);
    EXPECT_LE(fds, fds0 + 64 + 10);
    const int st = serve.stop();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "wait status " << st;
    std::system(("rm -rf '" + dir + "'").c_str());
}

namespace {

// Sends a request for the index page on `s` (kept open) and reads the whole
// answer; its status, 0 when the server closed or sent nothing in 5 s.
int index_on(int s) {
    const std::string req = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
    if (::send(s, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) return 0;
    std::string got;
    const auto end = std::chrono::steady_clock::now() + 5s;
    std::size_t need = std::string::npos;
    while (got.size() < need && std::chrono::steady_clock::now() < end) {
        pollfd p{s, POLLIN, 0};
        if (::poll(&p, 1, 100) != 1) continue;
        char buf[4096];
        const ssize_t n = ::recv(s, buf, sizeof buf, 0);
        if (n <= 0) return 0;
        got.append(buf, static_cast<std::size_t>(n));
        const auto head = got.find("\r\n\r\n");
        if (need == std::string::npos && head != std::string::npos) {
            const auto cl = got.find("Content-Length: ");
            if (cl == std::string::npos || cl > head) return 0;
            need = head + 4 + std::stoul(got.substr(cl + 16));
        }
    }
    return got.size() >= need ? status_of(got) : 0;
}

// Whether the server closed `s` within `limit` (end of stream or reset).
bool closed_within(int s, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    do {
        pollfd p{s, POLLIN, 0};
        if (::poll(&p, 1, 50) == 1) {
            char c;
            const ssize_t n = ::recv(s, &c, 1, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
        }
    } while (std::chrono::steady_clock::now() < end);
    return false;
}

}  // namespace

// A scraper keeps its connection between scrapes (Prometheus keeps idle ones
// 5 minutes): once answered, a connection waits --idle-deadline for its next
// request, so that each scrape does not open a connection (a TLS handshake
// with --web-config); one that has not sent a whole request head is still
// closed at --connection-deadline.
TEST(ServeHostileClients, AnAnsweredConnectionWaitsTheIdleDeadlineAPartialOneTheShortOne) {
    const std::string dir = temp_dir("idle");
    program serve({serve_bin(PROCTIMES_BIN), "serve", "--listen", "127.0.0.1:0", "--port-file", dir + "/port",
                   "--connection-deadline", "1", "--idle-deadline", "8", "--no-exit-records"},
                  dir + "/serve.log");
    const std::string port_text = wait_for_file(dir + "/port", 20s);
    ASSERT_FALSE(port_text.empty()) << "serve did not start: " << read_text(dir + "/serve.log");
    const int port = std::stoi(port_text);
    const int kept = connect_to(port), partial = connect_to(port), left = connect_to(port);
    ASSERT_TRUE(kept >= 0 && partial >= 0 && left >= 0);
    struct closer {
        std::vector<int> fds;
        ~closer() {
            for (int s : fds) ::close(s);
        }
    } close_all{{kept, partial, left}};
    ASSERT_EQ(index_on(kept), 200);
    ASSERT_EQ(index_on(left), 200);
    ASSERT_EQ(::send(partial, "GET /metr", 9, MSG_NOSIGNAL), 9);
    const auto t0 = std::chrono::steady_clock::now();
    // The partial head: closed at the 1 s deadline (well before 8 s).
    EXPECT_TRUE(closed_within(partial, 6s)) << "a partial head is closed at --connection-deadline";
    // Three times the head's deadline later, the answered ones are open and answer again.
    std::this_thread::sleep_until(t0 + 3s);
    EXPECT_FALSE(closed_within(left, 0ms)) << "an answered connection closed before --idle-deadline";
    EXPECT_EQ(index_on(kept), 200) << "a second request on a kept connection";
    // Left idle, one is closed at the idle deadline: 8 s after its answer.
    EXPECT_TRUE(closed_within(left, 12s)) << "an idle connection is closed at --idle-deadline";
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 7s) << "closed before --idle-deadline";
    ASSERT_TRUE(serve.running()) << "the exporter died";
    EXPECT_EQ(serve.stop(), 0);
}
