// SPDX-License-Identifier: MIT
#include "linux/fork_generation.hpp"

#include <atomic>

#include <pthread.h>

namespace proctimes::inline v1::detail {

namespace {
std::atomic<std::uint64_t> generation{1};
void on_fork_child() noexcept { generation.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

std::uint64_t fork_generation() noexcept {
    // Registered before the first value is handed out, so that no fork after
    // it can go uncounted.
    static const int once = ::pthread_atfork(nullptr, nullptr, on_fork_child);
    (void)once;
    return generation.load(std::memory_order_relaxed);
}

}  // namespace proctimes::inline v1::detail
