// SPDX-License-Identifier: MIT
// proctimes/civil.hpp — FILETIME instants as calendar fields, MS-DOS
// date/time words and local time, with Windows' range and validation rules.
//
// These are the computations behind the Win32 FILETIME helpers
// (FileTimeToSystemTime, SystemTimeToFileTime, FileTimeToDosDateTime,
// DosDateTimeToFileTime, FileTimeToLocalFileTime, LocalFileTimeToFileTime),
// usable on their own from C++.
//
// Calendar. The proleptic Gregorian calendar, which is what Windows uses for
// every FILETIME, from 1601-01-01 00:00:00.000 (FILETIME 0, a Monday) to
// 30828-09-14 02:48:05.477 (FILETIME 0x7FFF'FFFF'FFFF'FFFF, floored to the
// millisecond). Leap seconds do not exist on this scale (a minute always has
// 60 seconds), as on Windows and in POSIX time.
//
// Everything except current_utc_offset() and system_time_now() is constexpr,
// noexcept and pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "proctimes/export.h"
#include "proctimes/filetime.hpp"
#include "proctimes/result.hpp"

namespace proctimes::inline v1 {

/// Calendar fields of an instant, in the layout of Win32's SYSTEMTIME but with
/// plain ints. No time zone: the caller knows whether it is UTC or local.
struct civil_time {
    int year = 1601;      ///< 1601 .. 30828
    int month = 1;        ///< 1 = January .. 12
    int day_of_week = 1;  ///< 0 = Sunday .. 6 = Saturday (output only; ignored as input)
    int day = 1;          ///< 1 .. 31
    int hour = 0;         ///< 0 .. 23
    int minute = 0;       ///< 0 .. 59
    int second = 0;       ///< 0 .. 59
    int millisecond = 0;  ///< 0 .. 999
    friend constexpr bool operator==(const civil_time&, const civil_time&) = default;
};

/// MS-DOS (FAT) date and time words.
///   date: bits 0–4 day (1–31), 5–8 month (1–12), 9–15 years since 1980.
///   time: bits 0–4 seconds / 2 (0–29), 5–10 minute (0–59), 11–15 hour (0–23).
struct dos_date_time {
    std::uint16_t date = 0;
    std::uint16_t time = 0;
    friend constexpr bool operator==(const dos_date_time&, const dos_date_time&) = default;
};

namespace civil_detail {

inline constexpr std::int64_t ticks_per_ms = 10'000;
inline constexpr std::int64_t ticks_per_second = 10'000'000;
inline constexpr std::int64_t ticks_per_day = 86'400 * ticks_per_second;
/// Days from 1601-01-01 to 1970-01-01.
inline constexpr std::int64_t days_1601_to_1970 = 134'774;

constexpr bool is_leap(std::int64_t y) noexcept { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

constexpr int days_in_month(std::int64_t y, int m) noexcept {
    constexpr int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return (m == 2 && is_leap(y)) ? 29 : len[m - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (the era-based
// algorithm: 400-year eras of 146097 days, years starting in March).
constexpr std::int64_t days_from_civil(std::int64_t y, int m, int d) noexcept {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;                          // [0, 399]
    const std::int64_t mp = m > 2 ? m - 3 : m + 9;                   // March = 0
    const std::int64_t doy = (153 * mp + 2) / 5 + d - 1;             // [0, 365]
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;  // [0, 146096]
    return era * 146'097 + doe - 719'468;
}

struct ymd {
    std::int64_t y;
    int m;
    int d;
};

// The inverse of days_from_civil.
constexpr ymd civil_from_days(std::int64_t z) noexcept {
    z += 719'468;
    const std::int64_t era = (z >= 0 ? z : z - 146'096) / 146'097;
    const std::int64_t doe = z - era * 146'097;                                        // [0, 146096]
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36'524 - doe / 146'096) / 365;  // [0, 399]
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                  // [0, 365]
    const std::int64_t mp = (5 * doy + 2) / 153;                                       // [0, 11]
    const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
    const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    return {yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

}  // namespace civil_detail

/// FILETIME → calendar fields (FileTimeToSystemTime). The sub-millisecond part
/// is dropped (floor), day_of_week is filled in. nullopt when ft.ticks >
/// filetime_max (Windows: FALSE, ERROR_INVALID_PARAMETER).
constexpr std::optional<civil_time> civil_from_filetime(filetime ft) noexcept {
    using namespace civil_detail;
    if (ft.ticks > filetime_max) return std::nullopt;
    const auto t = static_cast<std::int64_t>(ft.ticks);
    const std::int64_t days = t / ticks_per_day;  // since 1601-01-01, ≥ 0
    const std::int64_t in_day = t % ticks_per_day;
    const ymd date = civil_from_days(days - days_1601_to_1970);
    civil_time c;
    c.year = static_cast<int>(date.y);
    c.month = date.m;
    c.day = date.d;
    c.day_of_week = static_cast<int>((days + 1) % 7);  // 1601-01-01 was a Monday
    c.hour = static_cast<int>(in_day / (3600 * ticks_per_second));
    c.minute = static_cast<int>(in_day / (60 * ticks_per_second) % 60);
    c.second = static_cast<int>(in_day / ticks_per_second % 60);
    c.millisecond = static_cast<int>(in_day / ticks_per_ms % 1000);
    return c;
}

/// Calendar fields → FILETIME (SystemTimeToFileTime). day_of_week is ignored.
/// nullopt, as Windows fails with ERROR_INVALID_PARAMETER, when a field is out
/// of its range (month 0 or > 12, day 0 or past the month's end, hour ≥ 24,
/// minute ≥ 60, second ≥ 60, millisecond ≥ 1000), when the year is before
/// 1601, or when the instant is after 30828-09-14 02:48:05.4775807.
constexpr std::optional<filetime> filetime_from_civil(const civil_time& c) noexcept {
    using namespace civil_detail;
    if (c.year < 1601 || c.month < 1 || c.month > 12 || c.day < 1 || c.hour < 0 || c.hour > 23 || c.minute < 0 ||
        c.minute > 59 || c.second < 0 || c.second > 59 || c.millisecond < 0 || c.millisecond > 999)
        return std::nullopt;
    // Beyond 30828 the count cannot fit; rejecting early also keeps the
    // arithmetic below far from overflow.
    if (c.year > 30828) return std::nullopt;
    if (c.day > days_in_month(c.year, c.month)) return std::nullopt;
    const std::int64_t days = days_from_civil(c.year, c.month, c.day) + days_1601_to_1970;
    const detail::int128 ticks =
        static_cast<detail::int128>(days) * ticks_per_day +
        static_cast<detail::int128>(((static_cast<std::int64_t>(c.hour) * 60 + c.minute) * 60 + c.second) *
                                    ticks_per_second) +  // < 86,400 s of ticks: fits 64 bits
        static_cast<detail::int128>(static_cast<std::int64_t>(c.millisecond) * ticks_per_ms);
    if (ticks > static_cast<detail::int128>(filetime_max)) return std::nullopt;
    return filetime{static_cast<std::uint64_t>(ticks)};
}

/// The earliest FILETIME FileTimeToDosDateTime accepts: 1979-12-31
/// 23:59:58.0000001, which rounds up to 1980-01-01 00:00:00.
inline constexpr std::uint64_t dos_filetime_min =
    filetime_from_civil(civil_time{1980, 1, 0, 1, 0, 0, 0, 0})->ticks - 2 * civil_detail::ticks_per_second + 1;
/// The latest: 2107-12-31 23:59:58 exactly (anything later rounds into 2108).
inline constexpr std::uint64_t dos_filetime_max =
    filetime_from_civil(civil_time{2107, 12, 0, 31, 23, 59, 58, 0})->ticks;

/// FILETIME → MS-DOS date and time (FileTimeToDosDateTime). No time-zone
/// conversion. Windows rounds UP to the next even second (it adds two seconds
/// less one tick and then drops the odd second): 10:45:29 → 10:45:30,
/// 10:45:30.0000001 → 10:45:32. nullopt when the rounded instant is outside
/// 1980-01-01 00:00:00 .. 2107-12-31 23:59:58, i.e. when ft is outside
/// [dos_filetime_min, dos_filetime_max] (Windows: ERROR_INVALID_PARAMETER).
constexpr std::optional<dos_date_time> dos_from_filetime(filetime ft) noexcept {
    using namespace civil_detail;
    if (ft.ticks < dos_filetime_min || ft.ticks > dos_filetime_max) return std::nullopt;
    const auto c = civil_from_filetime(filetime{ft.ticks + 2 * ticks_per_second - 1});
    if (!c || c->year < 1980 || c->year > 2107) return std::nullopt;
    dos_date_time d;
    d.date = static_cast<std::uint16_t>(((c->year - 1980) << 9) | (c->month << 5) | c->day);
    d.time = static_cast<std::uint16_t>((c->hour << 11) | (c->minute << 5) | (c->second >> 1));
    return d;
}

/// MS-DOS date and time → FILETIME (DosDateTimeToFileTime), no time-zone
/// conversion. nullopt (Windows: FALSE, ERROR_INVALID_PARAMETER) when the
/// month is 0 or > 12, the day is 0 or past the month's end, the hour ≥ 24,
/// the minute ≥ 60 or the seconds field ≥ 30. Every year field (1980–2107) is
/// valid.
constexpr std::optional<filetime> filetime_from_dos(std::uint16_t date, std::uint16_t time) noexcept {
    civil_time c;
    c.year = 1980 + (date >> 9);
    c.month = (date >> 5) & 0x0F;
    c.day = date & 0x1F;
    c.hour = time >> 11;
    c.minute = (time >> 5) & 0x3F;
    c.second = (time & 0x1F) * 2;
    c.millisecond = 0;
    return filetime_from_civil(c);
}

/// Local time ↔ UTC on the FILETIME scale with a fixed UTC offset (local − UTC),
/// as FileTimeToLocalFileTime / LocalFileTimeToFileTime do with the current
/// bias. The arithmetic is modulo 2^64 and never fails, exactly like Windows,
/// which neither range-checks the input nor the result of these two calls.
constexpr std::uint64_t local_ticks_from_utc(std::uint64_t utc, std::chrono::seconds offset) noexcept {
    return utc +
           static_cast<std::uint64_t>(offset.count()) * static_cast<std::uint64_t>(civil_detail::ticks_per_second);
}
constexpr std::uint64_t utc_ticks_from_local(std::uint64_t local, std::chrono::seconds offset) noexcept {
    return local -
           static_cast<std::uint64_t>(offset.count()) * static_cast<std::uint64_t>(civil_detail::ticks_per_second);
}

/// The offset of local time from UTC in effect NOW (tm_gmtoff of localtime_r
/// of the current time, after tzset(3) so that a changed TZ is seen), e.g.
/// +3600 s for CET in winter, +7200 s for CEST. Windows' FileTimeToLocalFileTime
/// applies the current bias to every date, whatever the date's own DST state;
/// so does the Win32 layer. Errors: the native errno when localtime_r fails.
/// Thread-safe, but tzset(3) races with concurrent setenv("TZ").
PROCTIMES_API result<std::chrono::seconds> current_utc_offset() noexcept;

/// Now, as a FILETIME instant (GetSystemTimeAsFileTime): CLOCK_REALTIME floored
/// to 100 ns. Returns 0 in the impossible case of a clock before 1601.
PROCTIMES_API filetime system_time_now() noexcept;

}  // namespace proctimes::inline v1
