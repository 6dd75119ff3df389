// SPDX-License-Identifier: MIT
// The Linux exit monitor (monitor.cpp). Its side of the seam is the
// backend's exit_backend (backend/backend.hpp: platform_exit_backend());
// this header has what only tests need.
#pragma once

namespace proctimes::inline v1::detail {

/// Fault injection, for tests: the monitor's next `n` additions to its epoll
/// set fail as a refused epoll_ctl(2) would (a watch, a closed child's reap
/// request, a kept request's retry). 0 turns it off.
void exit_monitor_fail_next_adds(unsigned n) noexcept;

}  // namespace proctimes::inline v1::detail
