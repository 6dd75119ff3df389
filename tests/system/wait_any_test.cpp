// SPDX-License-Identifier: MIT
// wait_for_any (proctimes/exit.hpp): WaitForMultipleObjects with bWaitAll =
// FALSE over process handles — which one ended, timeouts, and bad handles.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;
using testing_helpers::forked;

namespace {

// Skips the calling test when the kernel has no pidfds (Linux < 5.3): the
// wait answers not_supported there, which the caller asserts instead.
bool pidfds_supported(const process& p) {
    const process* one[] = {&p};
    auto r = wait_for_any(one, 0ns);
    return r || r.error() != errc::not_supported;
}

// Three forked children, each waiting for the test's go, and a handle to each.
struct three_children {
    forked a{[] { return 0; }};
    forked b{[] { return 0; }};
    forked c{[] { return 0; }};
    process ha = process::open(a.pid()).value();
    process hb = process::open(b.pid()).value();
    process hc = process::open(c.pid()).value();
};

}  // namespace

TEST(WaitForAny, ReturnsTheIndexOfTheProcessThatEnded) {
    three_children k;
    auto& b = k.b;
    const auto &ha = k.ha, &hb = k.hb, &hc = k.hc;
    if (!pidfds_supported(ha)) GTEST_SKIP() << "no pidfds on this kernel (Linux < 5.3)";
    const process* ps[] = {&ha, &hb, &hc};

    // Only the middle one is told to run to its end; the others wait on
    // their pipe and stay alive.
    const auto before = system_clock::now();
    b.start();
    auto r = wait_for_any(ps, 20s);
    const auto after = system_clock::now();
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->has_value()) << "timed out although process 1 ended";
    EXPECT_EQ(**r, 1u);

    // The wait observed the end: the handle reports it, stamped no later than
    // the wait's return.
    auto t = hb.times();
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_NE(t->state, task_state::running);
    ASSERT_TRUE(t->exit.has_value());
    EXPECT_GE(*t->exit, before);
    EXPECT_LE(*t->exit, after);
    // The others were not touched.
    EXPECT_FALSE(ha.times().value().exit.has_value());
    EXPECT_FALSE(hc.times().value().exit.has_value());
}

TEST(WaitForAny, LowestIndexWhenSeveralHaveEnded) {
    three_children k;
    auto &b = k.b, &c = k.c;
    const auto &ha = k.ha, &hb = k.hb, &hc = k.hc;
    if (!pidfds_supported(ha)) GTEST_SKIP() << "no pidfds on this kernel (Linux < 5.3)";
    c.start();
    b.start();
    c.wait_exited_unreaped();
    b.wait_exited_unreaped();
    const process* ps[] = {&ha, &hb, &hc};
    // Both have ended before the call: a zero timeout still finds them, and
    // the answer is the first in the list, as WaitForMultipleObjects gives.
    auto r = wait_for_any(ps, 0ns);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ(**r, 1u);
    // A reaped process still counts as ended (its pidfd stays readable).
    b.reap();
    c.reap();
    const process* reversed[] = {&hc, &hb, &ha};
    r = wait_for_any(reversed, 0ns);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ(**r, 0u);
}

TEST(WaitForAny, TimesOutWhileAllRun) {
    forked a([] { return 0; });
    forked b([] { return 0; });
    auto ha = process::open(a.pid()).value();
    auto hb = process::open(b.pid()).value();
    if (!pidfds_supported(ha)) GTEST_SKIP() << "no pidfds on this kernel (Linux < 5.3)";
    const process* ps[] = {&ha, &hb};

    auto r = wait_for_any(ps, 0ns);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->has_value()) << "a zero timeout polls: neither has ended";

    const auto t0 = steady_clock::now();
    r = wait_for_any(ps, 100ms);
    const auto waited = steady_clock::now() - t0;
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->has_value());
    EXPECT_GE(waited, 100ms) << "a timed-out wait never returns early";
    // A negative timeout is a poll, not an error.
    r = wait_for_any(ps, -1s);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->has_value());
    EXPECT_FALSE(ha.times().value().exit.has_value());
    EXPECT_FALSE(hb.times().value().exit.has_value());
}

TEST(WaitForAny, EmptyOrNullHandleIsAnError) {
    forked a([] { return 0; });
    auto ha = process::open(a.pid()).value();

    const process* with_null[] = {&ha, nullptr};
    auto r = wait_for_any(with_null, 0ns);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::invalid_handle);

    process empty;
    const process* with_empty[] = {&empty, &ha};
    r = wait_for_any(with_empty, 0ns);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::invalid_handle);

    // A moved-from handle is closed: an error, not a wait on whatever
    // descriptor number it once had.
    process moved = std::move(ha);
    const process* with_closed[] = {&moved, &ha};  // NOLINT(bugprone-use-after-move): the point of the test
    r = wait_for_any(with_closed, 20s);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::invalid_handle);
}

TEST(WaitForAny, NoHandlesIsAnErrorNotAnEndlessWait) {
    // WaitForMultipleObjects with nCount = 0 fails (ERROR_INVALID_PARAMETER);
    // with no timeout, waiting on nothing would never return.
    auto r = wait_for_any({}, std::nullopt);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::invalid_argument);
    r = wait_for_any({}, 0ns);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::invalid_argument);
}
