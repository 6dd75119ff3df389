// SPDX-License-Identifier: MIT
// The pidfd accessors of proctimes/linux.hpp: the descriptors a handle already
// holds, lent to the caller's event loop.
#include "proctimes/linux.hpp"

#include "platform.hpp"

namespace proctimes {

int native_pidfd(const process& p) noexcept {
    const auto* c = detail::handle_access::core(p);
    return c ? detail::core_native_handle(*c) : -1;
}

int native_pidfd(const thread& t) noexcept {
    const auto* c = detail::handle_access::core(t);
    return c ? detail::core_native_handle(*c) : -1;
}

int native_pidfd(const child& c) noexcept { return c.process_.valid() ? native_pidfd(c.process_) : c.pidfd_; }

}  // namespace proctimes
