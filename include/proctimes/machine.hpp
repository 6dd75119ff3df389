// SPDX-License-Identifier: MIT
// proctimes/machine.hpp — the machine as a whole beside its processes: load
// averages, memory totals and each CPU's time by state. What the header of a
// live view (proctimes top) shows; the ledger's aggregate CPU line is
// read_system_cpu_times (proctimes/ledger.hpp).
//
//   auto m = proctimes::read_machine_status();
//   if (m && m->load) use((*m->load)[0]);
//
// Sources. Linux: <proc_root>/loadavg, <proc_root>/meminfo ("MemTotal:",
// "MemAvailable:"), the "cpuN" lines of <proc_root>/stat. Elsewhere:
// errc::not_supported. Thread-safe; nothing is kept between calls.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proctimes/export.h"
#include "proctimes/ledger.hpp"
#include "proctimes/result.hpp"

namespace proctimes::inline v1 {

/// What read_machine_status reads, as bits of a set.
enum class machine_part : std::uint32_t {
    none = 0,
    load = 1U << 0,     ///< the 1, 5 and 15 minute load averages
    memory = 1U << 1,   ///< total and available memory
    per_cpu = 1U << 2,  ///< each CPU's time by state
    all = load | memory | per_cpu,
};
constexpr machine_part operator|(machine_part a, machine_part b) noexcept {
    return static_cast<machine_part>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr bool has(machine_part a, machine_part b) noexcept {
    return (static_cast<std::uint32_t>(a) & static_cast<std::uint32_t>(b)) == static_cast<std::uint32_t>(b);
}

/// One CPU's counters: its number (N of "cpuN") and its time by state since
/// boot (`cpus` is 1; `since_boot` is when the file was read).
struct PROCTIMES_API cpu_times_of {
    int cpu = 0;
    system_cpu_times times;
};

/// One read of the machine. A part asked for that could not be read is
/// empty (per_cpu: no entries).
struct PROCTIMES_API machine_status {
    /// Runnable and uninterruptible tasks averaged over 1, 5 and 15 minutes.
    std::optional<std::array<double, 3>> load;
    /// Memory the system manages (MemTotal) and the estimate of what can be
    /// given to new work without swapping (MemAvailable), in bytes.
    std::optional<std::uint64_t> memory_total_bytes, memory_available_bytes;
    /// Each online CPU, in the order the system lists them.
    std::vector<cpu_times_of> per_cpu;
};

/// Reads the parts `parts` of the machine's status. Errors: the native errno
/// of the first read that failed when no part could be read,
/// errc::malformed_data when no file read had the documented format,
/// errc::not_supported where the system has no such reads.
PROCTIMES_API result<machine_status> read_machine_status(machine_part parts = machine_part::all,
                                                         const std::string& proc_root = "/proc") noexcept;

}  // namespace proctimes::inline v1
