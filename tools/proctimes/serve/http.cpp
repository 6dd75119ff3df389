// SPDX-License-Identifier: MIT
// The HTTP side of `proctimes serve`, on cpp-httplib: a fixed pool of worker
// threads taking the newest connection first, read/write timeouts, a cap on
// request bodies (headers are capped at 8 KiB by the library), a deadline on
// every connection, and a clean stop on SIGINT/SIGTERM.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <httplib.h>

#include "serve/collector.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli {
namespace {

// Workers take the most recent connection first: a scraper that connects
// after a flood of idle connections is not queued behind all of them (the
// connection keeper below clears the flood itself).
class lifo_pool final : public httplib::TaskQueue {
public:
    explicit lifo_pool(unsigned n) {
        for (unsigned i = 0; i < n; ++i) workers_.emplace_back([this] { work(); });
    }
    void enqueue(std::function<void()> fn) override {
        {
            std::lock_guard lk(mu_);
            jobs_.push_back(std::move(fn));
        }
        cv_.notify_one();
    }
    void shutdown() override {
        {
            std::lock_guard lk(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto& t : workers_) t.join();
    }

private:
    void work() {
        for (;;) {
            std::function<void()> fn;
            {
                std::unique_lock lk(mu_);
                cv_.wait(lk, [this] { return stop_ || !jobs_.empty(); });
                if (jobs_.empty()) return;  // stopping, nothing left
                fn = std::move(jobs_.back());
                jobs_.pop_back();
            }
            fn();
        }
    }
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> jobs_;
    std::vector<std::thread> workers_;
    bool stop_ = false;
};

// The connection keeper probes descriptors that the server's threads own and
// may close at any moment; a number reused meanwhile is caught by the inode
// check before anything is done to it. These raw system calls do exactly what
// the libc wrappers do, without ThreadSanitizer's interceptors, whose model
// treats any use of a descriptor from another thread as a data race on it.
namespace probe {
int fstat(int fd, struct stat* st) { return static_cast<int>(::syscall(SYS_fstat, fd, st)); }
int getsockopt(int fd, int level, int name, void* v, socklen_t* l) {
    return static_cast<int>(::syscall(SYS_getsockopt, fd, level, name, v, l));
}
int getsockname(int fd, sockaddr* a, socklen_t* l) { return static_cast<int>(::syscall(SYS_getsockname, fd, a, l)); }
int getpeername(int fd, sockaddr* a, socklen_t* l) { return static_cast<int>(::syscall(SYS_getpeername, fd, a, l)); }
ssize_t peek(int fd, char* buf, std::size_t n) {
    return ::syscall(SYS_recvfrom, fd, buf, n, MSG_PEEK | MSG_DONTWAIT, nullptr, nullptr);
}
int shutdown(int fd) { return static_cast<int>(::syscall(SYS_shutdown, fd, SHUT_RDWR)); }
}  // namespace probe

std::uint16_t local_port(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (probe::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
    if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    return 0;
}

// Peer ports of the connections whose request a handler is answering now:
// never cut.
class in_flight {
public:
    void add(int port) {
        std::lock_guard lk(mu_);
        ++ports_[port];
    }
    void remove(int port) {
        std::lock_guard lk(mu_);
        if (--ports_[port] <= 0) ports_.erase(port);
    }
    bool has(int port) {
        std::lock_guard lk(mu_);
        return ports_.count(port) != 0;
    }

private:
    std::mutex mu_;
    std::map<int, int> ports_;
};

std::uint16_t peer_port(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (probe::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
    if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    return 0;
}

// Whether a whole request head waits unread in the socket (peeked, not consumed).
bool request_pending(int fd) {
    char buf[8192];
    const ssize_t n = probe::peek(fd, buf, sizeof buf);
    return n > 0 && std::string_view(buf, static_cast<std::size_t>(n)).find("\r\n\r\n") != std::string_view::npos;
}

// Cuts connections that only hold a worker or a descriptor. cpp-httplib times
// out each read, not a whole request, and serves connections in the order it
// accepted them, so 1,000 idle connections, or one client sending a byte a
// second, would otherwise keep every worker for minutes. Each sweep (once a
// second) looks at this process's connections to `port` and shuts down
// (shutdown(2): the worker's read then ends at once) those that
//  - have received nothing for `idle` and were never seen holding a complete
//    request head, or
//  - are older than `deadline`,
// unless a handler is answering them right now. Connections are known by
// their socket inode, checked again right before the shutdown: a descriptor
// number reused meanwhile is a different inode and is left alone.
class connection_keeper {
public:
    explicit connection_keeper(in_flight& busy) : busy_(busy) {}
    void sweep(std::uint16_t port, std::chrono::milliseconds idle, std::chrono::seconds deadline) {
        const auto now = std::chrono::steady_clock::now();
        std::map<ino_t, std::chrono::steady_clock::time_point> still;
        DIR* d = ::opendir("/proc/self/fd");
        if (!d) return;
        while (dirent* e = ::readdir(d)) {
            char* end = nullptr;
            const long n = std::strtol(e->d_name, &end, 10);
            const int fd = static_cast<int>(n);
            if (*end != '\0' || n < 0 || fd == ::dirfd(d)) continue;
            struct stat st {};
            if (probe::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
            int listening = 0;
            socklen_t l = sizeof listening;
            if (probe::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l) != 0 || listening) continue;
            if (local_port(fd) != port) continue;
            auto seen = first_seen_.find(st.st_ino);
            const auto since = seen == first_seen_.end() ? now : seen->second;
            still.emplace(st.st_ino, since);
            if (busy_.has(peer_port(fd))) continue;
            // A connection once seen holding a whole request is a client, not
            // a squatter: only the deadline applies to it (a worker may have
            // just taken the request and not reached the handler yet).
            bool legit = legit_.count(st.st_ino) != 0;
            if (!legit && request_pending(fd)) {
                legit = true;
                legit_.insert(st.st_ino);
            }
            bool cut = now - since >= deadline;
            if (!cut && !legit && now - since >= idle) {
                tcp_info ti{};
                socklen_t tl = sizeof ti;
                cut = probe::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 &&
                      std::chrono::milliseconds(ti.tcpi_last_data_recv) >= idle;
            }
            if (cut) {
                struct stat again {};
                if (probe::fstat(fd, &again) == 0 && again.st_ino == st.st_ino) probe::shutdown(fd);
            }
        }
        ::closedir(d);
        first_seen_.swap(still);
        for (auto it = legit_.begin(); it != legit_.end();)
            it = first_seen_.count(*it) ? std::next(it) : legit_.erase(it);
    }

private:
    in_flight& busy_;
    std::map<ino_t, std::chrono::steady_clock::time_point> first_seen_;
    std::set<ino_t> legit_;
};

constexpr const char* index_html =
    "<!DOCTYPE html>\n<html><head><title>proctimes serve</title></head><body>\n"
    "<h1>proctimes serve</h1>\n<p>Process CPU and start times for Prometheus: "
    "<a href=\"/metrics\">/metrics</a></p>\n</body></html>\n";

}  // namespace

int serve_http(serve::collector& col, const serve_options& opts, std::ostream& out, std::ostream& err) {
    // SIGINT/SIGTERM: blocked here (and so in every thread started below) and
    // taken by one thread with sigtimedwait, which stops the server.
    sigset_t stop_set, old;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &stop_set, &old);

    httplib::Server svr;
    const unsigned workers = std::max(1u, opts.http_threads);
    svr.new_task_queue = [workers] { return new lifo_pool(workers); };
    svr.set_read_timeout(5, 0);
    svr.set_write_timeout(10, 0);
    svr.set_keep_alive_timeout(5);
    svr.set_keep_alive_max_count(100);
    svr.set_payload_max_length(std::size_t{64} * 1024);

    in_flight busy;
    svr.Get("/metrics", [&col, &busy](const httplib::Request& req, httplib::Response& res) {
        busy.add(req.remote_port);
        const auto f = serve::negotiate(req.get_header_value("Accept"));
        try {
            res.set_content(col.scrape(f), std::string(serve::content_type(f)));
        } catch (...) {
            busy.remove(req.remote_port);
            throw;
        }
        busy.remove(req.remote_port);
    });
    svr.Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(index_html, "text/html; charset=utf-8");
    });
    auto not_allowed = [](const httplib::Request&, httplib::Response& res) {
        res.status = 405;
        res.set_header("Allow", "GET, HEAD");
        res.set_content("method not allowed\n", "text/plain");
    };
    svr.Post(".*", not_allowed);
    svr.Put(".*", not_allowed);
    svr.Delete(".*", not_allowed);
    svr.Patch(".*", not_allowed);
    svr.Options(".*", not_allowed);

    int port = opts.port;
    if (opts.port == 0)
        port = svr.bind_to_any_port(opts.host);
    else if (!svr.bind_to_port(opts.host, opts.port))
        port = -1;
    if (port <= 0) {
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        err << "proctimes: serve: cannot listen on " << opts.host << ":" << opts.port << ": " << std::strerror(errno)
            << "\n";
        return 1;
    }
    const auto bound = static_cast<std::uint16_t>(port);
    if (!opts.port_file.empty()) {
        std::ofstream pf(opts.port_file + ".tmp");
        pf << bound << "\n";
        pf.close();
        std::rename((opts.port_file + ".tmp").c_str(), opts.port_file.c_str());
    }
    out << "proctimes serve: listening on http://"
        << (opts.host.find(':') != std::string::npos ? "[" + opts.host + "]" : opts.host) << ":" << bound
        << "/metrics (exit records: " << col.exit_source() << ")" << std::endl;

    std::atomic<bool> done{false};
    std::thread keeper([&] {
        connection_keeper dk(busy);
        constexpr std::chrono::milliseconds idle(2000);
        const timespec tick{1, 0};
        while (!done.load()) {
            siginfo_t si{};
            if (::sigtimedwait(&stop_set, &si, &tick) > 0) {
                done = true;
                dk.sweep(bound, idle, std::chrono::seconds(0));  // let the workers finish now
                svr.stop();
                break;
            }
            dk.sweep(bound, idle, std::chrono::seconds(opts.connection_deadline));
        }
    });
    const bool ok = svr.listen_after_bind();
    done = true;
    keeper.join();
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (!ok) {
        err << "proctimes: serve: the server stopped with an error\n";
        return 1;
    }
    out << "proctimes serve: stopped" << std::endl;
    return 0;
}

}  // namespace proctimes::cli
