// SPDX-License-Identifier: MIT
// Exit instants say what they are: an instant stamped when an end was seen is
// "no later than", with the earliest the end can have been; never a late
// observation passed off as the end (docs/EXIT.md, "Exit instants").
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <poll.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;
using testing_helpers::forked;

namespace {

// A child that sends CLOCK_REALTIME as its last act, then exits; the test
// learns the end lies between that instant and its own wake-up on the zombie.
struct ended_child {
    int p[2] = {-1, -1};
    std::optional<forked> c;
    system_clock::time_point last_alive{}, seen_dead{};

    ended_child() {
        if (::pipe(p) != 0) std::abort();
        c.emplace([this] {
            const auto now = system_clock::now().time_since_epoch().count();
            if (::write(p[1], &now, sizeof now) != static_cast<ssize_t>(sizeof now)) return 3;
            return 0;
        });
    }
    ~ended_child() {
        ::close(p[0]);
        ::close(p[1]);
    }
    // Lets it run to its end and waits until it is a zombie (not reaped).
    void end() {
        c->start();
        system_clock::rep v = 0;
        pollfd pf{p[0], POLLIN, 0};
        ASSERT_EQ(::poll(&pf, 1, 20'000), 1);
        ASSERT_EQ(::read(p[0], &v, sizeof v), static_cast<ssize_t>(sizeof v));
        last_alive = system_clock::time_point{system_clock::duration{v}};
        c->wait_exited_unreaped();
        seen_dead = system_clock::now();
    }
};

// The promise of an observed instant: the true end, somewhere in
// [last_alive, seen_dead], lies in [exit_earliest, exit].
void expect_honest(const task_times& t, const ended_child& ch) {
    ASSERT_TRUE(t.exit.has_value());
    ASSERT_TRUE(t.exit_earliest.has_value());
    EXPECT_LE(*t.exit_earliest, ch.seen_dead) << "the earliest bound may not be after the end";
    EXPECT_GE(*t.exit, ch.last_alive) << "no later than: never before the end";
    EXPECT_LE(*t.exit_earliest, *t.exit);
    EXPECT_GE(*t.exit_earliest, t.creation);
    EXPECT_EQ(t.precision.exit_resolution, *t.exit - *t.exit_earliest);
}

}  // namespace

TEST(ExitInstant, AZombieOpenedLateIsObservedNoLaterThanAndSaysHowLate) {
    ended_child ch;
    ch.end();
    std::this_thread::sleep_for(300ms);  // a zombie for 300 ms before anyone looks
    const auto opened = system_clock::now();
    auto h = process::open(ch.c->pid()).value();
    const auto t = h.times().value();
    EXPECT_EQ(t.state, task_state::exited);
    EXPECT_EQ(t.precision.exit_source, exit_source::observed);
    expect_honest(t, ch);
    // Stamped when seen, 300 ms after the end: the stated interval covers it.
    EXPECT_GE(*t.exit, opened);
    EXPECT_GE(t.precision.exit_resolution, *t.exit - ch.seen_dead);
    EXPECT_GE(t.precision.exit_resolution, 300ms);
    // Stamped once: the same answer after the reaping.
    ch.c->reap();
    const auto after = h.times().value();
    EXPECT_EQ(after.exit, t.exit);
    EXPECT_EQ(after.exit_earliest, t.exit_earliest);
    EXPECT_EQ(after.precision.exit_source, exit_source::observed);
}

TEST(ExitInstant, AZombieIsStampedEvenWithoutTheMonitor) {
    // Without the monitor nobody watches the handle; the query that finds the
    // zombie still knows it ended no later than now. Before, exit stayed empty
    // while the state said exited (and GetProcessTimes gave 0).
    set_exit_monitor_enabled(false);
    ended_child ch;
    ch.end();
    auto h = process::open(ch.c->pid());
    set_exit_monitor_enabled(true);
    ASSERT_TRUE(h) << h.error().message();
    const auto t = h->times().value();
    EXPECT_EQ(t.state, task_state::exited);
    EXPECT_EQ(t.precision.exit_source, exit_source::observed);
    expect_honest(t, ch);
}

TEST(ExitInstant, ASampleThatSawItAliveBoundsTheEndFromBelow) {
    ended_child ch;
    auto h = process::open(ch.c->pid()).value();
    const auto before_sample = system_clock::now();
    ASSERT_EQ(h.times().value().state, task_state::running);
    ch.end();
    ASSERT_TRUE(wait_for_exit(h, 20s).value());
    const auto t = h.times().value();
    expect_honest(t, ch);
    if (t.precision.exit_source == exit_source::observed) {
        EXPECT_GE(*t.exit_earliest, before_sample) << "it was alive when that sample began";
    } else {
        EXPECT_EQ(t.precision.exit_source, exit_source::exit_record);
    }
}

TEST(ExitInstant, RunningTasksHaveNoExitFields) {
    auto h = process::open(::getppid()).value();
    const auto t = h.times().value();
    EXPECT_FALSE(t.exit);
    EXPECT_FALSE(t.exit_earliest);
    EXPECT_EQ(t.precision.exit_source, exit_source::none);
    EXPECT_EQ(t.precision.exit_resolution, 0ns);
    EXPECT_EQ(to_string(exit_source::observed), "observed");
    EXPECT_EQ(to_string(exit_source::exit_record), "exit_record");
}
