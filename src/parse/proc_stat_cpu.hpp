// SPDX-License-Identifier: MIT
// Pure parser for the aggregate "cpu" line of /proc/stat (proc(5)): the
// system's CPU time by state since boot, in USER_HZ ticks. No I/O; unit-tested
// (tests/serve/ledger_test.cpp) and fuzzed (fuzz/fuzz_proc_stat_cpu.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace proctimes::inline v1::parse {

/// The ten counters of the "cpu" line, in clock ticks (USER_HZ). Kernels
/// before 2.6.11 print fewer fields; the missing ones are 0. `guest` and
/// `guest_nice` are already included in `user` and `nice` (the kernel adds a
/// vCPU's guest time to both: kernel/sched/cputime.c, account_guest_time).
struct proc_stat_cpu {
    std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0;
    std::uint64_t irq = 0, softirq = 0, steal = 0, guest = 0, guest_nice = 0;
    int fields = 0;  ///< how many counters the line had (4..10)
    int cpus = 0;    ///< how many per-CPU lines ("cpuN ...") the text has: the CPUs online
};

/// Parses the first line that starts with "cpu " (the sum over all CPUs) of
/// the whole text of /proc/stat. nullopt without such a line, with fewer than
/// four counters, or with anything but unsigned decimal numbers separated by
/// spaces on it. More than ten counters (a future kernel) are ignored.
std::optional<proc_stat_cpu> parse_proc_stat_cpu(std::string_view text) noexcept;

}  // namespace proctimes::inline v1::parse
