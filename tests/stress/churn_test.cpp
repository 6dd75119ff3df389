// SPDX-License-Identifier: MIT
// Churn: while helpers fork and reap thousands of short-lived processes and
// start and join thousands of threads, several threads open handles to them,
// query them, and wait for them. For a bounded time. Asserts: no error other
// than "gone", no value that goes backwards for the same handle, no
// descriptor growth, bounded memory growth.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;

namespace {

long rss_kib() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

bool gone(const std::error_code& ec) {
    return ec == errc::no_such_process || ec == errc::no_such_thread || ec == errc::not_a_process;
}

// Recent ids of short-lived tasks, shared between the churners and the queriers.
class id_pool {
public:
    void add(pid_t id) {
        std::lock_guard lock(m_);
        ids_[next_++ % ids_.size()] = id;
    }
    pid_t pick(std::mt19937& rng) {
        std::lock_guard lock(m_);
        return ids_[rng() % ids_.size()];
    }

private:
    std::mutex m_;
    std::vector<pid_t> ids_ = std::vector<pid_t>(64, 1);
    std::size_t next_ = 0;
};

void run_churn(seconds duration, std::atomic<long>& queries, std::atomic<long>& failures, std::string& first_failure) {
    std::atomic<bool> stop{false};
    id_pool procs, threads;
    std::mutex fail_mutex;
    auto fail = [&](const std::string& what) {
        ++failures;
        std::lock_guard lock(fail_mutex);
        if (first_failure.empty()) first_failure = what;
    };

    std::thread forker([&] {
        while (!stop) {
            pid_t p = ::fork();
            if (p == 0) {
                volatile int x = 0;
                for (int i = 0; i < 20000; ++i) x = x + i;
                ::_exit(0);
            }
            if (p > 0) {
                procs.add(p);
                ::waitpid(p, nullptr, 0);
            }
        }
    });
    std::thread spawner([&] {
        while (!stop) {
            std::thread t([&] {
                threads.add(static_cast<pid_t>(::gettid()));
                volatile int x = 0;
                for (int i = 0; i < 20000; ++i) x = x + i;
            });
            t.join();
        }
    });
    std::vector<std::thread> queriers;
    queriers.reserve(3);
    for (int q = 0; q < 3; ++q) {
        queriers.emplace_back([&, q] {
            std::mt19937 rng(static_cast<unsigned>(q + 1));
            while (!stop) {
                if (q == 2) {
                    auto t = thread::open(threads.pick(rng));
                    if (!t) {
                        if (!gone(t.error())) fail("thread::open: " + t.error().message());
                        continue;
                    }
                    nanoseconds prev{0};
                    for (int i = 0; i < 3; ++i) {
                        auto v = t->times();
                        ++queries;
                        if (!v) {
                            if (!gone(v.error())) fail("thread::times: " + v.error().message());
                            break;
                        }
                        if (v->cpu() < prev) fail("thread cpu went backwards");
                        if (v->exit && *v->exit < v->creation) fail("thread exit before creation");
                        prev = v->cpu();
                    }
                    continue;
                }
                auto p = process::open(procs.pick(rng));
                if (!p) {
                    if (!gone(p.error())) fail("process::open: " + p.error().message());
                    continue;
                }
                nanoseconds prev_k{0}, prev_u{0};
                for (int i = 0; i < 3; ++i) {
                    auto v = p->times();
                    ++queries;
                    if (!v) {
                        if (!gone(v.error())) fail("process::times: " + v.error().message());
                        break;
                    }
                    if (v->kernel < prev_k || v->user < prev_u) fail("process times went backwards");
                    if (v->creation != p->creation()) fail("creation changed");
                    if (v->exit && *v->exit < v->creation) fail("exit before creation");
                    prev_k = v->kernel;
                    prev_u = v->user;
                }
                if (q == 1) (void)wait_for_exit(*p, 1ms);
                auto own = this_thread::times();
                if (!own) fail("this_thread::times: " + own.error().message());
            }
        });
    }
    std::this_thread::sleep_for(duration);
    stop = true;
    forker.join();
    spawner.join();
    for (auto& t : queriers) t.join();
}

}  // namespace

TEST(Churn, HandlesQueriesAndWaitsUnderProcessAndThreadChurn) {
    // Warm up: the exit monitor's epoll fd, the anchor, allocator pools.
    std::atomic<long> queries{0}, failures{0};
    std::string first_failure;
    run_churn(1s, queries, failures, first_failure);
    const int fds_before = testing_helpers::settled_fd_count();
    const long rss_before = rss_kib();

    queries = 0;
    run_churn(8s, queries, failures, first_failure);

    EXPECT_EQ(failures.load(), 0) << first_failure;
    EXPECT_GT(queries.load(), 1000);
    // Handles closed: the monitor releases what it watched once it has each
    // ended task's end, up to 2 s after the handle closed (settled_fd_count
    // waits for that), and may still be finishing a wake-up: give it a moment.
    int fds_after = testing_helpers::settled_fd_count();
    for (int i = 0; i < 100 && fds_after != fds_before; ++i) {
        std::this_thread::sleep_for(10ms);
        fds_after = testing_helpers::open_fd_count();
    }
    EXPECT_EQ(fds_after, fds_before);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    // The sanitizers keep freed memory in quarantine / shadow: RSS says
    // nothing there (LeakSanitizer checks leaks in that build instead).
    (void)rss_before;
#else
    EXPECT_LT(rss_kib() - rss_before, 16 * 1024) << "memory grew by more than 16 MiB";
#endif
}
