// SPDX-License-Identifier: MIT
// The exit machinery's failure counts (proctimes/exit.hpp: exit_failures):
// every failure a backend's exit monitor, listener or reaper catches is
// counted here by kind, never dropped in silence. Portable: process-wide
// atomic counters, read by exit_records_status(failures) and doctor.
#pragma once

#include <cstdint>

#include "proctimes/exit.hpp"

namespace proctimes::inline v1::detail {

/// One field of exit_failures each.
enum class exit_failure : std::uint8_t {
    monitor_start,
    watch,
    unwatch,
    deliver,
    await,
    query,
    reap_deferred,
    reap_lost,
    ends_not_kept,
    bpf_sweep,
};

/// Counts one failure of `kind` (lock-free; callable from any thread).
void count_exit_failure(exit_failure kind) noexcept;

/// The counts so far.
exit_failures exit_failure_counts() noexcept;

}  // namespace proctimes::inline v1::detail
