// SPDX-License-Identifier: MIT
// Numbers as people type them on a command line: pure parsers, no locale, no
// floating point, so "nan", "inf" and "1e308" are not numbers and no value can
// overflow on its way to a duration.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace proctimes::inline v1::parse {

/// Parses a decimal number of seconds, "DIGITS[.DIGITS]" or ".DIGITS" (no
/// sign, exponent, spaces, "nan" or "inf"), into nanoseconds. Digits past the
/// ninth decimal are dropped (the value is truncated to 1 ns). nullopt when
/// the text is not such a number or the value does not fit in
/// std::chrono::nanoseconds (about 292 years).
std::optional<std::chrono::nanoseconds> parse_decimal_seconds(std::string_view text) noexcept;

/// Parses a whole number, "DIGITS" only (no sign, spaces or exponent), into an
/// unsigned 64-bit value. nullopt when the text is not such a number or the
/// value does not fit.
std::optional<std::uint64_t> parse_whole_number(std::string_view text) noexcept;

}  // namespace proctimes::inline v1::parse
