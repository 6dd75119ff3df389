// SPDX-License-Identifier: MIT
// tools/proctimes/serve/arith.hpp — the small arithmetic the exporter's files
// share: durations never below zero, and seconds as Prometheus' samples hold them.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>

namespace proctimes::cli::serve {

inline constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

/// `d`, or zero when it is negative.
inline std::chrono::nanoseconds clamp0(std::chrono::nanoseconds d) {
    return d < std::chrono::nanoseconds{0} ? std::chrono::nanoseconds{0} : d;
}

/// `d` in seconds.
inline double seconds(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e9; }

}  // namespace proctimes::cli::serve
