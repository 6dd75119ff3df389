// SPDX-License-Identifier: MIT
// The stub backend's children and waits (spawn.hpp, exit.hpp): nothing can
// be spawned or waited for without a backend: errc::not_supported. A child
// object is therefore never valid; the waits check their handles first, as
// the Linux backend does.
#include "proctimes/spawn.hpp"

#include <utility>

#include "backend/backend.hpp"
#include "proctimes/exit.hpp"

namespace proctimes::inline v1 {

void child::release() noexcept {}

result<child> child::spawn(const spawn_options& o) noexcept {
    if (o.argv.empty() || o.argv[0].empty()) return errc::invalid_argument;
    return errc::not_supported;
}

result<std::optional<child_exit>> child::wait_without_handle(std::chrono::nanoseconds) noexcept {
    return errc::invalid_handle;
}

result<std::optional<child_exit>> child::wait_for(std::chrono::nanoseconds) noexcept {
    if (result_) return std::optional<child_exit>(*result_);
    return errc::invalid_handle;  // never spawned
}

result<child_exit> child::wait() noexcept {
    auto r = wait_for(std::chrono::nanoseconds::max());
    if (!r) return r.error();
    if (!*r) return errc::not_supported;
    return **r;
}

result<bool> wait_for_exit(const process& p, std::optional<std::chrono::nanoseconds>) noexcept {
    if (!p.valid()) return errc::invalid_handle;
    return errc::not_supported;
}

result<bool> wait_for_exit(const thread& t, std::optional<std::chrono::nanoseconds>) noexcept {
    if (!t.valid()) return errc::invalid_handle;
    return errc::not_supported;
}

result<std::optional<std::size_t>> wait_for_any(std::span<const process* const> ps,
                                                std::optional<std::chrono::nanoseconds>) noexcept {
    if (ps.empty()) return errc::invalid_argument;
    for (const process* p : ps)
        if (!p || !p->valid()) return errc::invalid_handle;
    return errc::not_supported;
}

}  // namespace proctimes::inline v1

namespace proctimes::inline v1::detail {
std::error_code terminate_process(const process&) noexcept { return make_error_code(errc::not_supported); }
std::error_code terminate_child(const child&) noexcept { return make_error_code(errc::not_supported); }
result<bool> wait_child_exit(const child&, std::optional<std::chrono::nanoseconds>) noexcept {
    return make_error_code(errc::not_supported);
}
}  // namespace proctimes::inline v1::detail
