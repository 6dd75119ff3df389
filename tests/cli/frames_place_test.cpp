// SPDX-License-Identifier: MIT
// Which frame each end read from the exit stream is placed in
// (frames::place_ends, tools/proctimes/frames/exits.cpp), with made-up walks
// and records: by what the two walks saw of its process, never by when its
// record came.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "frames/frames.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"

namespace {

using namespace std::chrono_literals;
using proctimes::ended_task;
using proctimes::snapshot;
using std::chrono::nanoseconds;
namespace frames = proctimes::cli::frames;

nanoseconds tick() {
    const auto hz = proctimes::clock_ticks_per_second();
    return nanoseconds{hz > 0 ? 1'000'000'000 / hz : 10'000'000};
}

std::uint64_t ticks_of(nanoseconds since_boot) { return static_cast<std::uint64_t>(since_boot / tick()); }

struct listed_process {
    proctimes::pid_t pid;
    nanoseconds start;
};

// A walk stamped at `at` that listed these processes (in pid order).
snapshot walk(nanoseconds at, std::initializer_list<listed_process> ps) {
    snapshot s;
    s.since_boot = at;
    for (const auto& p : ps) {
        proctimes::snapshot_process sp;
        sp.identity.id = p.pid;
        sp.identity.start_ticks = ticks_of(p.start);
        s.processes.push_back(sp);
    }
    return s;
}

// The end of a one-thread process, as the eBPF stream gives it.
ended_task end_of(proctimes::pid_t pid, nanoseconds start, nanoseconds received, nanoseconds cpu) {
    ended_task e;
    e.tid = e.pid = pid;
    e.parent_pid = 1;
    e.exact = true;
    e.process_ended = e.whole_process = true;
    e.start_ticks = ticks_of(start);
    e.received_since_boot = received;
    e.elapsed = received - start;
    e.user = e.process_user = cpu;
    return e;
}

nanoseconds estimated_start(const ended_task& e) { return e.received_since_boot - e.elapsed; }

bool has(const std::vector<ended_task>& v, proctimes::pid_t pid) {
    for (const auto& e : v)
        if (e.pid == pid) return true;
    return false;
}

}  // namespace

// A process begun after the second walk and ended while the frame waited for
// late ends (the whole wait when an end was lost) used its CPU after the
// interval: it is the next frame's, not this one's. Placed in this one, a
// frame waiting 250 ms in a build counted ~10 % of the machine's CPU from
// the next interval, and the next frame as much too little.
TEST(FramesPlaceEnds, AnEndBegunAfterTheSecondWalkIsTheNextFrames) {
    const auto before = walk(100s, {{40, 50s}});
    const auto after = walk(101s, {{40, 50s}});
    const auto next = walk(102s, {{40, 50s}});
    std::vector<ended_task> pending{end_of(500, 101s + 40ms, 101s + 200ms, 17ms)};
    auto placed = frames::place_ends(pending, before, after, false);
    EXPECT_TRUE(placed.frame.empty());
    EXPECT_TRUE(placed.earlier.empty());
    ASSERT_EQ(pending.size(), 1u);
    placed = frames::place_ends(pending, after, next, false);
    ASSERT_EQ(placed.frame.size(), 1u);
    EXPECT_EQ(placed.frame[0].pid, 500);
    EXPECT_EQ(placed.frame[0].received_since_boot, 101s + 200ms) << "inside its own interval: left as it came";
    EXPECT_TRUE(pending.empty());
}

// The ends that are this frame's stay this frame's, however late they came:
// a process the first walk listed and the second did not; one begun and ended
// between the walks; and (eBPF) one whose record came after the second walk.
TEST(FramesPlaceEnds, EndsBetweenTheWalksAreThisFramesWhenEverTheyCame) {
    const auto before = walk(100s, {{40, 50s}, {41, 99s}});
    const auto after = walk(101s, {{40, 50s}});
    std::vector<ended_task> pending{end_of(41, 99s, 101s + 150ms, 300ms), end_of(42, 100s + 300ms, 100s + 400ms, 20ms),
                                    end_of(43, 100s + 990ms, 101s + 240ms, 5ms)};
    const auto placed = frames::place_ends(pending, before, after, false);
    EXPECT_TRUE(pending.empty());
    ASSERT_EQ(placed.frame.size(), 3u);
    for (const auto& e : placed.frame) {
        EXPECT_GT(e.received_since_boot, before.since_boot) << e.pid;
        EXPECT_LE(e.received_since_boot, after.since_boot) << e.pid;
        // The start the record gives is kept: received - elapsed.
        EXPECT_EQ(ticks_of(e.received_since_boot - e.elapsed), e.start_ticks) << e.pid;
    }
}

// A process the second walk still listed ended after that walk read it: the
// next frame's, where the second walk is its reading. One begun before the
// first walk that the first walk did not list ended before it: too late for
// its frame, listed in this one with nothing used in this interval.
TEST(FramesPlaceEnds, EndsOfTheNextFrameAndOfAnEarlierOne) {
    const auto before = walk(100s, {{40, 50s}});
    const auto after = walk(101s, {{40, 50s}, {44, 100s + 500ms}});
    std::vector<ended_task> pending{end_of(44, 100s + 500ms, 101s + 100ms, 30ms), end_of(45, 90s, 100s + 10ms, 8ms)};
    const auto placed = frames::place_ends(pending, before, after, false);
    EXPECT_TRUE(placed.frame.empty());
    ASSERT_EQ(pending.size(), 1u);
    EXPECT_EQ(pending[0].pid, 44);
    ASSERT_EQ(placed.earlier.size(), 1u);
    EXPECT_EQ(placed.earlier[0].pid, 45);
    EXPECT_EQ(placed.earlier[0].final_user, 8ms);
    // Before the first frame, such an end is listed nowhere.
    std::vector<ended_task> first{end_of(45, 90s, 100s + 10ms, 8ms)};
    const auto none = frames::place_ends(first, before, after, true);
    EXPECT_TRUE(none.frame.empty());
    EXPECT_TRUE(none.earlier.empty());
    EXPECT_TRUE(first.empty());
    EXPECT_FALSE(has(placed.frame, 45));
}

// taskstats ends a process with its last thread's record, whose elapsed time
// is that thread's: a thread started 30 ms after the process (as
// ThreadSanitizer's is) dates the process 3 ticks late. The leader's record,
// which came just before, gives its start: a process the second walk listed
// (as a zombie, say: ended, not yet reaped) keeps its end for the next frame,
// where the first walk lists it, and its leader's record goes with it; its
// other threads' records stay in the frame they ended in.
TEST(FramesPlaceEnds, ATaskstatsEndIsDatedByTheEarliestOfItsLifesRecords) {
    const nanoseconds start = 100s + 200ms;
    const auto before = walk(100s, {{40, 50s}});
    const auto after = walk(101s, {{40, 50s}, {60, start}});
    const auto next = walk(102s, {{40, 50s}});
    const auto thread_end = [](proctimes::pid_t tid, nanoseconds thread_start, nanoseconds received) {
        ended_task e;
        e.tid = tid;
        e.pid = 60;
        e.parent_pid = 1;
        e.received_since_boot = received;
        e.elapsed = received - thread_start;
        e.user = 2ms;
        return e;
    };
    // A thread of the process, its leader, and its last thread (the end).
    std::vector<ended_task> pending{thread_end(62, start + 30ms, 100s + 260ms), thread_end(60, start, 100s + 261ms),
                                    thread_end(61, start + 30ms, 100s + 262ms)};
    pending.back().process_ended = true;
    ASSERT_GT((estimated_start(pending.back()) - start) / tick(), 1) << "the end alone dates it late";
    auto placed = frames::place_ends(pending, before, after, false);
    ASSERT_EQ(pending.size(), 2u) << "its end waits for the frame where the second walk is its reading";
    EXPECT_EQ(pending[0].tid, 60);
    EXPECT_EQ(pending[1].tid, 61);
    ASSERT_EQ(placed.frame.size(), 1u) << "the other thread's record is this frame's";
    EXPECT_EQ(placed.frame[0].tid, 62);
    EXPECT_TRUE(placed.earlier.empty());
    // Next frame: listed by its first walk, not by its second: this frame's,
    // not an end that came too late for an earlier one.
    placed = frames::place_ends(pending, after, next, false);
    EXPECT_TRUE(pending.empty());
    ASSERT_EQ(placed.frame.size(), 2u);
    EXPECT_EQ(placed.frame[0].tid, 60);
    EXPECT_EQ(placed.frame[1].tid, 61);
    EXPECT_TRUE(placed.earlier.empty());
}
