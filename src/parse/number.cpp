// SPDX-License-Identifier: MIT
#include "parse/number.hpp"

#include <cstdint>
#include <limits>

namespace proctimes::inline v1::parse {

std::optional<std::chrono::nanoseconds> parse_decimal_seconds(std::string_view text) noexcept {
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    const auto dot = text.find('.');
    const std::string_view whole = text.substr(0, dot);
    const std::string_view frac = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
    if (whole.empty() && frac.empty()) return std::nullopt;  // "", "."
    std::int64_t seconds = 0;
    for (const char c : whole) {
        if (c < '0' || c > '9') return std::nullopt;
        const int d = c - '0';
        if (seconds > (max - d) / 10) return std::nullopt;
        seconds = seconds * 10 + d;
    }
    std::int64_t ns = 0, scale = 100'000'000;
    for (const char c : frac) {
        if (c < '0' || c > '9') return std::nullopt;
        ns += (c - '0') * scale;  // scale reaches 0 after nine digits: the rest is dropped
        scale /= 10;
    }
    if (seconds > (max - ns) / 1'000'000'000) return std::nullopt;
    return std::chrono::nanoseconds{seconds * 1'000'000'000 + ns};
}

std::optional<std::uint64_t> parse_whole_number(std::string_view text) noexcept {
    if (text.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
        v = v * 10 + digit;
    }
    return v;
}

}  // namespace proctimes::inline v1::parse
