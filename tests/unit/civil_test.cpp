// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

#include "proctimes/civil.hpp"

using namespace std::chrono;
using namespace proctimes;

namespace {
constexpr civil_time ymd_hms(int y, int mo, int d, int h = 0, int mi = 0, int s = 0, int ms = 0) {
    return civil_time{y, mo, 0, d, h, mi, s, ms};
}
// A civil_time with day_of_week as Windows reports it, for equality checks.
constexpr civil_time with_dow(civil_time c, int dow) {
    c.day_of_week = dow;
    return c;
}
}  // namespace

// Compile-time: the conversions are constexpr.
static_assert(filetime_from_civil(ymd_hms(1601, 1, 1))->ticks == 0);
static_assert(civil_from_filetime(filetime{0})->day_of_week == 1);
static_assert(filetime_from_dos(0x0021, 0)->ticks == 0x01A8E79FE1D58000ULL);

TEST(Civil, ZeroIs1601Monday) {
    auto c = civil_from_filetime(filetime{0});
    ASSERT_TRUE(c);
    EXPECT_EQ(*c, with_dow(ymd_hms(1601, 1, 1), 1));
}

TEST(Civil, LargestFiletimeIs30828) {
    auto c = civil_from_filetime(filetime{filetime_max});
    ASSERT_TRUE(c);
    // 30828-09-14 02:48:05.477 (a Thursday), the last 0.5807 ms dropped.
    EXPECT_EQ(*c, with_dow(ymd_hms(30828, 9, 14, 2, 48, 5, 477), 4));
    EXPECT_FALSE(civil_from_filetime(filetime{filetime_max + 1}));
    EXPECT_FALSE(civil_from_filetime(filetime{~0ULL}));
}

TEST(Civil, KnownWindowsVectors) {
    EXPECT_EQ(filetime_from_civil(ymd_hms(2002, 7, 26, 11, 55, 32, 123))->ticks, 0x01C2349B580716B0ULL);
    EXPECT_EQ(filetime_from_civil(ymd_hms(1980, 1, 1))->ticks, 0x01A8E79FE1D58000ULL);
    EXPECT_EQ(filetime_from_civil(ymd_hms(2002, 5, 1, 12))->ticks, 0x01C1F107B82B6000ULL);
    // The Unix epoch, and one second after it.
    EXPECT_EQ(filetime_from_civil(ymd_hms(1970, 1, 1))->ticks, filetime_unix_epoch);
    auto c = civil_from_filetime(filetime{filetime_unix_epoch + 10'000'000});
    EXPECT_EQ(*c, with_dow(ymd_hms(1970, 1, 1, 0, 0, 1), 4));  // a Thursday
}

TEST(Civil, DayOfWeekOfKnownDates) {
    EXPECT_EQ(civil_from_filetime(*filetime_from_civil(ymd_hms(2000, 2, 29)))->day_of_week, 2);  // Tuesday
    EXPECT_EQ(civil_from_filetime(*filetime_from_civil(ymd_hms(2024, 1, 1)))->day_of_week, 1);   // Monday
    EXPECT_EQ(civil_from_filetime(*filetime_from_civil(ymd_hms(1752, 9, 14)))->day_of_week, 4);  // proleptic: Thursday
    EXPECT_EQ(civil_from_filetime(*filetime_from_civil(ymd_hms(2001, 9, 9, 1, 46, 40)))->day_of_week, 0);  // Sunday
}

TEST(Civil, MillisecondsAreFloored) {
    const auto base = filetime_from_civil(ymd_hms(2020, 6, 1, 12, 0, 0, 5))->ticks;
    EXPECT_EQ(civil_from_filetime(filetime{base + 9'999})->millisecond, 5);
    EXPECT_EQ(civil_from_filetime(filetime{base + 10'000})->millisecond, 6);
}

TEST(Civil, RejectsWhatSystemTimeToFileTimeRejects) {
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1600, 12, 31, 23, 59, 59, 999)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1980, 0, 1)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1980, 13, 1)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1980, 1, 0)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1980, 1, 32)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1980, 4, 31)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1900, 2, 29)));  // not a leap year
    EXPECT_TRUE(filetime_from_civil(ymd_hms(2000, 2, 29)));   // a leap year
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1980, 1, 1, 24)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1980, 1, 1, 0, 60)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1980, 1, 1, 0, 0, 60)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(1980, 1, 1, 0, 0, 0, 1000)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(-5, 1, 1)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(65535, 12, 31)));
}

TEST(Civil, DayOfWeekIsIgnoredOnInput) {
    civil_time c = ymd_hms(2002, 7, 26, 11, 55, 32, 123);
    c.day_of_week = 77;
    EXPECT_EQ(filetime_from_civil(c)->ticks, 0x01C2349B580716B0ULL);
}

TEST(Civil, UpperEdgeOfTheRange) {
    // 30828-09-14 02:48:05.477 is the last millisecond that fits.
    auto last = filetime_from_civil(ymd_hms(30828, 9, 14, 2, 48, 5, 477));
    ASSERT_TRUE(last);
    EXPECT_EQ(last->ticks, filetime_max - 5807);
    EXPECT_FALSE(filetime_from_civil(ymd_hms(30828, 9, 14, 2, 48, 5, 478)));
    EXPECT_FALSE(filetime_from_civil(ymd_hms(30828, 12, 31)));
    EXPECT_TRUE(filetime_from_civil(ymd_hms(30827, 12, 31, 23, 59, 59, 999)));
}

TEST(Civil, RoundTripEveryDayOfSomeYears) {
    for (int y : {1601, 1700, 1899, 1900, 1970, 1999, 2000, 2038, 2100, 2400, 9999, 30827}) {
        std::uint64_t prev = 0;
        bool first = true;
        for (int m = 1; m <= 12; ++m) {
            for (int d = 1; d <= civil_detail::days_in_month(y, m); ++d) {
                const auto ft = filetime_from_civil(ymd_hms(y, m, d, 13, 14, 15, 16));
                ASSERT_TRUE(ft) << y << "-" << m << "-" << d;
                if (!first) {
                    ASSERT_EQ(ft->ticks - prev, 864'000'000'000ULL);
                }
                first = false;
                prev = ft->ticks;
                auto back = civil_from_filetime(*ft);
                ASSERT_TRUE(back);
                civil_time expect = ymd_hms(y, m, d, 13, 14, 15, 16);
                expect.day_of_week = back->day_of_week;
                ASSERT_EQ(*back, expect);
            }
        }
    }
}

TEST(Civil, AgreesWithTimegmOverTheUnixRange) {
    // Cross-check against the C library for midnight of days 1900..2200.
    for (std::int64_t days = -25'567; days < 84'000; days += 37) {
        const std::time_t t = static_cast<std::time_t>(days * 86'400 + 3'723);
        std::tm tm{};
        ASSERT_NE(::gmtime_r(&t, &tm), nullptr);
        const std::uint64_t ticks =
            static_cast<std::uint64_t>((days * 86'400 + 3'723) * 10'000'000LL) + filetime_unix_epoch;
        auto c = civil_from_filetime(filetime{ticks});
        ASSERT_TRUE(c);
        ASSERT_EQ(c->year, tm.tm_year + 1900);
        ASSERT_EQ(c->month, tm.tm_mon + 1);
        ASSERT_EQ(c->day, tm.tm_mday);
        ASSERT_EQ(c->day_of_week, tm.tm_wday);
        ASSERT_EQ(c->hour, 1);
        ASSERT_EQ(c->minute, 2);
        ASSERT_EQ(c->second, 3);
    }
}

// ---- MS-DOS date/time ---------------------------------------------------------

TEST(Dos, NewYear1980) {
    auto d = dos_from_filetime(filetime{0x01A8E79FE1D58000ULL});
    ASSERT_TRUE(d);
    EXPECT_EQ(d->date, 0x0021);
    EXPECT_EQ(d->time, 0x0000);
    EXPECT_EQ(filetime_from_dos(0x0021, 0x0000)->ticks, 0x01A8E79FE1D58000ULL);
}

TEST(Dos, OddSecondsRoundUpLikeWindows) {
    // 1990-06-15 10:45:30 exactly → 0x14CF / 0x55AF.
    const std::uint64_t t30 = filetime_from_civil(ymd_hms(1990, 6, 15, 10, 45, 30))->ticks;
    EXPECT_EQ(t30, 0x01B4A02C9BE00100ULL);
    EXPECT_EQ(*dos_from_filetime(filetime{t30}), (dos_date_time{0x14CF, 0x55AF}));
    // :29 rounds up to :30, :31 to :32, and :30 plus one tick to :32.
    EXPECT_EQ(*dos_from_filetime(filetime{t30 - 10'000'000}), (dos_date_time{0x14CF, 0x55AF}));
    EXPECT_EQ(*dos_from_filetime(filetime{t30 + 10'000'000}), (dos_date_time{0x14CF, 0x55B0}));
    EXPECT_EQ(*dos_from_filetime(filetime{t30 + 1}), (dos_date_time{0x14CF, 0x55B0}));
    EXPECT_EQ(*dos_from_filetime(filetime{t30 + 20'000'000}), (dos_date_time{0x14CF, 0x55B0}));
    // 23:59:59 rounds into the next day (and month, and year).
    const std::uint64_t eoy = filetime_from_civil(ymd_hms(1999, 12, 31, 23, 59, 59))->ticks;
    const auto next = dos_from_filetime(filetime{eoy});
    EXPECT_EQ(*next, (dos_date_time{static_cast<std::uint16_t>((20 << 9) | (1 << 5) | 1), 0}));
}

TEST(Dos, RangeEdges) {
    const std::uint64_t y1980 = 0x01A8E79FE1D58000ULL;
    // Rounds up into 1980: accepted; two seconds earlier: 1979, rejected.
    EXPECT_EQ(dos_filetime_min, y1980 - 20'000'000 + 1);
    EXPECT_EQ(*dos_from_filetime(filetime{dos_filetime_min}), (dos_date_time{0x0021, 0}));
    EXPECT_FALSE(dos_from_filetime(filetime{dos_filetime_min - 1}));
    EXPECT_FALSE(dos_from_filetime(filetime{0}));
    // 2107-12-31 23:59:58 is the last; one tick later rounds into 2108.
    auto last = dos_from_filetime(filetime{dos_filetime_max});
    ASSERT_TRUE(last);
    EXPECT_EQ(*last, (dos_date_time{0xFF9F, 0xBF7D}));
    EXPECT_FALSE(dos_from_filetime(filetime{dos_filetime_max + 1}));
    EXPECT_FALSE(dos_from_filetime(filetime{filetime_max}));
    EXPECT_FALSE(dos_from_filetime(filetime{~0ULL}));
    EXPECT_EQ(filetime_from_dos(0xFF9F, 0xBF7D)->ticks, dos_filetime_max);
}

TEST(Dos, DecodeValidatesFields) {
    EXPECT_TRUE(filetime_from_dos(0x14CF, 0x55AF));
    EXPECT_FALSE(filetime_from_dos(0x0001, 0));         // month 0
    EXPECT_FALSE(filetime_from_dos(0x01A1, 0));         // month 13
    EXPECT_FALSE(filetime_from_dos(0x0020, 0));         // day 0
    EXPECT_FALSE(filetime_from_dos(0x005E, 0));         // February 30
    EXPECT_FALSE(filetime_from_dos(0x0021, 24 << 11));  // hour 24
    EXPECT_FALSE(filetime_from_dos(0x0021, 60 << 5));   // minute 60
    EXPECT_FALSE(filetime_from_dos(0x0021, 30));        // seconds field 30 = 60 s
    EXPECT_TRUE(filetime_from_dos(0x0021, 29));         // 58 s
    // 1980 was a leap year: February 29 exists.
    EXPECT_TRUE(filetime_from_dos(static_cast<std::uint16_t>((2 << 5) | 29), 0));
}

TEST(Dos, EveryValidWordRoundTrips) {
    // Every valid time word on a few dates: encode(decode(x)) == x.
    for (std::uint16_t date :
         {std::uint16_t{0x0021}, std::uint16_t{0x14CF}, std::uint16_t{0xFF9F}, std::uint16_t{0x3C3D}}) {
        for (unsigned time = 0; time <= 0xFFFF; ++time) {
            auto ft = filetime_from_dos(date, static_cast<std::uint16_t>(time));
            const bool valid = (time & 0x1F) < 30 && ((time >> 5) & 0x3F) < 60 && (time >> 11) < 24;
            ASSERT_EQ(ft.has_value(), valid) << std::hex << date << " " << time;
            if (!ft) continue;
            auto back = dos_from_filetime(*ft);
            ASSERT_TRUE(back);
            ASSERT_EQ(*back, (dos_date_time{date, static_cast<std::uint16_t>(time)}));
        }
    }
}

// ---- local time -----------------------------------------------------------------

TEST(Local, OffsetArithmeticIsModular) {
    EXPECT_EQ(local_ticks_from_utc(1'000'000'000, seconds{3600}), 1'000'000'000 + 36'000'000'000ULL);
    EXPECT_EQ(utc_ticks_from_local(1'000'000'000 + 36'000'000'000ULL, seconds{3600}), 1'000'000'000ULL);
    // Windows neither checks the input nor the result: 0 minus one hour wraps.
    EXPECT_EQ(local_ticks_from_utc(0, seconds{-3600}), 0ULL - 36'000'000'000ULL);
    EXPECT_EQ(utc_ticks_from_local(local_ticks_from_utc(12345, seconds{-19800}), seconds{-19800}), 12345ULL);
}

namespace {
// Runs `body` with TZ set to `tz`, restoring the previous value.
template <class F>
void with_tz(const char* tz, F body) {
    const char* old = std::getenv("TZ");
    std::string saved = old ? old : "";
    ::setenv("TZ", tz, 1);
    body();
    if (old)
        ::setenv("TZ", saved.c_str(), 1);
    else
        ::unsetenv("TZ");
    ::tzset();
}
}  // namespace

TEST(Local, CurrentOffsetFollowsTz) {
    with_tz("UTC0", [] { EXPECT_EQ(current_utc_offset().value(), seconds{0}); });
    // Fixed zones without DST rules: the offset is the same all year.
    with_tz("XST-5:30", [] { EXPECT_EQ(current_utc_offset().value(), seconds{5 * 3600 + 1800}); });
    with_tz("YST8", [] { EXPECT_EQ(current_utc_offset().value(), seconds{-8 * 3600}); });
}

TEST(Local, CurrentOffsetIsTheOffsetOfNowNotOfTheDate) {
    // A zone with DST: whatever the season now, the offset is one of the two,
    // and it matches what localtime says about this very moment.
    with_tz("CET-1CEST,M3.5.0,M10.5.0/3", [] {
        const auto off = current_utc_offset().value();
        EXPECT_TRUE(off == seconds{3600} || off == seconds{7200}) << off.count();
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
        ::localtime_r(&now, &tm);
        EXPECT_EQ(off.count(), tm.tm_gmtoff);
    });
}

TEST(SystemTime, NowIsBracketedBySystemClock) {
    const auto before = filetime_from_time(system_clock::now())->ticks;
    const auto now = system_time_now().ticks;
    const auto after = filetime_from_time(system_clock::now())->ticks;
    EXPECT_LE(before, now);
    EXPECT_LE(now, after);
    EXPECT_GT(now, 0x01D0000000000000ULL);  // after 2014
}
