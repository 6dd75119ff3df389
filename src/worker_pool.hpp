// SPDX-License-Identifier: MIT
// The worker pool: runs one job on the calling thread and on helper threads
// started for the call. Portable (std::thread only); a snapshot source uses it
// to share a walk out (src/linux/snapshot.cpp).
//
// Why threads per call and not a kept pool: a walk runs a few times a second
// at most, a thread starts in ~50 µs, and a kept pool would keep threads in
// every embedding process for a feature most never use.
#pragma once

#include <cstddef>
#include <thread>
#include <vector>

namespace proctimes::inline v1::detail {

/// Runs body(i) for i in [0, n): i = 0 on the calling thread, each other i on
/// a helper thread, all joined before the call returns. An exception thrown
/// by body(i) is caught and handed to on_failure(i) (which must not throw),
/// so one failing worker never takes the process down; the caller decides
/// whether the others stop (e.g. through an atomic flag body polls).
///
/// Returns how many workers ran: fewer than n when a helper thread could not
/// be started (EAGAIN at a thread limit, ENOMEM); the workers with the lowest
/// indexes ran. The work must therefore be handed out through a shared counter
/// that workers draw from, never fixed by index: then whoever runs does all of
/// it. n = 0 is treated as 1.
template <class Body, class OnFailure>
unsigned run_on_workers(std::size_t n, Body&& body, OnFailure&& on_failure) noexcept {
    auto guarded = [&](std::size_t i) noexcept {
        try {
            body(i);
        } catch (...) {
            on_failure(i);
        }
    };
    std::vector<std::thread> helpers;
    std::size_t failed_to_start = 0;
    try {
        if (n > 1) helpers.reserve(n - 1);
        for (std::size_t i = 1; i < n; ++i) helpers.emplace_back(guarded, i);
    } catch (...) {
        // Could not start a thread: the others share the work, and the
        // count returned (snapshot::workers) shows the shortfall.
        failed_to_start = (n > 1 ? n - 1 : 0) - helpers.size();
    }
    guarded(0);
    for (auto& t : helpers) t.join();
    return static_cast<unsigned>((n > 1 ? n : 1) - failed_to_start);
}

}  // namespace proctimes::inline v1::detail
