// SPDX-License-Identifier: MIT
// What the windows backend does not do (docs/WINDOWS.md lists it): cgroups
// and the eBPF source are Linux's; run_tree (a traced process tree) is not
// implemented on Windows yet. Each answers errc::not_supported after the
// argument checks the other backends make. The system's CPU times come from
// GetSystemTimes.
#include "proctimes/cgroup.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"
#include "proctimes/tree.hpp"
#include "windows/win.hpp"

namespace proctimes::inline v1 {

result<std::string> process_cgroup(pid_t, const std::string&) noexcept { return errc::not_supported; }
result<std::string> process_cgroup(pid_t, cgroup_hierarchy, const std::string&) noexcept { return errc::not_supported; }
result<cgroup_location> find_cgroup(const std::string&) noexcept { return errc::not_supported; }
result<std::chrono::nanoseconds> cgroup_cpu_usage(const std::string&) noexcept { return errc::not_supported; }

bpf_source_status bpf_snapshot_status() noexcept {
    bpf_source_status st;
    st.reason = "no eBPF on Windows";
    return st;
}

result<tree_run> run_tree(const spawn_options& options, const tree_options& tree) noexcept {
    if (options.argv.empty() || options.argv[0].empty() || tree.max_argv_bytes == 0) return errc::invalid_argument;
    return errc::not_supported;
}

// GetSystemTimes: idle, kernel (idle included) and user, summed over all
// CPUs, in clock-interrupt ticks. The Linux-only states stay 0. The argument
// names a /proc; Windows has none to choose.
result<system_cpu_times> read_system_cpu_times(const std::string&) noexcept {
    FILETIME idle{}, kernel{}, user{};
    if (!::GetSystemTimes(&idle, &kernel, &user)) return detail::win::last_error();
    system_cpu_times t;
    t.idle = detail::win::duration(idle);
    t.system = detail::win::duration(kernel) - t.idle;
    t.user = detail::win::duration(user);
    t.since_boot = detail::win::since_boot_now();  // the scale of snapshot::since_boot here
    t.cpus = static_cast<int>(::GetActiveProcessorCount(ALL_PROCESSOR_GROUPS));
    return t;
}

}  // namespace proctimes::inline v1
