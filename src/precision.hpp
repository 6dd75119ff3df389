// SPDX-License-Identifier: MIT
// The one table of what each CPU-time source can resolve (times.hpp,
// cpu_precision). Portable: the tick is the backend's (its creation
// instants' granularity), passed in. Handles, the calling process/thread
// and snapshots all take their precision from here.
#pragma once

#include <chrono>

#include "proctimes/times.hpp"

namespace proctimes::inline v1::detail {

/// The resolutions that go with `s` when the system's tick (creation
/// granularity, and the unit of tick-sampled splits) is `tick`. The exit
/// fields stay empty: they belong to the task's end, not to its source.
constexpr cpu_precision precision_for(cpu_source s, std::chrono::nanoseconds tick) noexcept {
    using std::chrono::microseconds;
    using std::chrono::nanoseconds;
    switch (s) {
        case cpu_source::rusage:
        case cpu_source::wait_rusage:
            return {microseconds{1}, microseconds{1}, tick, s};
        case cpu_source::cpu_clock_and_stat:
        case cpu_source::schedstat_and_stat:
        case cpu_source::exit_record:
        case cpu_source::bpf_exit:
        case cpu_source::thread_clock_and_rusage:
            return {tick, nanoseconds{1}, tick, s};
        case cpu_source::stat_ticks:
        case cpu_source::os_times:
            return {tick, tick, tick, s};
        // start_boottime is kept in ns: creation is exact (100 ns as a FILETIME).
        case cpu_source::bpf_task:
            return {tick, nanoseconds{1}, nanoseconds{1}, s};
    }
    return {tick, tick, tick, s};
}

}  // namespace proctimes::inline v1::detail
