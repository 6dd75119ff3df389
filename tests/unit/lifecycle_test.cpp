// SPDX-License-Identifier: MIT
// The task state machine (src/exit/lifecycle.hpp) driven by a fake sampler: no
// process, no clock, no /proc. Each test scripts what the "backend" sees.
#include "exit/lifecycle.hpp"

#include <gtest/gtest.h>

#include <deque>

#include "precision.hpp"

namespace {

using namespace proctimes;
using detail::task_lifecycle;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

const instant t0{seconds{1'700'000'000}};  // creation
constexpr nanoseconds tick{10'000'000};

// One scripted answer of sample().
struct step {
    result<task_times> r;
    bool dead = false;
};

class fake_sampler final : public detail::task_sampler {
public:
    std::deque<step> script;
    instant clock = t0 + seconds{1};          // now(): advances 1 ms per read
    std::deque<detail::exit_record> records;  // delivered on deliver_exit_records()
    task_lifecycle* life = nullptr;
    int samples = 0, delivers = 0, awaits = 0;

    result<task_times> sample(bool& dead) noexcept override {
        ++samples;
        if (script.empty()) return make_error_code(errc::no_such_process);  // gone
        step s = script.front();
        script.pop_front();
        dead = s.dead;
        return s.r;
    }
    void deliver_exit_records() noexcept override {
        ++delivers;
        while (!records.empty()) {
            life->offer_exit_record(records.front(), true);
            records.pop_front();
        }
    }
    void await_exit_record() noexcept override { ++awaits; }
    instant now() noexcept override {
        clock += milliseconds{1};
        return clock;
    }
};

// A live sample: `cpu` split in half, read at `at`.
task_times live(nanoseconds cpu, instant at, cpu_source src = cpu_source::cpu_clock_and_stat) {
    task_times t;
    t.creation = t0;
    t.kernel = cpu / 2;
    t.user = cpu - cpu / 2;
    t.precision = detail::precision_for(src, tick);
    t.sampled_at = at;
    return t;
}

struct TaskState : ::testing::Test {
    task_lifecycle life;
    fake_sampler s;
    void SetUp() override {
        life.set_facts({false, t0, tick, 4});
        s.life = &life;
    }
};

TEST_F(TaskState, RunningSampleIsLiveAndBracketsTheEnd) {
    s.script.push_back({live(milliseconds{20}, t0 + seconds{2})});
    auto r = life.query(s);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->state, task_state::running);
    EXPECT_FALSE(r->exit);
    EXPECT_EQ(r->precision.exit_source, exit_source::none);
    EXPECT_EQ(r->cpu(), milliseconds{20});
    EXPECT_EQ(life.state(), task_state::running);
    // last_alive is the clock read before the sample, not the sample's own time.
    ASSERT_TRUE(life.last_alive());
    EXPECT_EQ(*life.last_alive(), t0 + seconds{1} + milliseconds{1});
    EXPECT_EQ(s.delivers, 0);  // only a dead sample looks for exit records
}

TEST_F(TaskState, LastAliveNeverMovesBack) {
    s.script.push_back({live(milliseconds{1}, t0 + seconds{2})});
    ASSERT_TRUE(life.query(s));
    const instant first = *life.last_alive();
    s.clock = t0 + milliseconds{500};  // the wall clock stepped back
    s.script.push_back({live(milliseconds{2}, t0 + seconds{3})});
    ASSERT_TRUE(life.query(s));
    EXPECT_EQ(*life.last_alive(), first);
}

TEST_F(TaskState, ZombieSampleExitsAndTheFirstObserverStamps) {
    s.script.push_back({live(milliseconds{10}, t0 + seconds{2})});
    ASSERT_TRUE(life.query(s));
    const instant alive = *life.last_alive();
    const instant zombie_at = t0 + seconds{5};
    s.script.push_back({live(milliseconds{30}, zombie_at), true});
    auto r = life.query(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->state, task_state::exited);
    ASSERT_TRUE(r->exit);
    EXPECT_EQ(*r->exit, zombie_at);  // observed at the sample that found the zombie
    EXPECT_EQ(r->precision.exit_source, exit_source::observed);
    ASSERT_TRUE(r->exit_earliest);
    EXPECT_EQ(*r->exit_earliest, alive);  // the end came after the last live sample
    EXPECT_EQ(r->precision.exit_resolution, zombie_at - alive);
    EXPECT_EQ(s.delivers, 1);

    // A later observer (the monitor waking up, a waiter) never moves it.
    life.record_exit(s, t0 + seconds{9});
    EXPECT_EQ(*life.exit_instant(), zombie_at);
    s.script.push_back({live(milliseconds{30}, t0 + seconds{10}), true});
    auto again = life.query(s);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again->exit, zombie_at);
    EXPECT_EQ(again->state, task_state::exited);
}

TEST_F(TaskState, ExitEarliestIsAtLeastCpuSpreadOverParallelism) {
    // No live sample: the lower bound comes from CPU time / parallelism (4).
    s.script.push_back({live(seconds{8}, t0 + seconds{20}), true});
    auto r = life.query(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r->exit_earliest, t0 + seconds{2});
    EXPECT_LE(*r->exit_earliest, *r->exit);
}

TEST_F(TaskState, GoneUnwatchedWithoutStampIsAnError) {
    auto r = life.query(s);  // the script is empty: the task is gone
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(errc::no_such_process));
    EXPECT_EQ(life.state(), task_state::running);
    EXPECT_FALSE(life.exit_instant());
}

TEST_F(TaskState, OtherErrorsPassThroughUnchanged) {
    s.script.push_back({make_error_code(errc::malformed_data)});
    auto r = life.query(s);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(errc::malformed_data));
    EXPECT_EQ(life.state(), task_state::running);
}

TEST_F(TaskState, GoneWhileWatchedKeepsLastValuesAsPartial) {
    life.begin_watch(false, 0);
    s.script.push_back({live(milliseconds{40}, t0 + seconds{2})});
    ASSERT_TRUE(life.query(s));
    auto r = life.query(s);  // gone now, unread
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->state, task_state::exited_partial);
    EXPECT_EQ(r->cpu(), milliseconds{40});
    ASSERT_TRUE(r->exit);
    EXPECT_EQ(r->precision.exit_source, exit_source::observed);
    EXPECT_GE(*r->exit_earliest, *life.last_alive());
    EXPECT_EQ(s.awaits, 1);  // it asked for an exit record that might be on its way
}

TEST_F(TaskState, ExitRecordGivesFinalValuesAndTheInstant) {
    life.begin_watch(true, 0);
    s.script.push_back({live(milliseconds{10}, t0 + seconds{2})});
    ASSERT_TRUE(life.query(s));
    EXPECT_TRUE(life.record_expected(0));
    EXPECT_FALSE(life.record_expected(1));  // a lost burst since: not to be waited for
    detail::exit_record e;
    e.run = milliseconds{50};
    e.user_us = 30'000;
    e.kernel_us = 10'000;
    e.elapsed = seconds{3};
    s.records.push_back(e);
    const instant seen = t0 + seconds{4};
    life.record_exit(s, seen);  // gone unread; the record came
    EXPECT_FALSE(life.record_expected(0));
    EXPECT_EQ(life.state(), task_state::exited);
    auto r = life.query(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->state, task_state::exited);
    EXPECT_EQ(r->cpu(), milliseconds{50});
    EXPECT_EQ(r->user, nanoseconds{37'500'000});  // 3:1 split of the exact run time
    EXPECT_EQ(r->precision.source, cpu_source::exit_record);
    EXPECT_EQ(r->precision.exit_source, exit_source::exit_record);
    EXPECT_EQ(*r->exit, t0 + seconds{3});  // creation + elapsed
    EXPECT_EQ(r->sampled_at, *r->exit);
    EXPECT_EQ(r->precision.exit_resolution, tick);
}

TEST_F(TaskState, FirstUsableRecordWins) {
    detail::exit_record a, b;
    a.elapsed = seconds{1};
    b.elapsed = seconds{7};
    life.offer_exit_record(a, false);  // not this task's (e.g. a thread's, for a process)
    life.offer_exit_record(b, true);
    a.elapsed = seconds{2};
    life.offer_exit_record(a, true);
    life.record_exit(s, t0 + seconds{9});
    EXPECT_EQ(*life.exit_instant(), t0 + seconds{7});
}

TEST_F(TaskState, WaitRusageBeatsZombieTicks) {
    s.script.push_back({live(milliseconds{30}, t0 + seconds{2}), true});
    life.record_exit(s, t0 + seconds{2});
    task_times w = live(milliseconds{30}, t0 + seconds{2}, cpu_source::wait_rusage);
    w.kernel = microseconds{12'345};
    w.user = milliseconds{30} - w.kernel;
    life.child_reaped({0, 0, false});
    life.adopt_wait_values(w);
    ASSERT_TRUE(w.exit);  // filled in from the stamp
    EXPECT_EQ(*w.exit, t0 + seconds{2});
    // A query that still finds the zombie (a sibling wait) answers the wait's values.
    s.script.push_back({live(milliseconds{30}, t0 + seconds{3}), true});
    auto r = life.query(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->precision.source, cpu_source::wait_rusage);
    EXPECT_EQ(r->kernel, microseconds{12'345});
    EXPECT_EQ(*r->exit, t0 + seconds{2});
}

TEST_F(TaskState, ZombieStatusKeptUnlessLeaderExitedEarly) {
    life.note_zombie_status({3, 0, false});
    life.note_zombie_status({9, 0, false});  // the first seen stays
    EXPECT_EQ(life.status()->code, 3);

    task_lifecycle other;
    other.note_leader_exited_early();
    other.note_zombie_status({7, 0, false});
    EXPECT_FALSE(other.status());
}

TEST_F(TaskState, ExitStatusNowAnswers) {
    s.script.push_back({live(milliseconds{1}, t0 + seconds{2})});
    auto running = life.exit_status_now(s);
    ASSERT_TRUE(running);
    EXPECT_FALSE(*running);               // runs: no status yet
    auto gone = life.exit_status_now(s);  // gone, unwatched, never seen
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error(), make_error_code(errc::not_supported));
    life.child_reaped({0, 15, false});
    auto known = life.exit_status_now(s);
    ASSERT_TRUE(known);
    ASSERT_TRUE(*known);
    EXPECT_EQ((*known)->signal, 15);
}

TEST_F(TaskState, ReapPlan) {
    EXPECT_EQ(life.request_reap(), detail::reap_plan::watch_again);  // not watched
    life.begin_watch(false, 0);
    EXPECT_EQ(life.request_reap(), detail::reap_plan::on_exit);
    EXPECT_TRUE(life.end_watch());  // the monitor reaps it, once
    EXPECT_FALSE(life.watched());
    EXPECT_EQ(life.request_reap(), detail::reap_plan::none);
    EXPECT_FALSE(life.end_watch());

    task_lifecycle waited;
    waited.child_reaped({0, 0, false});  // its parent's wait reaped it
    EXPECT_EQ(waited.request_reap(), detail::reap_plan::none);
}

TEST_F(TaskState, ThreadGoneErrorAndParallelismOne) {
    task_lifecycle t;
    t.set_facts({true, t0, tick, 64});  // a thread runs on one CPU at a time
    fake_sampler ts;
    ts.life = &t;
    ts.script.push_back({make_error_code(errc::no_such_thread)});
    auto r = t.query(ts);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(errc::no_such_thread));
    ts.script.push_back({live(seconds{2}, t0 + seconds{10}), true});
    auto z = t.query(ts);
    ASSERT_TRUE(z);
    EXPECT_EQ(*z->exit_earliest, t0 + seconds{2});
}

TEST(Precision, OneTable) {
    using detail::precision_for;
    EXPECT_EQ(precision_for(cpu_source::stat_ticks, tick).total_resolution, tick);
    EXPECT_EQ(precision_for(cpu_source::cpu_clock_and_stat, tick).total_resolution, nanoseconds{1});
    EXPECT_EQ(precision_for(cpu_source::schedstat_and_stat, tick).resolution, tick);
    EXPECT_EQ(precision_for(cpu_source::rusage, tick).resolution, microseconds{1});
    EXPECT_EQ(precision_for(cpu_source::wait_rusage, tick).creation_resolution, tick);
    EXPECT_EQ(precision_for(cpu_source::exit_record, tick).source, cpu_source::exit_record);
    EXPECT_EQ(precision_for(cpu_source::thread_clock_and_rusage, tick).exit_source, exit_source::none);
}

}  // namespace
