// SPDX-License-Identifier: MIT
// The cgroups the view reads for its grouping by cgroup (tools/proctimes/top/cgroups.hpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include "proctimes/cgroup.hpp"
#include "top/cgroups.hpp"

namespace {

using proctimes::cli::top::top_frame;
using proctimes::cli::top::top_row;

TEST(TopCgroups, FilledForLiveRowsKeptForEndedOnes) {
    const auto mine = proctimes::process_cgroup(::getpid());
    if (!mine) GTEST_SKIP() << "no cgroup readable here: " << mine.error().message();
    top_frame f;
    top_row self;
    self.pid = ::getpid();
    self.creation = proctimes::instant(std::chrono::seconds(100));
    top_row given = self;
    given.pid = 1;
    given.cgroup = "/given";
    f.rows = {self, given};
    proctimes::cli::top::cgroup_names names;
    names.fill(f);
    EXPECT_EQ(f.rows[0].cgroup, *mine);
    EXPECT_EQ(f.rows[1].cgroup, "/given");
    // The same process, ended in the next frame: its cgroup as read while it lived.
    top_frame next;
    top_row ended = self;
    ended.ended = true;
    next.rows = {ended};
    names.fill(next);
    EXPECT_EQ(next.rows[0].cgroup, *mine);
    // An ended process never seen alive, and a pid reused by another process: not guessed.
    top_frame third;
    top_row reused = ended;
    reused.creation = proctimes::instant(std::chrono::seconds(200));
    top_row stranger;
    stranger.pid = 999'999'999;
    stranger.ended = true;
    third.rows = {reused, stranger};
    names.fill(third);
    EXPECT_EQ(third.rows[0].cgroup, "");
    EXPECT_EQ(third.rows[1].cgroup, "");
}

}  // namespace
