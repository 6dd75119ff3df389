// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <chrono>

#include "proctimes/filetime.hpp"

using namespace std::chrono;
using namespace proctimes;

// Compile-time checks: the conversions are constexpr.
static_assert(filetime_from_time(sys_seconds{seconds{0}})->ticks == filetime_unix_epoch);
static_assert(time_from_filetime(filetime{filetime_unix_epoch})->time_since_epoch().count() == 0);
static_assert(!filetime_from_duration(nanoseconds{-1}).has_value());

TEST(FiletimeInstant, Epoch1601IsZero) {
    const auto t = sys_days{year{1601} / January / 1};
    auto ft = filetime_from_time(t);
    ASSERT_TRUE(ft);
    EXPECT_EQ(ft->ticks, 0u);
    // 1601 is far outside sys_time<nanoseconds>, but fine in seconds.
    EXPECT_FALSE(time_from_filetime<nanoseconds>(filetime{0}).has_value());
    auto back = time_from_filetime<seconds>(filetime{0});
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, sys_seconds{t});
}

TEST(FiletimeInstant, OneTickBefore1601IsRejected) {
    const sys_time<microseconds> before{sys_days{year{1601} / January / 1}.time_since_epoch() - microseconds{1}};
    EXPECT_FALSE(filetime_from_time(before).has_value());
    const sys_time<filetime_duration> tick_before{sys_days{year{1601} / January / 1}.time_since_epoch() -
                                                  filetime_duration{1}};
    EXPECT_FALSE(filetime_from_time(tick_before).has_value());
    EXPECT_EQ(filetime_from_time(tick_before + filetime_duration{1})->ticks, 0u);
}

TEST(FiletimeInstant, UnixEpoch) {
    EXPECT_EQ(filetime_from_time(sys_seconds{})->ticks, 116'444'736'000'000'000ULL);
    EXPECT_EQ(time_from_filetime(filetime{116'444'736'000'000'000ULL})->time_since_epoch(), nanoseconds{0});
}

TEST(FiletimeInstant, KnownWindowsVector) {
    // SystemTimeToFileTime(2002-07-26 11:55:32.123) == 0x01C2349B580716B0
    const auto t = sys_days{year{2002} / July / 26} + hours{11} + minutes{55} + seconds{32} + milliseconds{123};
    EXPECT_EQ(filetime_from_time(t)->ticks, 0x01C2349B580716B0ULL);
    // 1980-01-01 == 0x01A8E79FE1D58000
    EXPECT_EQ(filetime_from_time(sys_days{year{1980} / January / 1})->ticks, 0x01A8E79FE1D58000ULL);
}

TEST(FiletimeInstant, EdgesOfNanosecondRange2262) {
    // The last instant sys_time<nanoseconds> can hold: 2262-04-11 23:47:16.854775807.
    const sys_time<nanoseconds> last{nanoseconds::max()};
    auto ft = filetime_from_time(last);
    ASSERT_TRUE(ft);
    // Floors to the tick: ...854775800.
    auto back = time_from_filetime(*ft);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->time_since_epoch().count(), nanoseconds::max().count() / 100 * 100);
    // One tick later does not fit nanoseconds, but does fit microseconds.
    const filetime next{ft->ticks + 1};
    EXPECT_FALSE(time_from_filetime<nanoseconds>(next).has_value());
    EXPECT_TRUE(time_from_filetime<microseconds>(next).has_value());
    // The first instant: 1677-09-21 00:12:43.145224192.
    const sys_time<nanoseconds> first{nanoseconds::min()};
    auto ft0 = filetime_from_time(first);
    ASSERT_TRUE(ft0);
    // Floor moves it to the tick at or before, which is below the ns range.
    EXPECT_FALSE(time_from_filetime<nanoseconds>(*ft0).has_value());
    EXPECT_TRUE(time_from_filetime<nanoseconds>(filetime{ft0->ticks + 1}).has_value());
}

TEST(FiletimeInstant, Edge30828) {
    // 0x7FFFFFFFFFFFFFFF == 30828-09-14 02:48:05.4775807 UTC
    auto t = time_from_filetime<microseconds>(filetime{filetime_max});
    ASSERT_TRUE(t);
    const auto dp = floor<days>(*t);
    const year_month_day ymd{dp};
    EXPECT_EQ(ymd, year{30828} / September / 14);
    const hh_mm_ss hms{*t - dp};
    EXPECT_EQ(hms.hours().count(), 2);
    EXPECT_EQ(hms.minutes().count(), 48);
    EXPECT_EQ(hms.seconds().count(), 5);
    EXPECT_EQ(hms.subseconds().count(), 477580);  // floored to the microsecond
    EXPECT_FALSE(time_from_filetime<microseconds>(filetime{filetime_max + 1}).has_value());
    EXPECT_FALSE(time_from_filetime<seconds>(filetime{~0ULL}).has_value());
    // And back, from a 100 ns duration type, exactly.
    const sys_time<filetime_duration> exact{
        filetime_duration{static_cast<std::int64_t>(filetime_max - filetime_unix_epoch)}};
    EXPECT_EQ(filetime_from_time(exact)->ticks, filetime_max);
    EXPECT_FALSE(filetime_from_time(exact + filetime_duration{1}).has_value());
}

TEST(FiletimeInstant, FloorsNegativeSubTickTowardPast) {
    // 1969-12-31 23:59:59.99999995 → the tick at ...9999999 (floor), not at 0.
    const sys_time<nanoseconds> t{nanoseconds{-50}};
    EXPECT_EQ(filetime_from_time(t)->ticks, filetime_unix_epoch - 1);
    const sys_time<nanoseconds> u{nanoseconds{150}};
    EXPECT_EQ(filetime_from_time(u)->ticks, filetime_unix_epoch + 1);
}

TEST(FiletimeInstant, RoundTripAtTickPrecision) {
    for (std::int64_t ns : {0LL, 100LL, 1'600'000'000'123'456'700LL, -3'000'000'000'000'000'000LL}) {
        const sys_time<nanoseconds> t{nanoseconds{ns}};
        auto ft = filetime_from_time(t);
        ASSERT_TRUE(ft);
        EXPECT_EQ(*time_from_filetime(*ft), t);
    }
}

TEST(FiletimeDuration, Basics) {
    EXPECT_EQ(filetime_from_duration(seconds{1})->ticks, 10'000'000u);
    EXPECT_EQ(filetime_from_duration(nanoseconds{199})->ticks, 1u);  // floors
    EXPECT_EQ(*duration_from_filetime(filetime{3}), nanoseconds{300});
    EXPECT_FALSE(filetime_from_duration(nanoseconds{-100}).has_value());
    // Durations are never calendar dates: 400 days stay 400 days.
    EXPECT_EQ(*duration_from_filetime<hours>(*filetime_from_duration(days{400})), hours{9600});
}

TEST(FiletimeDuration, RangeLimits) {
    // nanoseconds hold ~292 years; FILETIME durations go to ~29,227 years.
    const filetime big{filetime_max};
    EXPECT_FALSE(duration_from_filetime<nanoseconds>(big).has_value());
    auto s = duration_from_filetime<seconds>(big);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->count(), static_cast<std::int64_t>(filetime_max / 10'000'000));
    EXPECT_FALSE(duration_from_filetime(filetime{filetime_max + 1}).has_value());
    EXPECT_FALSE(filetime_from_duration(seconds{std::numeric_limits<std::int64_t>::max()}).has_value());
    EXPECT_EQ(filetime_from_duration(nanoseconds::max())->ticks,
              static_cast<std::uint64_t>(nanoseconds::max().count() / 100));
}

TEST(Filetime, Parts) {
    const auto ft = filetime::from_parts(0x580716B0u, 0x01C2349Bu);
    EXPECT_EQ(ft.ticks, 0x01C2349B580716B0ULL);
    EXPECT_EQ(ft.low(), 0x580716B0u);
    EXPECT_EQ(ft.high(), 0x01C2349Bu);
    EXPECT_LT(filetime{1}, filetime{2});
}
