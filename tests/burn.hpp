// SPDX-License-Identifier: MIT
// Busy loops measured by a CPU clock, for tests that need a known amount of
// CPU time used: by the calling thread, or by the whole process. Both use
// only clock_gettime(2) and arithmetic, so they may run in a child forked
// from a multi-threaded test (async-signal-safe).
#pragma once

#include <chrono>
#include <cstdint>

#include <time.h>

namespace testing_helpers {

namespace detail {

inline std::int64_t cpu_clock_ns(clockid_t clock) {
    timespec t{};
    ::clock_gettime(clock, &t);
    return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

inline void burn_on(clockid_t clock, std::chrono::nanoseconds cpu) {
    const std::int64_t start = cpu_clock_ns(clock);
    volatile unsigned long sink = 0;
    while (cpu_clock_ns(clock) - start < cpu.count()) {
        // Pure user-mode work between two reads of the clock, whose syscall
        // would otherwise add measurable kernel time.
        for (int i = 0; i < 100'000; ++i) sink = sink + static_cast<unsigned long>(i);
    }
}

}  // namespace detail

/// Burns at least `cpu` of CPU time in the calling thread, in user mode.
inline void burn_thread_cpu(std::chrono::nanoseconds cpu) { detail::burn_on(CLOCK_THREAD_CPUTIME_ID, cpu); }

/// Burns until the calling process (all its threads) has used `cpu` more.
inline void burn_process_cpu(std::chrono::nanoseconds cpu) { detail::burn_on(CLOCK_PROCESS_CPUTIME_ID, cpu); }

}  // namespace testing_helpers
