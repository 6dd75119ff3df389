// SPDX-License-Identifier: MIT
// Exit records that reach a collection after the interval they were dated in
// was closed: the drain thread had read (taskstats) or the kernel had
// released (eBPF) them before the previous snapshot was stamped, and handed
// them over after that collection had taken its share. The ledger takes the
// records of (before, after] only, so they would be dropped unseen.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "proctimes/ledger.hpp"

namespace proctimes::cli::serve {

/// Dates each record of `exits` received at or before `closed` (the previous
/// snapshot's since_boot) 1 ns after it, and lengthens its elapsed time by as
/// much, so that its start (received - elapsed) does not move: the interval
/// that ends now counts it. Returns how many were late.
inline std::size_t date_late_records(std::vector<ended_task>& exits, std::chrono::nanoseconds closed) {
    std::size_t late = 0;
    for (auto& e : exits) {
        if (e.received_since_boot > closed) continue;
        const auto shift = closed + std::chrono::nanoseconds{1} - e.received_since_boot;
        e.received_since_boot += shift;
        e.elapsed += shift;
        ++late;
    }
    return late;
}

}  // namespace proctimes::cli::serve
