// SPDX-License-Identifier: MIT
// Closed children whose reap request the exit monitor's set refused (an
// epoll_ctl(2) that failed, no memory): never dropped. Each is reaped at once
// if it has already ended, else kept here (in place: keeping one allocates
// nothing) until the monitor thread takes it into its set; only a request
// that finds every place taken is lost. Every case is counted
// (exit/failures.hpp: reap_deferred, reap_lost).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "linux/task.hpp"

namespace proctimes::inline v1::detail {

/// Closed children's reap requests kept at most at once.
inline constexpr std::size_t kept_reaps_max = 64;

/// Reaps `c` if it has already ended (never blocks). True once reaped.
bool reap_if_ended(const task_core& c) noexcept;

enum class reap_fallback : std::uint8_t {
    reaped_now,  ///< it had ended: reaped here
    kept,        ///< kept for retry_kept_reaps (wake the monitor thread)
    lost         ///< no place left: it stays a zombie until this process waits or exits
};
/// For a closed child whose reap request the monitor's set refused.
reap_fallback reap_later(const std::shared_ptr<task_core>& c) noexcept;

/// Whether requests are kept (the monitor thread then retries them often).
bool kept_reaps_waiting() noexcept;

/// Offers each kept request to `add` (the monitor's set); one it takes, or
/// whose child has ended meanwhile (reaped here), is no longer kept.
void retry_kept_reaps(const std::function<bool(const std::shared_ptr<task_core>&)>& add) noexcept;

}  // namespace proctimes::inline v1::detail
