// SPDX-License-Identifier: MIT
// The stub backend's per-process resources (backend/backend.hpp): no system to read.
#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

result<process_resources> read_resources(pid_t, const resource_options&) noexcept {
    return make_error_code(errc::not_supported);
}

result<std::int64_t> boot_time_seconds(const std::string&) noexcept { return make_error_code(errc::not_supported); }

}  // namespace proctimes::inline v1::detail
