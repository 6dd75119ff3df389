// SPDX-License-Identifier: MIT
// The lifecycle's states (src/exit/lifecycle.hpp): each transition of
// running -> ended -> reaped (and running -> reaped), and the transitions the
// machine refuses — nothing leaves ended or reaped, nothing goes back to
// running, a second end or reaping changes nothing — driven by a scripted
// sampler (no process, no clock).
#include <gtest/gtest.h>

#include <deque>

#include "exit/lifecycle.hpp"
#include "precision.hpp"

namespace {

using namespace proctimes;
using detail::task_lifecycle;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

const instant t0{seconds{1'800'000'000}};
constexpr nanoseconds tick{10'000'000};

struct scripted final : detail::task_sampler {
    struct step {
        result<task_times> r;
        bool dead = false;
    };
    std::deque<step> script;  // empty: the task is gone
    instant clock = t0 + seconds{1};
    int awaits = 0;

    result<task_times> sample(bool& dead) noexcept override {
        if (script.empty()) return make_error_code(errc::no_such_process);
        step s = script.front();
        script.pop_front();
        dead = s.dead;
        return s.r;
    }
    void deliver_exit_records() noexcept override {}
    void await_exit_record() noexcept override { ++awaits; }
    instant now() noexcept override { return clock += milliseconds{1}; }
};

task_times sample_at(nanoseconds cpu, instant at, cpu_source src = cpu_source::cpu_clock_and_stat) {
    task_times t;
    t.creation = t0;
    t.kernel = cpu / 4;
    t.user = cpu - cpu / 4;
    t.precision = detail::precision_for(src, tick);
    t.sampled_at = at;
    return t;
}

struct LifecyclePhase : ::testing::Test {
    task_lifecycle life;
    scripted s;
    void SetUp() override { life.set_facts({false, t0, tick, 2}); }

    void alive(nanoseconds cpu, instant at) {
        s.script.push_back({sample_at(cpu, at)});
        ASSERT_TRUE(life.query(s));
    }
    void zombie(nanoseconds cpu, instant at) { s.script.push_back({sample_at(cpu, at), true}); }
};

}  // namespace

TEST_F(LifecyclePhase, StartsRunningWithNothingRecorded) {
    EXPECT_EQ(life.state(), task_state::running);
    EXPECT_FALSE(life.reaped());
    EXPECT_FALSE(life.exit_instant());
    EXPECT_FALSE(life.last());
    EXPECT_FALSE(life.status());
}

TEST_F(LifecyclePhase, RunningToEndedByAZombieSample) {
    alive(milliseconds{5}, t0 + seconds{2});
    zombie(milliseconds{9}, t0 + seconds{3});
    auto r = life.query(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->state, task_state::exited);
    EXPECT_EQ(life.state(), task_state::exited);
    EXPECT_FALSE(life.reaped());
    EXPECT_EQ(life.exit_instant(), t0 + seconds{3});
    ASSERT_TRUE(life.last());
    EXPECT_EQ(life.last()->cpu(), milliseconds{9});
    EXPECT_TRUE(life.last_alive());  // kept from the running state: it bounds the end
}

TEST_F(LifecyclePhase, RunningToEndedPartialWhenGoneUnread) {
    alive(milliseconds{5}, t0 + seconds{2});
    life.record_exit(s, t0 + seconds{4});  // gone: nothing to read, no record
    EXPECT_EQ(life.state(), task_state::exited_partial);
    ASSERT_TRUE(life.last());
    EXPECT_EQ(life.last()->cpu(), milliseconds{5});
    EXPECT_EQ(life.last()->state, task_state::exited_partial);
    EXPECT_EQ(life.exit_instant(), t0 + seconds{4});
}

TEST_F(LifecyclePhase, EndedToReapedKeepsTheEnd) {
    zombie(milliseconds{7}, t0 + seconds{3});
    life.record_exit(s, t0 + seconds{3});
    life.child_reaped({4, 0, false});
    EXPECT_TRUE(life.reaped());
    EXPECT_EQ(life.state(), task_state::exited);
    EXPECT_EQ(life.exit_instant(), t0 + seconds{3});
    EXPECT_EQ(life.status()->code, 4);
    auto r = life.query(s);  // released: what was recorded
    ASSERT_TRUE(r);
    EXPECT_EQ(r->cpu(), milliseconds{7});
    EXPECT_EQ(r->state, task_state::exited);
}

TEST_F(LifecyclePhase, RunningToReapedKeepsTheLastValuesAsPartial) {
    alive(milliseconds{5}, t0 + seconds{2});
    life.child_reaped({0, 9, false});
    EXPECT_TRUE(life.reaped());
    EXPECT_EQ(life.state(), task_state::exited_partial);
    EXPECT_FALSE(life.exit_instant());  // nobody observed the end
    // A later observer stamps it once.
    life.record_exit(s, t0 + seconds{6});
    EXPECT_EQ(life.exit_instant(), t0 + seconds{6});
    life.record_exit(s, t0 + seconds{8});
    EXPECT_EQ(life.exit_instant(), t0 + seconds{6});
}

TEST_F(LifecyclePhase, EndedToReapedByTheMonitorOnRequest) {
    life.begin_watch(false, 0);
    EXPECT_EQ(life.request_reap(), detail::reap_plan::on_exit);
    zombie(milliseconds{3}, t0 + seconds{2});
    life.record_exit(s, t0 + seconds{2});
    EXPECT_FALSE(life.reaped());
    EXPECT_TRUE(life.end_watch());  // the caller reaps it
    EXPECT_TRUE(life.reaped());
    EXPECT_EQ(life.state(), task_state::exited);
}

TEST_F(LifecyclePhase, EndWatchWithoutARequestDoesNotReap) {
    life.begin_watch(false, 0);
    zombie(milliseconds{3}, t0 + seconds{2});
    life.record_exit(s, t0 + seconds{2});
    EXPECT_FALSE(life.end_watch());
    EXPECT_FALSE(life.reaped());
    EXPECT_FALSE(life.watched());
}

TEST_F(LifecyclePhase, RefusedNothingGoesBackToRunning) {
    zombie(milliseconds{7}, t0 + seconds{3});
    ASSERT_TRUE(life.query(s));
    const auto alive_before = life.last_alive();
    // A sample that says "alive" after the end (it cannot be) changes neither
    // the state nor the bound of the end.
    s.script.push_back({sample_at(milliseconds{8}, t0 + seconds{4})});
    auto r = life.query(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->state, task_state::exited);
    EXPECT_EQ(life.state(), task_state::exited);
    EXPECT_EQ(life.last_alive(), alive_before);
    EXPECT_EQ(life.exit_instant(), t0 + seconds{3});
}

TEST_F(LifecyclePhase, RefusedASecondEndChangesNothing) {
    zombie(milliseconds{7}, t0 + seconds{3});
    life.record_exit(s, t0 + seconds{3});
    zombie(milliseconds{50}, t0 + seconds{5});
    life.record_exit(s, t0 + seconds{5});
    EXPECT_EQ(life.last()->cpu(), milliseconds{7});
    EXPECT_EQ(life.exit_instant(), t0 + seconds{3});
    EXPECT_EQ(life.state(), task_state::exited);
}

TEST_F(LifecyclePhase, RefusedASecondReapingChangesNothing) {
    life.child_reaped({1, 0, false});
    EXPECT_TRUE(life.reaped());
    EXPECT_EQ(life.request_reap(), detail::reap_plan::none);  // nobody is left to reap it
    life.begin_watch(false, 0);
    EXPECT_FALSE(life.end_watch());  // never reaped twice
    EXPECT_TRUE(life.reaped());
}

TEST_F(LifecyclePhase, RefusedFinalValuesWaitForTheEnd) {
    life.begin_watch(true, 0, true);
    life.offer_final_values({nanoseconds{11}, nanoseconds{22}, t0 + seconds{2}, exit_status{5, 0, false}});
    // Running: they are kept, not applied; a live sample answers live values.
    s.script.push_back({sample_at(milliseconds{4}, t0 + seconds{1})});
    auto r = life.query(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->state, task_state::running);
    EXPECT_EQ(r->cpu(), milliseconds{4});
    EXPECT_FALSE(life.exit_instant());
    EXPECT_FALSE(life.status());
    // Its end applies them: exact values, instant and status.
    life.record_exit(s, t0 + seconds{3});
    EXPECT_EQ(life.state(), task_state::exited);
    EXPECT_EQ(life.last()->cpu(), nanoseconds{33});
    EXPECT_EQ(life.exit_instant(), t0 + seconds{2});
    EXPECT_EQ(life.status()->code, 5);
}

TEST_F(LifecyclePhase, ExactChannelOnlyWithRecords) {
    life.begin_watch(false, 0, true);  // "exact" without a listener is no channel at all
    EXPECT_FALSE(life.awaits_final_values());
    EXPECT_FALSE(life.record_expected(0));
    life.begin_watch(true, 3);  // taskstats, 3 losses at the watch
    EXPECT_FALSE(life.awaits_final_values());
    EXPECT_TRUE(life.record_expected(3));
    EXPECT_FALSE(life.record_expected(4));
}

TEST_F(LifecyclePhase, AForeignRecordStopsTheWaitButIsNotKept) {
    life.begin_watch(true, 0);
    detail::exit_record other;
    other.run = milliseconds{999};
    other.elapsed = seconds{1};
    life.offer_exit_record(other, false);  // the id's record, not this task's
    EXPECT_FALSE(life.record_expected(0));
    life.record_exit(s, t0 + seconds{5});  // gone unread
    EXPECT_EQ(life.state(), task_state::exited_partial);
    EXPECT_EQ(life.exit_instant(), t0 + seconds{5});  // observed, not creation + the foreign elapsed
}
