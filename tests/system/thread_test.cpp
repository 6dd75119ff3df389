// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include <pthread.h>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;
using testing_helpers::burn_thread_cpu;
using testing_helpers::forked;

namespace {
// A thread that runs until told to stop, exposing its tid.
class parked_thread {
public:
    explicit parked_thread(std::chrono::nanoseconds burn = 0ns, const char* name = nullptr)
        : t_([this, burn, name] {
              if (name) ::pthread_setname_np(::pthread_self(), name);
              tid_ = static_cast<pid_t>(::gettid());
              burn_thread_cpu(burn);
              burned_ = true;
              while (!stop_) std::this_thread::sleep_for(1ms);
          }) {
        while (tid_ == 0 || !burned_) std::this_thread::sleep_for(1ms);
    }
    ~parked_thread() { join(); }
    void join() {
        stop_ = true;
        if (t_.joinable()) t_.join();
    }
    pid_t tid() const { return tid_; }

private:
    std::atomic<pid_t> tid_{0};
    std::atomic<bool> burned_{false};
    std::atomic<bool> stop_{false};
    std::thread t_;
};

// A child process whose second thread burns `burn_first` of CPU, reports its
// tid, then runs `then` (by default it sleeps for good). The child is killed
// when this goes out of scope.
class worker_child {
public:
    explicit worker_child(
        std::chrono::nanoseconds burn_first, std::function<void()> then =
                                                 [] {
                                                     for (;;) ::pause();
                                                 })
        : pipe_(make_pipe()), child_([this, burn_first, then] {
              std::thread worker([&] {
                  pid_t tid = static_cast<pid_t>(::gettid());
                  burn_thread_cpu(burn_first);
                  if (::write(pipe_[1], &tid, sizeof tid) != sizeof tid) ::_exit(3);
                  then();
              });
              worker.join();
              return 0;
          }) {
        ::close(pipe_[1]);
        child_.start();
        if (::read(pipe_[0], &tid_, sizeof tid_) != sizeof tid_) tid_ = -1;
        ::close(pipe_[0]);
    }
    pid_t pid() const { return child_.pid(); }
    pid_t tid() const { return tid_; }

private:
    static std::array<int, 2> make_pipe() {
        std::array<int, 2> p{-1, -1};
        if (::pipe(p.data()) != 0) std::abort();
        return p;
    }
    std::array<int, 2> pipe_;
    forked child_;
    pid_t tid_ = -1;
};
}  // namespace

TEST(Thread, OwnThreadHandleSeesItsBusyLoop) {
    parked_thread t(250ms);
    auto h = thread::open(::getpid(), t.tid());
    ASSERT_TRUE(h) << h.error().message();
    auto times = h->times().value();
    // The total is exact; the split is the kernel's tick samples scaled to it,
    // skewed under load (Process.AnotherProcessCpuTime): user shows, not how much.
    EXPECT_GE(times.cpu(), 250ms);
    EXPECT_GT(times.user, 0ms);
    EXPECT_EQ(times.precision.source, cpu_source::cpu_clock_and_stat);
    EXPECT_EQ(h->process_id(), ::getpid());
    EXPECT_EQ(h->id(), t.tid());
}

TEST(Thread, OpenByTidAloneFindsTheProcess) {
    parked_thread t;
    auto h = thread::open(t.tid());
    ASSERT_TRUE(h) << h.error().message();
    EXPECT_EQ(h->process_id(), ::getpid());
}

TEST(Thread, CreationIsAfterProcessCreationAndBracketed) {
    const auto proc_created = process::open_self().value().creation();
    const auto before = system_clock::now();
    parked_thread t;
    const auto after = system_clock::now();
    auto h = thread::open(::getpid(), t.tid()).value();
    EXPECT_GE(h.creation(), proc_created);
    EXPECT_GE(h.creation(), before - 11ms);  // floored to its 10 ms tick (+1 ms anchor slack)
    EXPECT_LE(h.creation(), after + 1ms);
    EXPECT_EQ(h.times().value().creation, h.creation());
}

TEST(Thread, CallingThreadMatchesHandle) {
    auto h = thread::open_self().value();
    EXPECT_EQ(h.id(), this_thread::id());
    const auto mine = this_thread::times().value();
    EXPECT_EQ(mine.creation, h.creation());
    EXPECT_EQ(mine.precision.source, cpu_source::thread_clock_and_rusage);
    EXPECT_EQ(mine.precision.total_resolution, 1ns);
}

TEST(Thread, CallingThreadTimeIsCurrentNotAsOfTheLastTick) {
    // A thread that sleeps 1 ms and then runs 3 ms, 300 times: each run is
    // shorter than a tick, so a source current only as of the last tick or
    // switch (getrusage(RUSAGE_THREAD) alone) saw about 40 % of it. The run
    // makes no syscall (a CPU-clock read would bring the runtime up to date);
    // the thread's CPU clock is read before it and after the second query.
    // What the queries saw can only fall short of the clock by the CPU of the
    // tail of the second query (~1 µs a run): 90 % cannot flake.
    nanoseconds seen{0}, spun{0};
    for (int i = 0; i < 300; ++i) {
        std::this_thread::sleep_for(1ms);
        const auto a = this_thread::times().value();
        const auto c0 = thread_cpu_clock::now();
        testing_helpers::spin_without_syscalls(3ms);
        const auto b = this_thread::times().value();
        const auto c1 = thread_cpu_clock::now();
        ASSERT_GE(b.kernel, a.kernel);
        ASSERT_GE(b.user, a.user);
        seen += b.cpu() - a.cpu();
        spun += c1 - c0;
    }
    EXPECT_GE(seen, spun * 9 / 10) << "saw " << duration<double, std::milli>(seen).count() << " ms of "
                                   << duration<double, std::milli>(spun).count() << " ms";
}

TEST(Thread, NameWithParentheses) {
    parked_thread t(0ns, "a) (b c)");
    auto h = thread::open(::getpid(), t.tid()).value();
    EXPECT_EQ(h.name().value(), "a) (b c)");
    EXPECT_TRUE(h.times());
}

TEST(Thread, EndedThreadReportsItsExit) {
    auto t = std::make_unique<parked_thread>(30ms);
    auto h = thread::open(::getpid(), t->tid()).value();
    const auto before = h.times().value();
    const auto joined_before = system_clock::now();
    t.reset();  // joined
    const auto joined_after = system_clock::now();
    ASSERT_TRUE(wait_for_exit(h, 5s).value());
    const auto seen = system_clock::now();  // the exit was stamped before the wait returned
    auto r = h.times();
    ASSERT_TRUE(r) << r.error().message();
    // A thread is released at once: its final values cannot be read, and the
    // result says so instead of passing the last sample off as final.
    EXPECT_EQ(r->state, task_state::exited_partial);
    ASSERT_TRUE(r->exit.has_value());
    EXPECT_GE(*r->exit, r->creation);
    EXPECT_GE(*r->exit, joined_before - 1ms);
    EXPECT_LE(*r->exit, seen);
    RecordProperty("exit_after_join_us", std::to_string(duration_cast<microseconds>(*r->exit - joined_after).count()));
    EXPECT_GE(r->cpu(), before.cpu());
    EXPECT_LE(r->sampled_at, *r->exit);
    EXPECT_FALSE(h.name());
    EXPECT_EQ(h.name().error(), errc::no_such_thread);
}

TEST(Thread, WrongProcessForTid) {
    parked_thread t;
    auto r = thread::open(1, t.tid());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::no_such_thread);
    EXPECT_EQ(thread::open(0).error(), errc::invalid_argument);
    EXPECT_EQ(thread::open(-5).error(), errc::invalid_argument);
}

TEST(Thread, ThreadOfAnotherProcess) {
    // The child's second thread burns CPU, then reports its tid.
    worker_child c(150ms);
    const pid_t tid = c.tid();
    ASSERT_GT(tid, 0);
    auto h = thread::open(tid);
    ASSERT_TRUE(h) << h.error().message();
    EXPECT_EQ(h->process_id(), c.pid());
    auto times = h->times().value();
    EXPECT_EQ(times.precision.source, cpu_source::schedstat_and_stat);
    EXPECT_EQ(times.precision.total_resolution, 1ns);
    EXPECT_GE(times.cpu(), 150ms);
    EXPECT_GE(h->creation(), process::open(c.pid()).value().creation());
}

TEST(Thread, NoDescriptorLeak) {
    parked_thread t;
    (void)thread::open(t.tid()).value();  // starts the exit monitor (one epoll fd, kept)
    const int before = testing_helpers::open_fd_count();
    for (int i = 0; i < 200; ++i) {
        auto h = thread::open(t.tid()).value();
        (void)h.times().value();
        auto bad = thread::open(::getpid(), 4'000'000);
    }
    EXPECT_EQ(testing_helpers::open_fd_count(), before);
}

TEST(Thread, IdleThreadOfAnotherProcessCostsOneRead) {
    // An idle thread's run time does not move, so its stat (split and state)
    // cannot have changed: one schedstat read answers, with the same values.
    if (testing_helpers::read_syscalls() < 0) GTEST_SKIP() << "/proc/self/io is not available";
    worker_child c(30ms);
    const pid_t tid = c.tid();
    ASSERT_GT(tid, 0);
    ASSERT_TRUE(testing_helpers::wait_until_idle(c.pid())) << "the worker never blocked";
    auto h = thread::open(c.pid(), tid).value();
    const auto first = h.times().value();
    EXPECT_GE(first.cpu(), 30ms);
    constexpr int queries = 100;
    const long long before = testing_helpers::read_syscalls();
    for (int i = 0; i < queries; ++i) {
        const auto t = h.times().value();
        EXPECT_EQ(t.kernel, first.kernel);
        EXPECT_EQ(t.user, first.user);
        EXPECT_EQ(t.state, task_state::running);
        EXPECT_GE(t.sampled_at, first.sampled_at);
    }
    const long long reads = testing_helpers::read_syscalls() - before - 1;  // less the read of /proc/self/io itself
    EXPECT_GE(reads, queries);
    // One read a query (stat again at most once a second, and a few reads by
    // other threads of this process).
    EXPECT_LE(reads, queries + 10);
}

TEST(Thread, RunningThreadOfAnotherProcessIsReadAfresh) {
    // The same handle on a thread that runs: totals and both sides of the
    // split keep moving forward, never frozen at a reused sample.
    worker_child c(0ns, [] { burn_thread_cpu(100s); });
    const pid_t tid = c.tid();
    ASSERT_GT(tid, 0);
    auto h = thread::open(c.pid(), tid).value();
    const auto first = h.times().value();
    auto prev = first;
    const auto deadline = steady_clock::now() + 20s;
    while (prev.cpu() - first.cpu() < 100ms && steady_clock::now() < deadline) {
        const auto t = h.times().value();
        EXPECT_GE(t.kernel, prev.kernel);
        EXPECT_GE(t.user, prev.user);
        EXPECT_GE(t.cpu(), prev.cpu());
        prev = t;
    }
    EXPECT_GE(prev.cpu() - first.cpu(), 100ms) << "the thread's time did not move in 20 s";
    // A busy loop in user mode: the split must show it (ticks sampled in user
    // mode), not leave the first sample's split in place.
    EXPECT_GT(prev.user, first.user);
}

TEST(Thread, OneHandleQueriedFromManyThreads) {
    // Handles are shared between threads: concurrent queries of a thread that
    // alternates between running and sleeping (so the stat memo is both hit
    // and refilled) each see values that never go backwards.
    worker_child c(0ns, [] {
        for (;;) {
            burn_thread_cpu(2ms);
            std::this_thread::sleep_for(3ms);
        }
    });
    const pid_t tid = c.tid();
    ASSERT_GT(tid, 0);
    const auto h = thread::open(c.pid(), tid).value();
    const auto ph = process::open(c.pid()).value();
    std::atomic<int> backwards{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> readers;
    readers.reserve(4);
    for (int r = 0; r < 4; ++r)
        readers.emplace_back([&] {
            task_times prev{}, pprev{};
            for (int i = 0; i < 2000; ++i) {
                auto t = h.times();
                auto pt = ph.times();
                if (!t || !pt) {
                    ++failures;
                    continue;
                }
                if (t->kernel < prev.kernel || t->user < prev.user || pt->kernel < pprev.kernel ||
                    pt->user < pprev.user)
                    ++backwards;
                prev = *t;
                pprev = *pt;
            }
        });
    for (auto& r : readers) r.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(backwards.load(), 0);
}
