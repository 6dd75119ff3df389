// SPDX-License-Identifier: MIT
// tools/proctimes/numbers.hpp — one check for every numeric option: a strict
// parse (parse/number.hpp: no "nan", "inf" or exponent, no overflow) and a
// range named in human terms, so a bad value is a one-line usage error
// (exit 2) before any conversion can overflow.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include <sys/types.h>

#include <CLI/CLI.hpp>

namespace proctimes::cli {

/// A number of seconds ("0.5", "2", ".25") from `min` to `max`; `human` names
/// the range in the error ("1 ms to 1 day").
CLI::Validator seconds_in(std::chrono::nanoseconds min, std::chrono::nanoseconds max, const std::string& human);

/// A whole number (decimal digits only) from `min` to `max`.
CLI::Validator whole_number_in(std::uint64_t min, std::uint64_t max);

/// A process id as typed after show or watch. Empty when it is not a decimal
/// number ("proctimes: 'x': not a process id") or does not fit a pid_t
/// ("proctimes: pid N: " and the library's invalid_argument message); the
/// message goes to `err` when one is given. Numbers a pid cannot be (0,
/// negative) are left to process::open, which answers invalid_argument.
std::optional<pid_t> pid_argument(const std::string& arg, std::ostream* err);

}  // namespace proctimes::cli
