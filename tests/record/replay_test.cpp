// SPDX-License-Identifier: MIT
// Recorded history as a frame feed: placed at a time, stepped back and
// forth, held at the ends, and following a recorder that goes on writing.
#include "record/replay.hpp"
#include "frames.hpp"

namespace proctimes::cli::record {
namespace {

using namespace fixtures;

bool says(const top::top_frame& f, const std::string& words) {
    for (const auto& w : f.warnings)
        if (w == words) return true;
    return false;
}

TEST(Replay, StepsThroughARecordingWhileItGrows) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto w = store::open_writer(path);
    ASSERT_TRUE(w);
    auto empty = replay_feed::open(path);
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().kind, error_kind::not_found);
    for (std::uint64_t n = 1; n <= 5; ++n) ASSERT_TRUE(w->write_interval(made_frame(n, 6)));

    auto feed = replay_feed::open(path, taken_of(3) - 500ms);
    ASSERT_TRUE(feed) << feed.error().message;
    auto& r = **feed;
    EXPECT_FALSE(r.live());
    auto first = r.next(1s);
    ASSERT_TRUE(first);
    expect_frame_stored(made_frame(3, 6), *first);
    EXPECT_EQ(r.next(1s)->number, 4U);
    EXPECT_EQ(r.step_back()->number, 3U);
    EXPECT_EQ(r.step_forward()->number, 4U);
    EXPECT_EQ(r.step_forward()->number, 5U);
    auto held = r.step_forward();
    ASSERT_TRUE(held);
    EXPECT_EQ(held->number, 5U);
    EXPECT_TRUE(says(*held, "the last recorded interval"));
    // The recorder writes on: the next interval is the new one.
    ASSERT_TRUE(w->write_interval(made_frame(6, 6)));
    EXPECT_EQ(r.next(1s)->number, 6U);
    EXPECT_EQ(r.jump(taken_of(1))->number, 1U);
    auto start = r.step_back();
    ASSERT_TRUE(start);
    EXPECT_EQ(start->number, 1U);
    EXPECT_TRUE(says(*start, "the first recorded interval"));
    EXPECT_EQ(r.jump(taken_of(100))->number, 6U);

    // Without --at: the first interval.
    auto from_start = replay_feed::open(path);
    ASSERT_TRUE(from_start);
    EXPECT_EQ((*from_start)->next(1s)->number, 1U);
}

}  // namespace
}  // namespace proctimes::cli::record
