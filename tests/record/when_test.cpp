// SPDX-License-Identifier: MIT
// The command-line forms of record, report and top --replay (record/when.hpp):
// what they accept, to the nanosecond, and that everything else is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>

#include "record/when.hpp"

namespace {

using namespace std::chrono_literals;
using proctimes::instant;
namespace rec = proctimes::cli::record;

// 2026-11-28T12:00:00Z
const instant noon{std::chrono::sys_days{std::chrono::year{2026} / 11 / 28} + 12h};

TEST(When, DurationsTakeUnitsAndBareSecondsOnlyWhereAllowed) {
    EXPECT_EQ(rec::parse_duration("10s", false).value(), 10s);
    EXPECT_EQ(rec::parse_duration("500ms", false).value(), 500ms);
    EXPECT_EQ(rec::parse_duration("1.5m", false).value(), 90s);
    EXPECT_EQ(rec::parse_duration("1h30m", false).value(), 90min);
    EXPECT_EQ(rec::parse_duration("7d", false).value(), 7 * 24h);
    EXPECT_EQ(rec::parse_duration("2w", false).value(), 14 * 24h);
    EXPECT_EQ(rec::parse_duration("0.5", true).value(), 500ms);
    EXPECT_FALSE(rec::parse_duration("0.5", false).ok());
    for (const char* bad : {"", "s", "10", "10x", "-1s", "0s", "1s5", "1e3s", "10 s", "1..5s", "99999999999d"})
        EXPECT_FALSE(rec::parse_duration(bad, false).ok()) << bad;
    EXPECT_NE(rec::parse_duration("10x", true).why().find("'10x' is not a duration"), std::string::npos);
}

TEST(When, SizesArePowersOf1024InUpperCase) {
    EXPECT_EQ(rec::parse_size("500M").value(), 500ULL << 20);
    EXPECT_EQ(rec::parse_size("2G").value(), 2ULL << 30);
    EXPECT_EQ(rec::parse_size("2GiB").value(), 2ULL << 30);
    EXPECT_EQ(rec::parse_size("2GB").value(), 2ULL << 30);
    EXPECT_EQ(rec::parse_size("800K").value(), 800ULL << 10);
    EXPECT_EQ(rec::parse_size("800k").value(), 800ULL << 10);
    EXPECT_EQ(rec::parse_size("4096B").value(), 4096U);
    EXPECT_EQ(rec::parse_size("1.5T").value(), 3ULL << 39);
    for (const char* bad : {"", "500", "500m", "5Q", "M", "0M", "2GiBs", "-1G"})
        EXPECT_FALSE(rec::parse_size(bad).ok()) << bad;
}

TEST(When, RetentionIsAnAgeASizeOrOneOfEach) {
    auto r = rec::parse_retention("7d");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().max_age, 7 * 24h);
    EXPECT_EQ(r.value().max_bytes, 0U);
    r = rec::parse_retention("2G,12h");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().max_age, 12h);
    EXPECT_EQ(r.value().max_bytes, 2ULL << 30);
    // "30m" is thirty minutes, not megabytes.
    EXPECT_EQ(rec::parse_retention("30m").value().max_age, 30min);
    for (const char* bad : {"", "10", "7d,3d", "1G,2G", "7d,", ",7d", "forever"})
        EXPECT_FALSE(rec::parse_retention(bad).ok()) << bad;
}

TEST(When, InstantsInIso8601WithAZoneAreExact) {
    EXPECT_EQ(rec::parse_instant("2026-11-28T12:00:00Z", noon).value(), noon);
    EXPECT_EQ(rec::parse_instant("2026-11-28T13:30:00+01:30", noon).value(), noon);
    EXPECT_EQ(rec::parse_instant("2026-11-28T07:00-05:00", noon).value(), noon);
    EXPECT_EQ(rec::parse_instant("2026-11-28T12:00:00.123456789Z", noon).value(), noon + 123456789ns);
    EXPECT_EQ(rec::parse_instant("2026-11-28T12:00:00,5Z", noon).value(), noon + 500ms);
}

TEST(When, RelativeFormsCountBackFromNow) {
    EXPECT_EQ(rec::parse_instant("now", noon).value(), noon);
    EXPECT_EQ(rec::parse_instant("-1h", noon).value(), noon - 1h);
    EXPECT_EQ(rec::parse_instant("-1h30m", noon).value(), noon - 90min);
    EXPECT_EQ(rec::parse_instant("-2d", noon).value(), noon - 48h);
    EXPECT_EQ(rec::parse_instant("@1795867200", noon).value(), noon);
    EXPECT_EQ(rec::parse_instant("@1795867200.000000001", noon).value(), noon + 1ns);
}

TEST(When, LocalTimesFollowTheZone) {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    EXPECT_EQ(rec::parse_instant("2026-11-28 12:00", noon).value(), noon);
    EXPECT_EQ(rec::parse_instant("2026-11-28", noon).value(), noon - 12h);
    EXPECT_EQ(rec::parse_instant("today 03:00", noon).value(), noon - 9h);
    EXPECT_EQ(rec::parse_instant("yesterday 23:30", noon).value(), noon - 12h - 30min);
    ::setenv("TZ", "Europe/Paris", 1);  // UTC+1 in November
    ::tzset();
    EXPECT_EQ(rec::parse_instant("2026-11-28 13:00", noon).value(), noon);
    EXPECT_EQ(rec::parse_instant("today 13:00", noon).value(), noon);
    ::unsetenv("TZ");
    ::tzset();
}

TEST(When, AnythingElseIsRefusedWithTheFormsItTakes) {
    for (const char* bad :
         {"", "-", "-1", "-1x", "yesterday", "today", "today 3:00", "tomorrow 03:00", "2026-13-01", "2026-02-30",
          "2026-11-28T25:00", "2026-11-28T12:00Q", "2026-11-28T12:00+1", "@", "@x", "2026-11-28T12:00:00Z trailing"}) {
        const auto p = rec::parse_instant(bad, noon);
        EXPECT_FALSE(p.ok()) << bad;
        if (!p.ok()) {
            EXPECT_NE(p.why().find("expected ISO 8601"), std::string::npos) << p.why();
        }
    }
}

}  // namespace
