// SPDX-License-Identifier: MIT
// The windows backend's cgroups (proctimes/cgroup.hpp): a Linux mechanism,
// which Windows does not have (docs/WINDOWS.md); every call answers
// errc::not_supported.
#include "proctimes/cgroup.hpp"

namespace proctimes::inline v1 {

result<std::string> process_cgroup(pid_t, const std::string&) noexcept { return errc::not_supported; }
result<std::string> process_cgroup(pid_t, cgroup_hierarchy, const std::string&) noexcept { return errc::not_supported; }
result<cgroup_location> find_cgroup(const std::string&) noexcept { return errc::not_supported; }
result<std::chrono::nanoseconds> cgroup_cpu_usage(const std::string&) noexcept { return errc::not_supported; }

}  // namespace proctimes::inline v1
