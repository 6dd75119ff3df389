// SPDX-License-Identifier: MIT
// Pure parsers of the machine-wide files behind read_machine_status
// (proctimes/machine.hpp): the load averages of /proc/loadavg, the totals of
// /proc/meminfo, the per-CPU lines of /proc/stat (proc(5)). No I/O;
// unit-tested (tests/unit/parse_machine_test.cpp) and fuzzed
// (fuzz/fuzz_machine.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace proctimes::inline v1::parse {

/// The first three fields of /proc/loadavg, each DIGITS.DIGITS (the kernel
/// prints two decimals; any number of fraction digits is taken), separated
/// by single spaces. nullopt for anything else.
std::optional<std::array<double, 3>> parse_load_averages(std::string_view text) noexcept;

/// "MemTotal:" and "MemAvailable:" of /proc/meminfo, in bytes (the file
/// says kB, meaning KiB). Each is empty when its line is missing or is not
/// "NAME: <spaces> DIGITS kB"; a value past 2^64 bytes is refused.
struct meminfo_totals {
    std::optional<std::uint64_t> total_bytes, available_bytes;
};
meminfo_totals parse_meminfo_totals(std::string_view text) noexcept;

/// One "cpuN" line of /proc/stat: N and its counters in clock ticks
/// (user nice system idle iowait irq softirq steal guest guest_nice; the
/// missing ones 0).
struct per_cpu_line {
    int cpu = 0;
    std::array<std::uint64_t, 10> ticks{};
};
/// Every well-formed "cpuN" line of the text (at least four counters, all
/// unsigned decimals separated by spaces, N at most 2^20), in file order;
/// malformed ones are skipped.
std::vector<per_cpu_line> parse_proc_stat_per_cpu(std::string_view text);

}  // namespace proctimes::inline v1::parse
