// SPDX-License-Identifier: MIT
#include "numbers.hpp"

#include <charconv>
#include <limits>
#include <ostream>

#include <fmt/format.h>

#include "output/output.hpp"
#include "parse/number.hpp"
#include "proctimes/error.hpp"

namespace proctimes::cli {

namespace {

// "0.001", "86400": a duration in seconds with no trailing zeros.
std::string seconds_text(std::chrono::nanoseconds v) {
    std::string s = fmt::format("{}.{:09}", v.count() / 1'000'000'000, v.count() % 1'000'000'000);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

// The value as typed, cut and escaped: an error line stays one short line.
std::string shown_value(const std::string& v) {
    std::string s = v.size() > 40 ? v.substr(0, 40) + "..." : v;
    return "'" + escape_for_table(s) + "'";
}

}  // namespace

CLI::Validator seconds_in(std::chrono::nanoseconds min, std::chrono::nanoseconds max, const std::string& human) {
    const std::string range = fmt::format("from {} to {} ({})", seconds_text(min), seconds_text(max), human);
    return CLI::Validator(
        [min, max, range](std::string& v) -> std::string {
            const auto s = parse::parse_decimal_seconds(v);
            if (s && *s >= min && *s <= max) return {};
            return fmt::format("{} is not a number of seconds {}", shown_value(v), range);
        },
        fmt::format("in [{} - {}]", seconds_text(min), seconds_text(max)), "seconds_in");
}

CLI::Validator whole_number_in(std::uint64_t min, std::uint64_t max) {
    const std::string range = fmt::format("from {} to {}", min, max);
    return CLI::Validator(
        [min, max, range](std::string& v) -> std::string {
            const auto n = parse::parse_whole_number(v);
            if (n && *n >= min && *n <= max) return {};
            return fmt::format("{} is not a whole number {}", shown_value(v), range);
        },
        fmt::format("in [{} - {}]", min, max), "whole_number_in");
}

std::optional<pid_t> pid_argument(const std::string& arg, std::ostream* err) {
    long long v = 0;
    const char* end = arg.data() + arg.size();
    const auto [p, ec] = std::from_chars(arg.data(), end, v);
    if (ec != std::errc{} || p != end) {
        if (err) *err << fmt::format("proctimes: '{}': not a process id\n", escape_for_table(arg));
        return std::nullopt;
    }
    if (v < std::numeric_limits<pid_t>::min() || v > std::numeric_limits<pid_t>::max()) {
        if (err) *err << fmt::format("proctimes: pid {}: {}\n", v, make_error_code(errc::invalid_argument).message());
        return std::nullopt;
    }
    return static_cast<pid_t>(v);
}

}  // namespace proctimes::cli
