// SPDX-License-Identifier: MIT
// The pidfd accessors of proctimes/linux.hpp: the descriptors a handle already
// holds, lent to the caller's event loop; and terminating through them
// (backend/backend.hpp: terminate_process, terminate_child).
#include "proctimes/linux.hpp"

#include "backend/backend.hpp"
#include "linux/sys.hpp"

namespace proctimes::inline v1 {

int native_pidfd(const process& p) noexcept {
    const auto* c = detail::handle_access::core(p);
    return c ? static_cast<int>(detail::core_native_handle(*c)) : -1;  // a pidfd
}

int native_pidfd(const thread& t) noexcept {
    const auto* c = detail::handle_access::core(t);
    return c ? static_cast<int>(detail::core_native_handle(*c)) : -1;  // a pidfd
}

int native_pidfd(const child& c) noexcept { return c.process_.valid() ? native_pidfd(c.process_) : c.pidfd_; }

namespace detail {

std::error_code terminate_process(const process& p) noexcept {
    if (!p.valid()) return make_error_code(errc::invalid_handle);
    return kill_by_native_handle(native_pidfd(p));
}

std::error_code terminate_child(const child& c) noexcept {
    if (!c.valid()) return make_error_code(errc::invalid_handle);
    return kill_by_native_handle(native_pidfd(c));
}

}  // namespace detail

}  // namespace proctimes::inline v1
