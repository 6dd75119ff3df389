// SPDX-License-Identifier: MIT
// tools/proctimes/top/cells.hpp — the text of the view's cells: CPU times,
// ages, sizes, percentages, an ended process's status; pure, so tested alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "top/frame.hpp"

namespace proctimes::cli::top {

/// CPU time since creation: "0:03.14" (minutes:seconds.centiseconds) below
/// 100 minutes, "12h05m" below 100 hours, then "1234h".
std::string cpu_time_cell(std::chrono::nanoseconds t);
/// How long ago: "42s", "5m03", "3h12", "2d04", "312d".
std::string age_cell(std::chrono::nanoseconds age);
/// Bytes in binary units: "812K", "12.3M", "1.2G".
std::string bytes_cell(std::uint64_t bytes);
/// A duration in seconds with three decimals ("1.250 s") or milliseconds below one.
std::string seconds_text(std::chrono::nanoseconds t);
/// An ended process's status: "exit 0", "signal 9 (KILL)", "ended" where unknown; "" for a live one.
std::string end_status(const top_row& r);
/// A signal's short name ("TERM"), or its number.
std::string signal_name(int sig);

}  // namespace proctimes::cli::top
