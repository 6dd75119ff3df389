// SPDX-License-Identifier: MIT
// The exit monitor's failures are counted, never silent, and a closed child's
// reap request that the monitor's set refuses is never dropped: the child is
// reaped at once when it has ended, or kept and retried until the monitor
// takes it, or (only when every place to keep one is taken) counted as lost.
// The refusals are forced with the monitor's fault-injection hook.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>

#include "linux/exit/kept_reaps.hpp"
#include "linux/exit/monitor.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/spawn.hpp"

namespace {

using namespace proctimes;
using namespace std::chrono_literals;

exit_failures counts() {
    exit_failures f;
    (void)exit_records_status(f);
    return f;
}

// The state of `pid` as our child, without reaping it: 'R' running, 'Z' a
// zombie, 0 reaped (no such child any more).
char child_state(pid_t pid) {
    siginfo_t si{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) != 0) return 0;
    return si.si_pid == pid ? 'Z' : 'R';
}

bool reaped_within(pid_t pid, std::chrono::milliseconds bound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (child_state(pid) != 0) {
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(2ms);
    }
    return true;
}

child spawn_ok(std::vector<std::string> argv) {
    auto c = child::spawn({.argv = std::move(argv)});
    EXPECT_TRUE(c) << c.error().message();
    return std::move(*c);
}

struct ExitFailures : ::testing::Test {
    void SetUp() override {
        if (!exit_monitor_enabled()) GTEST_SKIP() << "the exit monitor is off (PROCTIMES_EXIT_MONITOR)";
        auto warm = spawn_ok({"/bin/true"});  // the monitor's thread and set exist from here on
        ASSERT_TRUE(warm.wait());
    }
    void TearDown() override { detail::exit_monitor_fail_next_adds(0); }
};

}  // namespace

TEST_F(ExitFailures, NoneOnAHealthyRun) {
    const auto before = counts();
    auto c = spawn_ok({"/bin/true"});
    ASSERT_TRUE(c.wait());
    EXPECT_EQ(counts().total(), before.total());
}

TEST_F(ExitFailures, ARefusedReapRequestIsKeptAndRetriedUntilTheChildIsReaped) {
    const auto before = counts();
    // Both the watch at open and the closed handle's reap request are refused.
    detail::exit_monitor_fail_next_adds(2);
    auto c = spawn_ok({"/bin/sleep", "0.3"});
    const pid_t pid = c.id();
    auto mid = counts();
    EXPECT_EQ(mid.watch, before.watch + 1) << "the refused watch is counted";
    c = child();  // closed while it runs: nobody will wait for it
    mid = counts();
    EXPECT_EQ(mid.reap_deferred, before.reap_deferred + 1) << "the refused reap request is counted";
    EXPECT_EQ(mid.reap_lost, before.reap_lost);
    EXPECT_NE(child_state(pid), 0) << "still running: the request was kept, not served by a blocking reap";
    // The monitor thread retries it, takes it into its set, and reaps the
    // child when it ends: no zombie is left.
    EXPECT_TRUE(reaped_within(pid, 10s)) << "state " << child_state(pid);
    EXPECT_FALSE(detail::kept_reaps_waiting());
}

TEST_F(ExitFailures, ARefusedReapRequestOfAnEndedChildReapsItAtOnce) {
    const auto before = counts();
    detail::exit_monitor_fail_next_adds(2);
    auto c = spawn_ok({"/bin/true"});
    const pid_t pid = c.id();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (child_state(pid) != 'Z' && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    ASSERT_EQ(child_state(pid), 'Z');  // unwatched: nobody reaps it but the close below
    c = child();
    EXPECT_EQ(child_state(pid), 0) << "reaped by the close itself";
    const auto after = counts();
    EXPECT_EQ(after.reap_deferred, before.reap_deferred + 1);
    EXPECT_EQ(after.watch, before.watch + 1);
}

TEST_F(ExitFailures, ARequestThatCannotBeKeptIsCountedAsLost) {
    const auto before = counts();
    detail::exit_monitor_fail_next_adds(~0u);  // the set refuses everything, retries included
    std::vector<pid_t> pids;
    for (std::size_t i = 0; i <= detail::kept_reaps_max; ++i) {
        auto c = spawn_ok({"/bin/sleep", "30"});
        pids.push_back(c.id());
    }  // each closed at the end of its round, running
    const auto after = counts();
    EXPECT_EQ(after.reap_deferred - before.reap_deferred + after.reap_lost - before.reap_lost, pids.size())
        << "every refused request is counted, kept or lost";
    EXPECT_EQ(after.reap_lost, before.reap_lost + 1) << "one more than the places to keep them";
    EXPECT_TRUE(detail::kept_reaps_waiting());
    // The set takes requests again and the children end: every kept child is
    // reaped by the monitor; the lost one (the last) stays our zombie, which
    // this test reaps.
    detail::exit_monitor_fail_next_adds(0);
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    for (std::size_t i = 0; i + 1 < pids.size(); ++i) EXPECT_TRUE(reaped_within(pids[i], 10s)) << i;
    EXPECT_FALSE(detail::kept_reaps_waiting());
    EXPECT_EQ(child_state(pids.back()), 'Z') << "lost: nobody reaps it";
    int st = 0;
    EXPECT_EQ(::waitpid(pids.back(), &st, 0), pids.back());
}
