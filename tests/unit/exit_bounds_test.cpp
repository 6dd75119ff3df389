// SPDX-License-Identifier: MIT
// bound_exit: what an exit instant may claim from the evidence at hand.
#include <gtest/gtest.h>

#include "exit/bounds.hpp"

using namespace std::chrono_literals;
using proctimes::exit_source;
using proctimes::instant;
using proctimes::detail::bound_exit;
using proctimes::detail::exit_evidence;

namespace {

exit_evidence base() {
    exit_evidence e;
    e.creation = instant{1'700'000'000s};
    e.creation_tick = 10ms;
    e.observed = e.creation + 5s;
    return e;
}

}  // namespace

TEST(ExitBounds, ObservedLateSaysNoLaterThanAndHowEarly) {
    // A zombie first seen 5 s after its start, never seen alive, 300 ms of CPU.
    auto e = base();
    e.cpu = 300ms;
    const auto x = bound_exit(e);
    EXPECT_EQ(x.source, exit_source::observed);
    EXPECT_EQ(x.exit, e.observed);
    EXPECT_EQ(x.earliest, e.creation + 300ms) << "a thread cannot run longer than it lives";
    EXPECT_EQ(x.resolution, x.exit - x.earliest);
}

TEST(ExitBounds, AProcessMayHaveRunOnEveryCpuAtOnce) {
    auto e = base();
    e.cpu = 800ms;
    e.parallelism = 4;
    EXPECT_EQ(bound_exit(e).earliest, e.creation + 200ms);
    e.parallelism = 0;  // unknown: never divides by zero, counts as one
    EXPECT_EQ(bound_exit(e).earliest, e.creation + 800ms);
}

TEST(ExitBounds, TheLastSampleThatSawItAliveIsTheBestLowerBound) {
    auto e = base();
    e.cpu = 10ms;
    e.last_alive = e.observed - 50ms;
    const auto x = bound_exit(e);
    EXPECT_EQ(x.earliest, e.observed - 50ms);
    EXPECT_EQ(x.resolution, 50ms);
    e.last_alive = e.creation;  // an older sample than the CPU bound: the CPU bound wins
    EXPECT_EQ(bound_exit(e).earliest, e.creation + 10ms);
}

TEST(ExitBounds, AClockSteppedBackNeverPutsTheEndBeforeWhatIsKnown) {
    auto e = base();
    e.last_alive = e.observed + 2s;  // CLOCK_REALTIME stepped back between the two readings
    const auto x = bound_exit(e);
    EXPECT_EQ(x.exit, *e.last_alive);
    EXPECT_EQ(x.earliest, *e.last_alive);
    EXPECT_EQ(x.resolution, 0ns);
    EXPECT_GE(x.exit, e.creation);
}

TEST(ExitBounds, CpuChargedByTheTickProvesNoLifetime) {
    // Windows: a process that lived 400 ms charged 6 s (the caller's CPU
    // under Wine, or whole ticks): its end was still observed at the kernel's
    // exit time, and the CPU moves neither bound.
    auto e = base();
    e.observed = e.creation + 400ms;
    e.cpu = 6s;
    e.parallelism = 2;
    e.cpu_bounds_lifetime = false;
    const auto x = bound_exit(e);
    EXPECT_EQ(x.exit, e.observed) << "never later than it was observed";
    EXPECT_EQ(x.earliest, e.creation);
    EXPECT_EQ(x.resolution, 400ms);
    e.last_alive = e.creation + 300ms;
    EXPECT_EQ(bound_exit(e).earliest, *e.last_alive);
    EXPECT_EQ(bound_exit(e).exit, e.observed);
}

TEST(ExitBounds, NeverBeforeCreation) {
    auto e = base();
    e.observed = e.creation - 1s;
    const auto x = bound_exit(e);
    EXPECT_GE(x.earliest, e.creation);
    EXPECT_GE(x.exit, x.earliest);
}

TEST(ExitBounds, AnExitRecordGivesCreationPlusElapsed) {
    auto e = base();
    e.cpu = 300ms;
    e.last_alive = e.creation + 1s;
    e.recorded_elapsed = 1'234'567us;
    const auto x = bound_exit(e);
    EXPECT_EQ(x.source, exit_source::exit_record);
    EXPECT_EQ(x.exit, e.creation + 1'234'567us) << "exit - creation is the kernel's elapsed time";
    EXPECT_EQ(x.earliest, x.exit);
    EXPECT_EQ(x.resolution, 10ms) << "floored like creation: up to one tick later";
    // An observer that saw the end sooner than a tick after narrows it.
    e.observed = x.exit + 3ms;
    EXPECT_EQ(bound_exit(e).resolution, 3ms);
}
