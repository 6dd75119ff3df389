// SPDX-License-Identifier: MIT
#include "record/when.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace proctimes::cli::record {

namespace {

using std::chrono::nanoseconds;

/// A decimal number ("12", "1.5", ".5") at the front of `s`, consumed.
std::optional<double> take_number(std::string_view& s) {
    std::size_t n = 0;
    bool digits = false, point = false;
    while (n < s.size()) {
        const char c = s[n];
        if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
            digits = true;
        } else if (c == '.' && !point) {
            point = true;
        } else {
            break;
        }
        ++n;
    }
    if (!digits) return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + n, v);
    if (ec != std::errc{} || end != s.data() + n || !std::isfinite(v)) return std::nullopt;
    s.remove_prefix(n);
    return v;
}

struct unit_row {
    std::string_view word;
    double ns;
};
constexpr std::array<unit_row, 7> duration_units{{
    {"ms", 1e6},
    {"s", 1e9},
    {"m", 60e9},
    {"min", 60e9},
    {"h", 3600e9},
    {"d", 86400e9},
    {"w", 7 * 86400e9},
}};

constexpr double max_ns = 100.0 * 365 * 86400e9;  // a century: more is surely a typo

std::optional<double> duration_unit(std::string_view u) {
    for (const auto& row : duration_units)
        if (row.word == u) return row.ns;
    return std::nullopt;
}

/// "1h30m": one or more number-and-unit pairs; with `bare_seconds`, a lone
/// number is seconds.
std::optional<nanoseconds> read_duration(std::string_view s, bool bare_seconds) {
    double total = 0;
    bool any = false;
    while (!s.empty()) {
        const auto v = take_number(s);
        if (!v) return std::nullopt;
        std::size_t n = 0;
        while (n < s.size() && std::isalpha(static_cast<unsigned char>(s[n])) != 0) ++n;
        const std::string_view unit = s.substr(0, n);
        s.remove_prefix(n);
        if (unit.empty()) {
            if (!bare_seconds || any || !s.empty()) return std::nullopt;
            total += *v * 1e9;
        } else {
            const auto f = duration_unit(unit);
            if (!f) return std::nullopt;
            total += *v * *f;
        }
        any = true;
    }
    if (!any || total > max_ns) return std::nullopt;
    return nanoseconds{static_cast<std::int64_t>(std::llround(total))};
}

std::optional<std::uint64_t> read_size(std::string_view s) {
    auto v = take_number(s);
    if (!v) return std::nullopt;
    double mult = 0;
    static constexpr std::array<std::pair<char, double>, 4> prefixes{
        {{'K', 1024.0}, {'M', 1024.0 * 1024}, {'G', 1024.0 * 1024 * 1024}, {'T', 1024.0 * 1024 * 1024 * 1024}}};
    if (s == "B") {
        mult = 1;
    } else if (!s.empty()) {
        char p = s.front();
        if (p == 'k') p = 'K';
        for (const auto& [c, m] : prefixes)
            if (c == p) mult = m;
        const std::string_view rest = s.substr(1);
        if (mult == 0 || !(rest.empty() || rest == "B" || rest == "iB")) return std::nullopt;
    } else {
        return std::nullopt;  // a bare number: bytes or seconds? say it.
    }
    const double bytes = *v * mult;
    if (bytes < 1 || bytes > 1e18) return std::nullopt;
    return static_cast<std::uint64_t>(std::llround(bytes));
}

/// Exactly `n` digits at the front of `s`, consumed.
std::optional<int> take_digits(std::string_view& s, std::size_t n) {
    if (s.size() < n) return std::nullopt;
    int v = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (std::isdigit(static_cast<unsigned char>(s[i])) == 0) return std::nullopt;
        v = v * 10 + (s[i] - '0');
    }
    s.remove_prefix(n);
    return v;
}

bool take(std::string_view& s, char c) {
    if (s.empty() || s.front() != c) return false;
    s.remove_prefix(1);
    return true;
}

struct clock_time {
    int hour = 0, minute = 0, second = 0;
    nanoseconds fraction{0};
};

/// "HH:MM[:SS[.fff]]" at the front of `s`, consumed.
std::optional<clock_time> take_clock(std::string_view& s) {
    clock_time c;
    const auto h = take_digits(s, 2);
    if (!h || !take(s, ':')) return std::nullopt;
    const auto m = take_digits(s, 2);
    if (!m) return std::nullopt;
    c.hour = *h;
    c.minute = *m;
    if (take(s, ':')) {
        const auto sec = take_digits(s, 2);
        if (!sec) return std::nullopt;
        c.second = *sec;
        if (take(s, '.') || take(s, ',')) {
            std::int64_t ns = 0;
            int digits = 0;
            while (!s.empty() && std::isdigit(static_cast<unsigned char>(s.front())) != 0) {
                if (digits < 9) {
                    ns = ns * 10 + (s.front() - '0');
                    ++digits;
                }
                s.remove_prefix(1);
            }
            if (digits == 0) return std::nullopt;
            for (int i = digits; i < 9; ++i) ns *= 10;
            c.fraction = nanoseconds{ns};
        }
    }
    if (c.hour > 23 || c.minute > 59 || c.second > 60) return std::nullopt;
    return c;
}

/// The instant of local calendar fields (mktime decides daylight saving).
std::optional<instant> local_instant(std::tm fields, nanoseconds fraction) {
    fields.tm_isdst = -1;
    const std::tm asked = fields;
    const std::time_t t = std::mktime(&fields);
    if (t == static_cast<std::time_t>(-1) && (asked.tm_year != 69 || asked.tm_mday != 31)) return std::nullopt;
    return instant{std::chrono::seconds{t}} + fraction;
}

std::optional<instant> read_iso(std::string_view s) {
    const auto y = take_digits(s, 4);
    if (!y || !take(s, '-')) return std::nullopt;
    const auto mo = take_digits(s, 2);
    if (!mo || !take(s, '-')) return std::nullopt;
    const auto d = take_digits(s, 2);
    if (!d) return std::nullopt;
    const std::chrono::year_month_day ymd{std::chrono::year{*y}, std::chrono::month{static_cast<unsigned>(*mo)},
                                          std::chrono::day{static_cast<unsigned>(*d)}};
    if (!ymd.ok()) return std::nullopt;
    clock_time c;
    if (take(s, 'T') || take(s, ' ')) {
        const auto ct = take_clock(s);
        if (!ct) return std::nullopt;
        c = *ct;
    }
    const auto day_part = std::chrono::sys_days{ymd};
    const nanoseconds of_day =
        std::chrono::hours{c.hour} + std::chrono::minutes{c.minute} + std::chrono::seconds{c.second} + c.fraction;
    if (s.empty()) {
        std::tm f{};
        f.tm_year = *y - 1900;
        f.tm_mon = *mo - 1;
        f.tm_mday = *d;
        f.tm_hour = c.hour;
        f.tm_min = c.minute;
        f.tm_sec = c.second;
        return local_instant(f, c.fraction);
    }
    if (s == "Z" || s == "z") return instant{day_part} + of_day;
    const char sign = s.front();
    if (sign != '+' && sign != '-') return std::nullopt;
    s.remove_prefix(1);
    const auto oh = take_digits(s, 2);
    if (!oh) return std::nullopt;
    (void)take(s, ':');
    int om = 0;
    if (!s.empty()) {
        const auto m = take_digits(s, 2);
        if (!m || !s.empty()) return std::nullopt;
        om = *m;
    }
    if (*oh > 23 || om > 59) return std::nullopt;
    const nanoseconds offset = std::chrono::hours{*oh} + std::chrono::minutes{om};
    return instant{day_part} + of_day - (sign == '+' ? offset : -offset);
}

/// "today 03:00", "yesterday 23:30": local clock time on that day.
std::optional<instant> read_day_clock(std::string_view s, instant now) {
    int days_back = 0;
    if (s.starts_with("today ")) {
        s.remove_prefix(6);
    } else if (s.starts_with("yesterday ")) {
        s.remove_prefix(10);
        days_back = 1;
    } else {
        return std::nullopt;
    }
    const auto c = take_clock(s);
    if (!c || !s.empty()) return std::nullopt;
    const std::time_t t =
        std::chrono::system_clock::to_time_t(std::chrono::time_point_cast<std::chrono::system_clock::duration>(now));
    std::tm f{};
    if (localtime_r(&t, &f) == nullptr) return std::nullopt;
    f.tm_mday -= days_back;
    f.tm_hour = c->hour;
    f.tm_min = c->minute;
    f.tm_sec = c->second;
    return local_instant(f, c->fraction);
}

/// "1795867200" or "1795867200.25": seconds since the Unix epoch, exact to the nanosecond.
std::optional<instant> read_epoch(std::string_view s) {
    const std::size_t point = s.find('.');
    const std::string_view whole = s.substr(0, point);
    std::int64_t secs = 0;
    const auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), secs);
    if (whole.empty() || ec != std::errc{} || end != whole.data() + whole.size() || secs < 0 || secs > 99'999'999'999)
        return std::nullopt;
    std::int64_t ns = 0;
    if (point != std::string_view::npos) {
        const std::string_view frac = s.substr(point + 1);
        if (frac.empty() || frac.size() > 9) return std::nullopt;
        for (const char c : frac) {
            if (std::isdigit(static_cast<unsigned char>(c)) == 0) return std::nullopt;
            ns = ns * 10 + (c - '0');
        }
        for (std::size_t i = frac.size(); i < 9; ++i) ns *= 10;
    }
    return instant{std::chrono::seconds{secs} + nanoseconds{ns}};
}

}  // namespace

parsed<std::chrono::nanoseconds> parse_duration(std::string_view text, bool bare_seconds) {
    if (auto d = read_duration(text, bare_seconds); d && d->count() > 0) return {*d};
    return {fmt::format("'{}' is not a duration: expected a number and a unit, as in 500ms, 10s, 5m, 12h, 7d{}", text,
                        bare_seconds ? " (a bare number is seconds)" : "")};
}

parsed<std::uint64_t> parse_size(std::string_view text) {
    if (auto b = read_size(text)) return {*b};
    return {
        fmt::format("'{}' is not a size: expected a number and a unit, as in 800K, 500M, 2G (powers of 1024)", text)};
}

parsed<retention> parse_retention(std::string_view text) {
    retention r;
    bool age = false, size = false;
    std::string_view rest = text;
    while (true) {
        const auto comma = rest.find(',');
        const std::string_view part = rest.substr(0, comma);
        if (auto d = read_duration(part, false); d && d->count() > 0 && !age) {
            r.max_age = *d;
            age = true;
        } else if (auto b = read_size(part); b && !size) {
            r.max_bytes = *b;
            size = true;
        } else {
            return {fmt::format(
                "'{}' is not a retention: expected an age (7d, 12h, 30m), a size (500M, 2G: powers of 1024) or "
                "one of each, comma-separated (7d,2G)",
                text)};
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return {r};
}

parsed<instant> parse_instant(std::string_view text, instant now) {
    if (text == "now") return {now};
    if (text.starts_with('-') && text.size() > 1) {
        if (auto d = read_duration(text.substr(1), false)) return {now - *d};
    } else if (text.starts_with('@')) {
        if (auto t = read_epoch(text.substr(1))) return {*t};
    } else if (auto t = read_day_clock(text, now)) {
        return {*t};
    } else if (auto i = read_iso(text)) {
        return {*i};
    }
    return {
        fmt::format("'{}' is not a time: expected ISO 8601 (2026-11-28T03:00:00Z, or 2026-11-28 03:00 in local time), "
                    "a time before now (-1h, -30m, -1h30m), 'today 03:00', 'yesterday 23:30', 'now' or @SECONDS",
                    text)};
}

std::string describe_duration(std::chrono::nanoseconds d) {
    const double s = std::chrono::duration<double>(d).count();
    if (s < 1) return fmt::format("{:g} ms", s * 1e3);
    if (s < 120) return fmt::format("{:g} s", s);
    if (s < 7200) return fmt::format("{:g} min", s / 60);
    if (s < 2 * 86400) return fmt::format("{:g} h", s / 3600);
    return fmt::format("{:g} d", s / 86400);
}

}  // namespace proctimes::cli::record
