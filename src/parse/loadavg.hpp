// SPDX-License-Identifier: MIT
// Pure parser of /proc/loadavg (proc(5)): "0.20 0.18 0.12 1/80 11206\n" —
// three load averages, then "runnable/total" scheduling entities, then the
// last pid created. No I/O; unit-tested (tests/unit/loadavg_test.cpp) and
// fuzzed (fuzz/fuzz_loadavg.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace proctimes::inline v1::parse {

/// Field 4 of /proc/loadavg, "running/total": the tasks runnable right now
/// (the reader included) and all tasks (threads) of the system.
struct task_load {
    std::uint64_t running = 0;
    std::uint64_t total = 0;
};

/// Parses field 4: the text after the third single space up to the next
/// space (or the end), as two whole decimal numbers joined by '/'. The load
/// averages before it are skipped unread. nullopt when there are fewer than
/// four fields or field 4 is not DIGITS/DIGITS (signs, spaces inside, values
/// past int64 are refused).
std::optional<task_load> parse_loadavg_tasks(std::string_view text) noexcept;

}  // namespace proctimes::inline v1::parse
