// SPDX-License-Identifier: MIT
// One conversion from the POSIX clocks to nanoseconds, for every file that
// reads a clock. (POSIX, not Linux: the stub backend builds with it too.)
#pragma once

#include <sys/time.h>
#include <time.h>

#include <chrono>
#include <cstdint>

namespace proctimes::inline v1::detail {

/// A timespec as a count of nanoseconds. Exact for every value a clock of
/// this system returns (int64 nanoseconds reach the year 2262).
constexpr std::chrono::nanoseconds to_ns(const timespec& ts) noexcept {
    return std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec};
}

/// A timeval (getrusage, wait4) as nanoseconds; its unit is 1 µs.
constexpr std::chrono::nanoseconds to_ns(const timeval& tv) noexcept {
    return std::chrono::seconds{tv.tv_sec} + std::chrono::microseconds{tv.tv_usec};
}

/// Reads clock `c` in nanoseconds; -1 if the clock refuses (an ended task's
/// CPU clock, or a clock this kernel lacks).
inline std::int64_t now_ns(clockid_t c) noexcept {
    timespec ts{};
    if (::clock_gettime(c, &ts) != 0) return -1;
    return to_ns(ts).count();
}

}  // namespace proctimes::inline v1::detail
