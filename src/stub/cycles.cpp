// SPDX-License-Identifier: MIT
// The stub backend's cycle counts (cycles.hpp): no TSC rate is known, so the
// rate is the documented nominal 1 GHz and the counts are the POSIX CPU
// clocks in nanoseconds; no hardware counter (not_supported).
#include "proctimes/cycles.hpp"

#include <ctime>

#include "clock_ns.hpp"

namespace proctimes::inline v1 {

const tsc_rate& get_tsc_rate() noexcept {
    static const tsc_rate nominal{};
    return nominal;
}

namespace this_thread {
std::uint64_t cycles() noexcept {
    thread_local cycle_meter meter;
    return meter.update(
        cycles_from_cpu_time(std::chrono::nanoseconds{detail::now_ns(CLOCK_THREAD_CPUTIME_ID)}, get_tsc_rate().hz),
        true);
}
}  // namespace this_thread

namespace this_process {
std::uint64_t cycles() noexcept {
    static cycle_meter meter;
    return meter.update(
        cycles_from_cpu_time(std::chrono::nanoseconds{detail::now_ns(CLOCK_PROCESS_CPUTIME_ID)}, get_tsc_rate().hz),
        false);
}
}  // namespace this_process

result<void> hardware_cycle_counter_status() noexcept { return errc::not_supported; }

}  // namespace proctimes::inline v1
