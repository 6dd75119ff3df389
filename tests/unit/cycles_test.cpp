// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "proctimes/cycles.hpp"

using namespace std::chrono;
using namespace proctimes;

static_assert(cycles_from_cpu_time(seconds{1}, 2'596'134'000) == 2'596'134'000);
static_assert(cycles_from_cpu_time(nanoseconds{-5}, 3'000'000'000) == 0);

TEST(CyclesFromCpuTime, ExactAndFloored) {
    EXPECT_EQ(cycles_from_cpu_time(nanoseconds{0}, 3'000'000'000), 0u);
    EXPECT_EQ(cycles_from_cpu_time(nanoseconds{1}, 3'000'000'000), 3u);
    EXPECT_EQ(cycles_from_cpu_time(nanoseconds{1}, 2'500'000'000), 2u);  // 2.5 floors
    EXPECT_EQ(cycles_from_cpu_time(nanoseconds{3}, 2'500'000'000), 7u);  // 7.5 floors
    EXPECT_EQ(cycles_from_cpu_time(milliseconds{10}, 1'000'000'000), 10'000'000u);
}

TEST(CyclesFromCpuTime, NoOverflowForCenturiesOfCpuTime) {
    // 100 years of CPU time at 5 GHz still fits: no intermediate overflow.
    const auto ns = duration_cast<nanoseconds>(hours{24 * 365 * 100});
    const std::uint64_t c = cycles_from_cpu_time(ns, 5'000'000'000);
    EXPECT_EQ(c, static_cast<std::uint64_t>(ns.count()) * 5u);
    // nanoseconds::max() × 10 GHz exceeds 64 bits: saturates.
    EXPECT_EQ(cycles_from_cpu_time(nanoseconds::max(), 10'000'000'000), ~std::uint64_t{0});
}

TEST(CycleMeter, NeverDecreases) {
    cycle_meter m;
    EXPECT_EQ(m.update(100, false), 100u);
    EXPECT_EQ(m.update(90, false), 100u);
    EXPECT_EQ(m.update(100, false), 100u);
    EXPECT_EQ(m.update(150, false), 150u);
    EXPECT_EQ(m.last(), 150u);
}

TEST(CycleMeter, StrictlyIncreasesOnRequest) {
    cycle_meter m;
    EXPECT_EQ(m.update(100, true), 100u);
    EXPECT_EQ(m.update(100, true), 101u);
    EXPECT_EQ(m.update(50, true), 102u);
    EXPECT_EQ(m.update(500, true), 500u);
    m.reset();
    EXPECT_EQ(m.update(7, true), 7u);
}

TEST(CycleMeter, ConcurrentStrictUpdatesAreAllDistinct) {
    cycle_meter m;
    constexpr int threads = 4, per = 10'000;
    std::vector<std::vector<std::uint64_t>> seen(threads);
    std::vector<std::thread> ts;
    ts.reserve(threads);
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            for (int i = 0; i < per; ++i) seen[t].push_back(m.update(1, true));
        });
    for (auto& t : ts) t.join();
    std::vector<std::uint64_t> all;
    for (auto& v : seen) {
        for (std::size_t i = 1; i < v.size(); ++i) ASSERT_GT(v[i], v[i - 1]);
        all.insert(all.end(), v.begin(), v.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
    EXPECT_EQ(m.last(), static_cast<std::uint64_t>(threads * per));
}

TEST(TscRateSource, Names) {
    EXPECT_EQ(to_string(tsc_rate_source::calibrated), "calibrated");
    EXPECT_EQ(to_string(tsc_rate_source::cpuid_crystal), "cpuid-0x15");
    EXPECT_EQ(to_string(tsc_rate_source::nominal), "nominal");
}
