// SPDX-License-Identifier: MIT
// snapshot_options::workers beyond what the machine can run: the walk is cut
// to four walkers per usable CPU (at most 64) instead of allocating a thread
// and a buffer per requested walker.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include <sched.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"

using namespace proctimes;

namespace {

unsigned usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return static_cast<unsigned>(CPU_COUNT(&set));
}

}  // namespace

TEST(SnapshotWorkers, AHugeRequestIsCut) {
    const unsigned cap = std::min(4 * usable_cpus(), 64u);
    for (const unsigned asked : {1u << 31, std::numeric_limits<unsigned>::max(), 65u, cap + 1}) {
        snapshot_options o;
        o.source = snapshot_source::procfs;
        o.threads = true;
        o.workers = asked;
        const auto t0 = std::chrono::steady_clock::now();
        auto s = take_snapshot(o);
        const auto took = std::chrono::steady_clock::now() - t0;
        ASSERT_TRUE(s) << asked << " workers: " << s.error().message();
        EXPECT_GE(s->workers, 1u);
        EXPECT_LE(s->workers, cap) << asked << " workers asked";
        EXPECT_NE(s->find(::getpid()), nullptr);
        EXPECT_LT(took, std::chrono::seconds{30});
    }
    // A request within the cap is what runs (every thread starts here).
    snapshot_options o;
    o.source = snapshot_source::procfs;
    o.workers = std::min(cap, 2u);
    auto s = take_snapshot(o);
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->workers, o.workers);
}

// A snapshotter keeps its walkers' buffers between takes: with a huge request
// it keeps at most the cap's.
TEST(SnapshotWorkers, ASnapshotterWithAHugeRequestTakesAgain) {
    snapshot_options o;
    o.source = snapshot_source::procfs;
    o.workers = 1u << 31;
    auto s = snapshotter::open(o);
    ASSERT_TRUE(s) << s.error().message();
    for (int i = 0; i < 3; ++i) {
        auto snap = s->take();
        ASSERT_TRUE(snap) << snap.error().message();
        EXPECT_LE(snap->workers, std::min(4 * usable_cpus(), 64u));
    }
}
