// SPDX-License-Identifier: MIT
// What a backend's exit listener can tell the lifecycle (exit/lifecycle.hpp)
// about a task's end, in portable terms. A backend converts its own records
// into these: Linux's taskstats records (src/linux/exit/taskstats.hpp) into an
// exit_record, its eBPF exit stream's (src/linux/exit/monitor.cpp) into
// exit_final_values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "proctimes/exit.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1::detail {

/// A kernel's accounting record of one task's end: its exact run time, the
/// tick-sampled user/kernel split to divide it by, and how long it lived.
struct exit_record {
    std::chrono::nanoseconds run{};  ///< the scheduler's run time (exact)
    std::uint64_t user_us = 0;       ///< tick-sampled user time, µs (the split's user side)
    std::uint64_t kernel_us = 0;     ///< tick-sampled kernel time, µs (the split's kernel side)
    /// From the task's start to its end; nullopt where the kernel left it unfilled.
    std::optional<std::chrono::microseconds> elapsed;
};

/// A task's exact final values, read at its release: CPU time to the
/// nanosecond and its exit instant (Linux's eBPF exit stream).
struct exit_final_values {
    std::chrono::nanoseconds kernel{}, user{};
    std::optional<instant> exit;
    std::optional<exit_status> status;
};

}  // namespace proctimes::inline v1::detail
