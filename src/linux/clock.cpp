#include "proctimes/clock.hpp"

#include <ctime>

namespace proctimes {
namespace {
std::chrono::nanoseconds read(clockid_t id) noexcept {
    timespec ts{};
    ::clock_gettime(id, &ts);  // cannot fail for these ids (clock_gettime(2))
    return std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec};
}
}  // namespace

process_cpu_clock::time_point process_cpu_clock::now() noexcept {
    return time_point{read(CLOCK_PROCESS_CPUTIME_ID)};
}

thread_cpu_clock::time_point thread_cpu_clock::now() noexcept {
    return time_point{read(CLOCK_THREAD_CPUTIME_ID)};
}

}  // namespace proctimes
