// SPDX-License-Identifier: MIT
// read_process_resources: the argument checks every backend shares, then the
// backend's read (backend/backend.hpp, "per-process resources").
#include "proctimes/resources.hpp"
#include "backend/backend.hpp"

namespace proctimes::inline v1 {

result<process_resources> read_process_resources(pid_t pid, const resource_options& options) noexcept {
    if (pid <= 0) return errc::invalid_argument;
    return detail::read_resources(pid, options);
}

result<std::int64_t> read_boot_time_seconds(const std::string& proc_root) noexcept {
    return detail::boot_time_seconds(proc_root);
}

}  // namespace proctimes::inline v1
