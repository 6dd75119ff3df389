// SPDX-License-Identifier: MIT
// The task state machine's eBPF final values (task_lifecycle::
// offer_final_values): exact CPU and exit instant replace an observer's, and
// a query that finds the task released asks for them once. A fake sampler:
// no process, no privileges needed.
#include <gtest/gtest.h>

#include <deque>
#include <optional>

#include "exit/lifecycle.hpp"
#include "precision.hpp"

namespace {

using namespace proctimes;
using namespace std::chrono_literals;
using detail::task_lifecycle;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

const instant t0{seconds{1'700'000'000}};
constexpr nanoseconds tick{10'000'000};

class fake final : public detail::task_sampler {
public:
    std::deque<std::pair<result<task_times>, bool>> script;  // (sample, dead)
    instant clock = t0 + seconds{1};
    task_lifecycle* life = nullptr;
    std::optional<task_lifecycle::final_values> arrives;  // offered by await_exit_record()
    int awaits = 0;

    result<task_times> sample(bool& dead) noexcept override {
        if (script.empty()) return make_error_code(errc::no_such_process);
        auto s = script.front();
        script.pop_front();
        dead = s.second;
        return s.first;
    }
    void deliver_exit_records() noexcept override {}
    void await_exit_record() noexcept override {
        ++awaits;
        if (arrives) life->offer_final_values(*arrives);
    }
    instant now() noexcept override { return clock += milliseconds{1}; }
};

task_times live(nanoseconds cpu, instant at) {
    task_times t;
    t.creation = t0;
    t.kernel = cpu / 2;
    t.user = cpu - cpu / 2;
    t.precision = detail::precision_for(cpu_source::cpu_clock_and_stat, tick);
    t.sampled_at = at;
    return t;
}

struct FinalValues : ::testing::Test {
    task_lifecycle life;
    fake s;
    void SetUp() override {
        life.set_facts({false, t0, tick, 1});
        s.life = &life;
    }
};

}  // namespace

TEST_F(FinalValues, ReplaceTheZombiesValuesAndTheObservedStamp) {
    life.begin_watch(true, 0, true);
    s.script.push_back({live(100ms, t0 + seconds{1}), false});
    ASSERT_TRUE(life.query(s));
    // The monitor reads the zombie and stamps what it observed.
    s.script.push_back({live(120ms, t0 + seconds{2}), true});
    life.record_exit(s, t0 + seconds{2});
    EXPECT_EQ(life.exit_instant(), t0 + seconds{2});
    EXPECT_TRUE(life.awaits_final_values());
    // Released: the query waits once for the eBPF record, which has the exact
    // values and instant.
    s.arrives = task_lifecycle::final_values{nanoseconds{40'000'001}, nanoseconds{80'000'002}, t0 + milliseconds{1500},
                                             exit_status{}};
    auto r = life.query(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(s.awaits, 1);
    EXPECT_FALSE(life.awaits_final_values());
    EXPECT_EQ(r->state, task_state::exited);
    EXPECT_EQ(r->precision.source, cpu_source::bpf_exit);
    EXPECT_EQ(r->precision.total_resolution, nanoseconds{1});
    EXPECT_EQ(r->cpu(), nanoseconds{120'000'003});
    EXPECT_EQ(r->kernel, nanoseconds{40'000'001});
    ASSERT_TRUE(r->exit && r->exit_earliest);
    EXPECT_EQ(*r->exit, t0 + milliseconds{1500});
    EXPECT_EQ(*r->exit_earliest, *r->exit);
    EXPECT_EQ(r->precision.exit_source, exit_source::bpf_exit);
    EXPECT_EQ(r->sampled_at, *r->exit);
    // Final: later queries answer the same without waiting again.
    auto again = life.query(s);
    ASSERT_TRUE(again);
    EXPECT_EQ(s.awaits, 1);
    EXPECT_EQ(again->cpu(), r->cpu());
}

TEST_F(FinalValues, GoneUnreadTakesThemAtTheExit) {
    life.begin_watch(true, 0, true);
    s.script.push_back({live(10ms, t0 + seconds{1}), false});
    ASSERT_TRUE(life.query(s));
    s.arrives = task_lifecycle::final_values{nanoseconds{5}, nanoseconds{30'000'000}, t0 + seconds{3}, std::nullopt};
    life.record_exit(s, t0 + seconds{4});  // gone unread: awaits, gets them
    auto r = life.query(s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->state, task_state::exited);
    EXPECT_EQ(r->precision.source, cpu_source::bpf_exit);
    EXPECT_EQ(r->cpu(), nanoseconds{30'000'005});
    EXPECT_EQ(r->exit, t0 + seconds{3});
}

TEST_F(FinalValues, NoneComingLeavesTheObserversValuesAndWaitsOnce) {
    life.begin_watch(true, 0, true);
    s.script.push_back({live(10ms, t0 + seconds{1}), false});
    ASSERT_TRUE(life.query(s));
    s.script.push_back({live(20ms, t0 + seconds{2}), true});
    life.record_exit(s, t0 + seconds{2});
    for (int i = 0; i < 3; ++i) {
        auto r = life.query(s);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->cpu(), 20ms);
        EXPECT_NE(r->precision.source, cpu_source::bpf_exit);
        EXPECT_EQ(r->precision.exit_source, exit_source::observed);
    }
    EXPECT_EQ(s.awaits, 1) << "a lost end does not slow every query";
}

TEST_F(FinalValues, TaskstatsWatchNeverWaitsForThem) {
    life.begin_watch(true, 0);  // the taskstats listener
    s.script.push_back({live(20ms, t0 + seconds{2}), true});
    life.record_exit(s, t0 + seconds{2});
    ASSERT_TRUE(life.query(s));
    EXPECT_EQ(s.awaits, 0);
    EXPECT_FALSE(life.awaits_final_values());
}
