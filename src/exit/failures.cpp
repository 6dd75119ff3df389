// SPDX-License-Identifier: MIT
// The exit machinery's failure counts (exit/failures.hpp).
#include "exit/failures.hpp"

#include <array>
#include <atomic>
#include <cstddef>

namespace proctimes::inline v1::detail {
namespace {

constexpr std::size_t failure_kinds = static_cast<std::size_t>(exit_failure::bpf_sweep) + 1;
constinit std::array<std::atomic<std::uint64_t>, failure_kinds> g_failure_counts{};

std::uint64_t failure_count_of(exit_failure k) noexcept {
    return g_failure_counts[static_cast<std::size_t>(k)].load(std::memory_order_relaxed);
}

}  // namespace

void count_exit_failure(exit_failure kind) noexcept {
    g_failure_counts[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
}

exit_failures exit_failure_counts() noexcept {
    exit_failures f;
    f.monitor_start = failure_count_of(exit_failure::monitor_start);
    f.watch = failure_count_of(exit_failure::watch);
    f.unwatch = failure_count_of(exit_failure::unwatch);
    f.deliver = failure_count_of(exit_failure::deliver);
    f.await = failure_count_of(exit_failure::await);
    f.query = failure_count_of(exit_failure::query);
    f.reap_deferred = failure_count_of(exit_failure::reap_deferred);
    f.reap_lost = failure_count_of(exit_failure::reap_lost);
    f.ends_not_kept = failure_count_of(exit_failure::ends_not_kept);
    f.bpf_sweep = failure_count_of(exit_failure::bpf_sweep);
    return f;
}

}  // namespace proctimes::inline v1::detail
