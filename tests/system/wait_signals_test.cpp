// SPDX-License-Identifier: MIT
// Waits under a storm of signals: a handler running every 100 ms interrupts
// the wait (EINTR) five times in a 500 ms timeout. The wait resumes for what
// is left, so it still times out after about its timeout — never later by
// more than scheduling delays, never earlier — and a wait without a timeout
// still sees the end.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <thread>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"
#include "system/signal_storm.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;
using testing_helpers::forked;
using testing_helpers::under_signal_storm;

namespace {

// Generous: a loaded 2-core machine delays a wake-up, but not by seconds.
constexpr auto bound = 5s;

// A process that sleeps until the test kills it (the forked helper waits on
// its pipe without ever being told to go).
struct sleeper {
    forked f{[] { return 0; }};
    process h = process::open(f.pid()).value();
};

}  // namespace

TEST(WaitSignals, WaitForExitTimesOutAfterItsTimeout) {
    sleeper s;
    result<bool> r = false;
    const auto st = under_signal_storm([&] { r = wait_for_exit(s.h, 500ms); }, bound);
    ASSERT_TRUE(st.within_bound) << "a 500 ms wait did not return within " << bound.count()
                                 << " s under SIGALRM every 100 ms (" << st.signals << " signals)";
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(*r) << "the process is still running";
    EXPECT_GE(st.took, 500ms) << "a signal cut the wait short";
    EXPECT_GE(st.signals, 2) << "the storm did not reach the waiting thread";
}

TEST(WaitSignals, WaitForAnyTimesOutAfterItsTimeout) {
    sleeper a, b;
    const process* ps[] = {&a.h, &b.h};
    result<std::optional<std::size_t>> r = std::optional<std::size_t>(9);
    const auto st = under_signal_storm([&] { r = wait_for_any(ps, 500ms); }, bound);
    ASSERT_TRUE(st.within_bound) << st.signals << " signals";
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->has_value());
    EXPECT_GE(st.took, 500ms);
    EXPECT_GE(st.signals, 2);
}

TEST(WaitSignals, ChildWaitForTimesOutAfterItsTimeout) {
    spawn_options o;
    o.argv = {"sleep", "60"};
    auto c = child::spawn(o);
    ASSERT_TRUE(c) << c.error().message();
    result<std::optional<child_exit>> r = std::optional<child_exit>(child_exit{});
    const auto st = under_signal_storm([&] { r = c->wait_for(500ms); }, bound);
    ::kill(c->id(), SIGKILL);
    ASSERT_TRUE(st.within_bound) << st.signals << " signals";
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->has_value()) << "sleep 60 ended early";
    EXPECT_GE(st.took, 500ms);
    EXPECT_GE(st.signals, 2);
    auto e = c->wait();
    ASSERT_TRUE(e) << e.error().message();
    ASSERT_TRUE(e->status);
    EXPECT_EQ(e->status->signal, SIGKILL);
}

// Without a timeout (child::wait() asks for nanoseconds::max(), beyond any
// deadline the clock can reach), the signals do not end the wait: it returns
// when the process ends.
TEST(WaitSignals, UnboundedWaitsReturnAtTheEnd) {
    spawn_options o;
    o.argv = {"sleep", "0.7"};
    auto c = child::spawn(o);
    ASSERT_TRUE(c) << c.error().message();
    result<child_exit> e = errc::invalid_handle;
    const auto st = under_signal_storm([&] { e = c->wait(); }, bound);
    ASSERT_TRUE(st.within_bound) << st.signals << " signals";
    ASSERT_TRUE(e) << e.error().message();
    ASSERT_TRUE(e->status);
    EXPECT_EQ(e->status->code, 0);
    EXPECT_GE(st.took, 500ms) << "returned before sleep 0.7 could have ended";

    sleeper s;
    result<bool> r = false;
    std::thread killer([&] {
        std::this_thread::sleep_for(700ms);
        ::kill(s.f.pid(), SIGKILL);
    });
    const auto st2 = under_signal_storm([&] { r = wait_for_exit(s.h); }, bound);
    killer.join();
    ASSERT_TRUE(st2.within_bound);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE(*r);
    EXPECT_GE(st2.took, 500ms);
}
