// SPDX-License-Identifier: MIT
// The /proc/loadavg parser (src/parse/loadavg.hpp), on lines in the kernel's
// format (fs/proc/loadavg.c: "%lu.%02lu %lu.%02lu %lu.%02lu %u/%d %d\n") and
// on damaged ones.
#include <gtest/gtest.h>

#include <string>

#include "parse/loadavg.hpp"

using namespace proctimes::parse;

TEST(ParseLoadavg, KernelLine) {
    const auto r = parse_loadavg_tasks("0.20 0.18 0.12 1/80 11206\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->running, 1u);
    EXPECT_EQ(r->total, 80u);
}

TEST(ParseLoadavg, LargeCountsAndNoTrailingFields) {
    const auto r = parse_loadavg_tasks("12.50 7.01 3.99 17/123456");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->running, 17u);
    EXPECT_EQ(r->total, 123456u);
}

TEST(ParseLoadavg, RefusesDamagedLines) {
    EXPECT_FALSE(parse_loadavg_tasks(""));
    EXPECT_FALSE(parse_loadavg_tasks("0.20 0.18 0.12"));            // three fields only
    EXPECT_FALSE(parse_loadavg_tasks("0.20 0.18 0.12 "));           // empty field 4
    EXPECT_FALSE(parse_loadavg_tasks("0.20 0.18 0.12 180 11206"));  // no slash
    EXPECT_FALSE(parse_loadavg_tasks("0.20 0.18 0.12 /80 1"));      // no running count
    EXPECT_FALSE(parse_loadavg_tasks("0.20 0.18 0.12 1/ 1"));       // no total
    EXPECT_FALSE(parse_loadavg_tasks("0.20 0.18 0.12 -1/80 1"));    // a sign
    EXPECT_FALSE(parse_loadavg_tasks("0.20 0.18 0.12 1/80/3 1"));   // two slashes
    EXPECT_FALSE(parse_loadavg_tasks("0.20 0.18 0.12 1/8x0 1"));
    // Past int64: refused, not wrapped.
    EXPECT_FALSE(parse_loadavg_tasks("0 0 0 1/99999999999999999999 1"));
    // The separator is one space: two spaces make an empty field.
    EXPECT_FALSE(parse_loadavg_tasks("0.20  0.18 0.12 1/80 1"));
}
