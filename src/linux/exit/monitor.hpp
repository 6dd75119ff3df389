// SPDX-License-Identifier: MIT
// The Linux backend's exit records (backend/backend.hpp: exit_backend): the
// exit monitor (monitor.cpp) and the system-wide listener (listener.cpp,
// which holds the instance platform_exit_backend() gives). Also what only
// tests need of the monitor.
#pragma once

#include <memory>

#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

class linux_exit_backend final : public exit_backend {
public:
    constexpr linux_exit_backend() noexcept = default;
    // monitor.cpp
    void watch(const task_core_ptr& c) noexcept override;
    void unwatch(const task_core_ptr& c, bool reap) noexcept override;
    void deliver() noexcept override;
    void await(task_core& c) noexcept override;
    result<exit_stream_source> records_source() noexcept override;
    // listener.cpp: the eBPF exit stream (bpf, or automatic where it can be
    // used), else taskstats.
    result<std::unique_ptr<exit_stream::impl>> open_stream(exit_stream_source from,
                                                           exit_stream_delivery delivery) noexcept override;
};

/// Fault injection, for tests: the monitor's next `n` additions to its epoll
/// set fail as a refused epoll_ctl(2) would (a watch, a closed child's reap
/// request, a kept request's retry). 0 turns it off.
void exit_monitor_fail_next_adds(unsigned n) noexcept;

}  // namespace proctimes::inline v1::detail
