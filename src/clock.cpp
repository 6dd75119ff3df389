// SPDX-License-Identifier: MIT
// process_cpu_clock and thread_cpu_clock (clock.hpp): the POSIX CPU-time
// clocks, so portable: every backend builds this file.
#include "proctimes/clock.hpp"

#include <ctime>

#include "clock_ns.hpp"

namespace proctimes::inline v1 {
namespace {
std::chrono::nanoseconds read(clockid_t id) noexcept {
    return std::chrono::nanoseconds{detail::now_ns(id)};  // cannot fail for these ids (clock_gettime(2))
}
}  // namespace

process_cpu_clock::time_point process_cpu_clock::now() noexcept { return time_point{read(CLOCK_PROCESS_CPUTIME_ID)}; }

thread_cpu_clock::time_point thread_cpu_clock::now() noexcept { return time_point{read(CLOCK_THREAD_CPUTIME_ID)}; }

}  // namespace proctimes::inline v1
