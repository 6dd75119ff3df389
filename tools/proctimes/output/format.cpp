// SPDX-License-Identifier: MIT
// The pure formatting helpers of the proctimes command's output (durations,
// instants, names, CSV quoting) and the record every writer reads. The writers
// themselves are table.cpp, json.cpp and csv.cpp.
#include "cli.hpp"
#include "output.hpp"
#include "system.hpp"

#include <algorithm>
#include <ctime>
#include <iterator>
#include <limits>
#include <ostream>

#include <fmt/format.h>

namespace proctimes::cli {

using std::chrono::nanoseconds;

// ---- helpers -------------------------------------------------------------------

namespace {

// "whole" or "whole.fff" with the fraction (frac_digits wide) truncated and
// its trailing zeros dropped.
std::string trimmed_decimal(std::int64_t whole, std::int64_t frac, int frac_digits) {
    std::string s = fmt::format("{}.{:0{}}", whole, frac, frac_digits);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

// value / unit with 3 decimals, truncated.
std::string in_unit(std::int64_t ns, std::int64_t unit) {
    return trimmed_decimal(ns / unit, (ns % unit) * 1000 / unit, 3);
}

}  // namespace

std::string human_duration(nanoseconds d) {
    std::int64_t ns = d.count();
    if (ns == 0) return "0 s";
    if (ns < 0) {
        if (ns == std::numeric_limits<std::int64_t>::min()) ++ns;  // one ns off, not UB
        std::string out = human_duration(nanoseconds{-ns});
        out.insert(out.begin(), '-');
        return out;
    }
    constexpr std::int64_t us = 1'000, ms = 1'000'000, s = 1'000'000'000, min = 60 * s, h = 60 * min;
    if (ns < us) return fmt::format("{} ns", ns);
    if (ns < ms) return in_unit(ns, us) + " µs";
    if (ns < s) return in_unit(ns, ms) + " ms";
    if (ns < min) return in_unit(ns, s) + " s";
    if (ns < h) {
        const std::int64_t rest = ns % min;
        return fmt::format("{} min {} s", ns / min, trimmed_decimal(rest / s, (rest % s) / (s / 10), 1));
    }
    return fmt::format("{} h {:02} min", ns / h, (ns % h) / min);
}

std::string table_time(instant t, bool utc) {
    using namespace std::chrono;
    const auto secs = floor<seconds>(t);
    const auto millis = duration_cast<milliseconds>(t - secs).count();
    const std::time_t tt = static_cast<std::time_t>(secs.time_since_epoch().count());
    std::tm tm{};
    long offset = 0;
    if (!sys::civil_fields(tt, utc, tm, offset)) return "?";
    const long off_min = offset / 60;
    const long abs_off = off_min < 0 ? -off_min : off_min;
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} {}{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis, off_min < 0 ? '-' : '+', abs_off / 60,
                       abs_off % 60);
}

std::string table_exit(const task_record& r, bool utc) {
    if (!r.exit) return "-";
    return (r.exit_source == exit_source::observed ? "<= " : "") + table_time(*r.exit, utc);
}

std::string_view to_string(interval_basis b) noexcept { return word_of(b, "?"); }

std::string_view to_string(end_seen_by s) noexcept { return word_of(s, "snapshot"); }

std::string source_text(const task_record& r) { return r.source ? std::string(to_string(*r.source)) : std::string(); }

std::string state_text(const task_record& r) { return r.state ? std::string(to_string(*r.state)) : std::string(); }

void append_rfc3339_utc(std::string& out, instant t) {
    using namespace std::chrono;
    // Pure calendar arithmetic (no libc, no time zone): whole 100 ns ticks, floored.
    const auto ticks = floor<filetime_duration>(t);
    const auto day = floor<days>(ticks);
    const year_month_day ymd{day};
    const hh_mm_ss<filetime_duration> tod{ticks - day};
    fmt::format_to(std::back_inserter(out), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:07}Z", static_cast<int>(ymd.year()),
                   static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), tod.hours().count(),
                   tod.minutes().count(), tod.seconds().count(), tod.subseconds().count());
}

std::string rfc3339_utc(instant t) {
    std::string out;
    append_rfc3339_utc(out, t);
    return out;
}

std::optional<std::uint64_t> filetime_ticks(instant t) {
    auto ft = filetime_from_time(t);
    if (!ft) return std::nullopt;
    return ft->ticks;
}

std::string shell_quote(const std::string& a) {
    const auto plain = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
    };
    if (!a.empty() && std::all_of(a.begin(), a.end(), plain)) return a;
    std::string q = "'";
    for (const char c : a) q += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);
    return q + "'";
}

std::string escape_for_table(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (const char ch : name) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\\') {
            out += "\\\\";
        } else if (c >= 0x20 && c <= 0x7E) {
            out += ch;
        } else {
            out += fmt::format("\\x{:02x}", c);
        }
    }
    return out;
}

// Length of the valid UTF-8 sequence at the start of s (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 if it is not one.
std::size_t utf8_sequence_length(std::string_view s) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(1) || !cont(2)) return 0;
        if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
        if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogates
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(1) || !cont(2) || !cont(3)) return 0;
        if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
        if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
        return 4;
    }
    return 0;
}

std::string to_valid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    while (!bytes.empty()) {
        const std::size_t n = utf8_sequence_length(bytes);
        if (n > 0) {
            out.append(bytes.substr(0, n));
            bytes.remove_prefix(n);
        } else {
            // A stray byte 0x80..0xFF: encode U+0080..U+00FF in two bytes.
            const auto c = static_cast<unsigned char>(bytes.front());
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
            bytes.remove_prefix(1);
        }
    }
    return out;
}

std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

task_record make_record(pid_t pid, std::optional<pid_t> tid, std::string name, const proctimes::task_times& t) {
    task_record r;
    r.pid = pid;
    r.tid = tid;
    r.name = std::move(name);
    r.creation = t.creation;
    r.exit = t.exit;
    if (t.exit) {
        r.exit_source = t.precision.exit_source;
        r.exit_earliest = t.exit_earliest;
        r.exit_resolution = t.precision.exit_resolution;
    }
    r.kernel = t.kernel;
    r.user = t.user;
    r.resolution = t.precision.resolution;
    r.total_resolution = t.precision.total_resolution;
    r.source = t.precision.source;
    r.state = t.state;
    r.sampled_at = t.sampled_at;
    return r;
}

int finish_output(std::ostream& out, std::ostream& err, bool failed) {
    out.flush();
    if (!out) {
        err << "proctimes: error writing the output\n";
        return exit_failure;
    }
    return failed ? exit_failure : exit_success;
}

}  // namespace proctimes::cli
