// tools/proctimes/numbers.hpp — one check for every numeric option: a strict
// parse (parse/number.hpp: no "nan", "inf" or exponent, no overflow) and a
// range named in human terms, so a bad value is a one-line usage error
// (exit 2) before any conversion can overflow.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace proctimes::cli {

/// A number of seconds ("0.5", "2", ".25") from `min` to `max`; `human` names
/// the range in the error ("1 ms to 1 day").
CLI::Validator seconds_in(std::chrono::nanoseconds min, std::chrono::nanoseconds max, const std::string& human);

/// A whole number (decimal digits only) from `min` to `max`.
CLI::Validator whole_number_in(std::uint64_t min, std::uint64_t max);

}  // namespace proctimes::cli
