// SPDX-License-Identifier: MIT
// The windows backend's system CPU times (proctimes/ledger.hpp), from
// GetSystemTimes.
#include "proctimes/ledger.hpp"
#include "windows/win.hpp"

namespace proctimes::inline v1 {

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
