// SPDX-License-Identifier: MIT
// proctimes/clock.hpp — CPU-time clocks that meet the std::chrono Clock
// requirements, for timing code with std::chrono:
//
//   auto t0 = proctimes::thread_cpu_clock::now();
//   work();
//   auto used = proctimes::thread_cpu_clock::now() - t0;   // nanoseconds of CPU
//
// process_cpu_clock: CPU time of all threads of the calling process
//   (CLOCK_PROCESS_CPUTIME_ID, 1 ns; children excluded).
// thread_cpu_clock: CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID, 1 ns).
//
// Their epoch is the start of the process/thread. They never go backwards and
// are never adjusted, hence is_steady; they advance only while the process or
// thread runs, so never compare them with a wall clock. now() cannot fail on
// Linux (the clock ids are always valid for the caller).
#pragma once

#include <chrono>
#include <cstdint>

#include "proctimes/export.h"

namespace proctimes::inline v1 {

struct PROCTIMES_API process_cpu_clock {
    using rep = std::int64_t;
    using period = std::nano;
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<process_cpu_clock>;
    static constexpr bool is_steady = true;
    static time_point now() noexcept;
};

struct PROCTIMES_API thread_cpu_clock {
    using rep = std::int64_t;
    using period = std::nano;
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<thread_cpu_clock>;
    static constexpr bool is_steady = true;
    static time_point now() noexcept;
};

}  // namespace proctimes::inline v1
