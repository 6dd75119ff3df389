// SPDX-License-Identifier: MIT
// Handles get exact final values from the eBPF exit stream (docs/BPF.md):
// with exit records enabled and the stream permitted, a process reaped at
// once by its own parent and a thread that ended report their final CPU time
// and their exact exit instant through the public handle API.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_skip.hpp"
#include "burn.hpp"
#include "proctimes/clock.hpp"
#include "proctimes/linux.hpp"
#include "proctimes/process.hpp"

using namespace proctimes;
using namespace std::chrono_literals;
using std::chrono::nanoseconds;

namespace {

std::int64_t realtime_ns() {
    return std::chrono::duration_cast<nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The handle's values once it reports the end (the monitor's wake-up, then
// the eBPF record a grace period after the release).
template <class Handle>
task_times ended(Handle& h) {
    task_times t{};
    for (int i = 0; i < 2000; ++i) {
        auto r = h.times();
        EXPECT_TRUE(r) << r.error().message();
        if (!r) break;
        t = *r;
        if (t.state != task_state::running && t.precision.source == cpu_source::bpf_exit) break;
        std::this_thread::sleep_for(10ms);
    }
    return t;
}

class HandleFinals : public ::testing::Test {
protected:
    void SetUp() override {
        set_exit_records_enabled(true);
        set_exit_records_bpf(true);
        if (!exit_records_use_bpf()) GTEST_SKIP() << "exit records do not come from the eBPF exit stream here";
    }
    void TearDown() override { set_exit_records_enabled(false); }
};

}  // namespace

TEST_F(HandleFinals, ProcessReapedAtOnceByItsParent) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    constexpr auto burned = 50ms;
    int info[2], go[2];
    ASSERT_EQ(::pipe(info), 0);
    ASSERT_EQ(::pipe(go), 0);
    const pid_t middle = ::fork();
    ASSERT_GE(middle, 0);
    if (middle == 0) {
        const pid_t worker = ::fork();
        if (worker == 0) {
            char x;
            if (::read(go[0], &x, 1) != 1) ::_exit(9);
            testing_helpers::burn_thread_cpu(burned);
            const std::int64_t t0 = realtime_ns();
            (void)!::write(info[1], &t0, sizeof t0);
            ::_exit(7);
        }
        (void)!::write(info[1], &worker, sizeof worker);
        ::waitpid(worker, nullptr, 0);  // reaped the moment it ends, by its own parent
        ::_exit(0);
    }
    ::close(info[1]);
    ::close(go[0]);
    pid_t worker = 0;
    ASSERT_EQ(::read(info[0], &worker, sizeof worker), static_cast<ssize_t>(sizeof worker));
    auto h = process::open(worker);
    ASSERT_TRUE(h) << h.error().message();
    ASSERT_EQ(::write(go[1], "g", 1), 1);
    std::int64_t t0 = 0;
    ASSERT_EQ(::read(info[0], &t0, sizeof t0), static_cast<ssize_t>(sizeof t0));
    ASSERT_EQ(::waitpid(middle, nullptr, 0), middle);
    const std::int64_t t1 = realtime_ns();  // the worker had ended and been reaped
    ::close(info[0]);
    ::close(go[1]);

    const task_times t = ended(*h);
    EXPECT_EQ(t.state, task_state::exited);
    EXPECT_EQ(t.precision.source, cpu_source::bpf_exit);
    EXPECT_EQ(t.precision.total_resolution, 1ns);
    EXPECT_GE(t.cpu(), burned);
    ASSERT_TRUE(t.exit && t.exit_earliest);
    EXPECT_EQ(t.precision.exit_source, exit_source::bpf_exit);
    EXPECT_EQ(*t.exit_earliest, *t.exit);
    EXPECT_LE(t0, t.exit->time_since_epoch().count());
    EXPECT_LE(t.exit->time_since_epoch().count(), t1);
    auto st = h->exit_status();
    ASSERT_TRUE(st) << st.error().message();
    ASSERT_TRUE(*st);
    EXPECT_EQ((*st)->code, 7);
    // Final: a later query answers the same.
    auto again = h->times();
    ASSERT_TRUE(again);
    EXPECT_EQ(again->cpu(), t.cpu());
    EXPECT_EQ(again->exit, t.exit);
}

TEST_F(HandleFinals, ThreadThatEnded) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    constexpr auto burned = 40ms;
    std::atomic<pid_t> tid{0};
    std::atomic<bool> go{false};
    std::atomic<std::int64_t> t0{0};
    std::thread th([&] {
        tid = static_cast<pid_t>(::syscall(SYS_gettid));
        while (!go) std::this_thread::sleep_for(1ms);
        testing_helpers::burn_thread_cpu(burned);
        t0 = realtime_ns();
    });
    while (tid == 0) std::this_thread::sleep_for(1ms);
    auto h = thread::open(::getpid(), tid);
    ASSERT_TRUE(h) << h.error().message();
    go = true;
    th.join();
    // join returns when the kernel clears the thread's tid, before do_exit()
    // is done; the task leaves /proc after it.
    const std::string dir = "/proc/self/task/" + std::to_string(tid.load());
    for (int i = 0; i < 5000 && ::access(dir.c_str(), F_OK) == 0; ++i) std::this_thread::sleep_for(1ms);
    const std::int64_t t1 = realtime_ns();

    const task_times t = ended(*h);
    EXPECT_EQ(t.state, task_state::exited);
    EXPECT_EQ(t.precision.source, cpu_source::bpf_exit);
    EXPECT_GE(t.cpu(), burned);
    ASSERT_TRUE(t.exit);
    EXPECT_EQ(t.precision.exit_source, exit_source::bpf_exit);
    EXPECT_LE(t0.load(), t.exit->time_since_epoch().count());
    EXPECT_LE(t.exit->time_since_epoch().count(), t1);
}
