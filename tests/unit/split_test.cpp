// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cstdint>

#include "cpu_split.hpp"

using namespace std::chrono;
using proctimes::detail::monotonic_split;
using proctimes::detail::split_by_ticks;

TEST(Split, ProportionalToTicks) {
    auto s = split_by_ticks(nanoseconds{1'000'000'000}, 3, 1);
    EXPECT_EQ(s.kernel, nanoseconds{250'000'000});
    EXPECT_EQ(s.user, nanoseconds{750'000'000});
}

TEST(Split, ZeroTicksFollowTheKernel) {
    // No stime tick: all user (cputime_adjust). No utime tick: all kernel.
    EXPECT_EQ(split_by_ticks(nanoseconds{5}, 0, 0).user, nanoseconds{5});
    EXPECT_EQ(split_by_ticks(nanoseconds{5}, 7, 0).kernel, nanoseconds{0});
    EXPECT_EQ(split_by_ticks(nanoseconds{5}, 0, 7).kernel, nanoseconds{5});
    EXPECT_EQ(split_by_ticks(nanoseconds{0}, 3, 3).user, nanoseconds{0});
}

TEST(Split, KernelThreadsAreAllKernel) {
    EXPECT_EQ(split_by_ticks(nanoseconds{7}, 0, 0, true).kernel, nanoseconds{7});
    EXPECT_EQ(split_by_ticks(nanoseconds{7}, 3, 0, true).user, nanoseconds{0});
}

TEST(Split, HugeValuesDoNotOverflow) {
    const nanoseconds total{nanoseconds::max().count() / 2};
    auto s = split_by_ticks(total, ~0ULL / 4, ~0ULL / 4);
    EXPECT_EQ(s.kernel + s.user, total);
    EXPECT_NEAR(static_cast<double>(s.kernel.count()), static_cast<double>(total.count()) / 2, 1e3);
}

TEST(Split, SixtyFourAndOneHundredTwentyEightBitPathsAgree) {
    // The 64-bit path serves products below 2^64; the 128-bit one the rest.
    // Either gives floor(total * stime / (utime + stime)), the same at the seam.
    const auto exact = [](std::uint64_t t, std::uint64_t u, std::uint64_t st) {
        __extension__ typedef unsigned __int128 u128;
        return static_cast<std::int64_t>(static_cast<u128>(t) * st / (static_cast<u128>(u) + st));
    };
    const std::uint64_t stime = 3'000'000'007ULL;
    const std::uint64_t edge = ~0ULL / stime;  // the largest total whose product fits
    for (std::uint64_t t : {edge - 1, edge, edge + 1, edge + 1000}) {
        const auto s = split_by_ticks(nanoseconds{static_cast<std::int64_t>(t)}, 5'000'000'011ULL, stime);
        EXPECT_EQ(s.kernel.count(), exact(t, 5'000'000'011ULL, stime)) << t;
        EXPECT_EQ(s.kernel.count() + s.user.count(), static_cast<std::int64_t>(t));
    }
    // utime + stime itself overflowing 64 bits.
    const auto s = split_by_ticks(nanoseconds{1'000'000}, ~0ULL, ~0ULL);
    EXPECT_EQ(s.kernel, nanoseconds{500'000});
}

TEST(Split, MonotonicWhenTheRatioShifts) {
    monotonic_split m;
    // 100 ms all user, then 101 ms with one stime tick: the raw split would drop
    // user time to ~91.8 ms; it must not go below 100 ms.
    auto a = m.apply(milliseconds{100}, 10, 0);
    auto b = m.apply(milliseconds{101}, 10, 1);
    EXPECT_EQ(a.user, milliseconds{100});
    EXPECT_GE(b.user, a.user);
    EXPECT_GE(b.kernel, a.kernel);
    EXPECT_EQ(b.user + b.kernel, milliseconds{101});
    // And the other way round.
    monotonic_split k;
    auto c = k.apply(milliseconds{100}, 0, 10);
    auto d = k.apply(milliseconds{101}, 1, 10);
    EXPECT_GE(d.kernel, c.kernel);
    EXPECT_GE(d.user, c.user);
    EXPECT_EQ(d.user + d.kernel, milliseconds{101});
}

TEST(Split, AStaleTotalReturnsThePreviousValues) {
    monotonic_split m;
    auto a = m.apply(milliseconds{50}, 1, 1);
    auto b = m.apply(milliseconds{40}, 1, 1);
    EXPECT_EQ(b.kernel, a.kernel);
    EXPECT_EQ(b.user, a.user);
}

TEST(Split, GuardScalesALaggingRusageRatioToACurrentTotal) {
    // The calling thread: getrusage says 3 ms user + 1 ms system (as of its
    // last tick), the thread clock 8 ms. The total is the clock's, the ratio
    // getrusage's; then a later call with a shifted ratio keeps both sides.
    proctimes::detail::split_guard g;
    auto a = g.apply(milliseconds{8}, 3'000, 1'000);
    EXPECT_EQ(a.user, milliseconds{6});
    EXPECT_EQ(a.kernel, milliseconds{2});
    auto b = g.apply(milliseconds{9}, 9'000, 1'000);  // ratio now 9:1 would give 0.9 ms kernel
    EXPECT_EQ(b.kernel, milliseconds{2});
    EXPECT_EQ(b.user, milliseconds{7});
    auto c = g.apply(milliseconds{8}, 1, 1);  // below the last total: the last values
    EXPECT_EQ(c.kernel, b.kernel);
    EXPECT_EQ(c.user, b.user);
}
