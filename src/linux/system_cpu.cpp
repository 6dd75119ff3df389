// SPDX-License-Identifier: MIT
// read_system_cpu_times (proctimes/ledger.hpp) on Linux: /proc/stat through
// its pure parser, stamped with CLOCK_BOOTTIME.
#include <ctime>
#include <new>
#include <string>

#include "linux/sys.hpp"
#include "parse/proc_stat_cpu.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/ledger.hpp"

namespace proctimes::inline v1 {

using std::chrono::nanoseconds;

result<system_cpu_times> read_system_cpu_times(const std::string& proc_root) noexcept {
    try {
        timespec now{};
        ::clock_gettime(CLOCK_BOOTTIME, &now);
        const nanoseconds at = std::chrono::seconds(now.tv_sec) + nanoseconds(now.tv_nsec);
        std::string text;
        if (auto e = detail::read_file((proc_root + "/stat").c_str(), text, 1 << 20)) return e;
        const auto c = parse::parse_proc_stat_cpu(text);
        if (!c) return make_error_code(errc::malformed_data);
        const std::int64_t hz = clock_ticks_per_second();
        const std::int64_t per_tick = hz > 0 ? 1'000'000'000 / hz : 10'000'000;
        auto ns = [per_tick](std::uint64_t ticks) { return nanoseconds(static_cast<std::int64_t>(ticks) * per_tick); };
        system_cpu_times t;
        t.user = ns(c->user);
        t.nice = ns(c->nice);
        t.system = ns(c->system);
        t.idle = ns(c->idle);
        t.iowait = ns(c->iowait);
        t.irq = ns(c->irq);
        t.softirq = ns(c->softirq);
        t.steal = ns(c->steal);
        t.guest = ns(c->guest);
        t.guest_nice = ns(c->guest_nice);
        t.since_boot = at;
        t.cpus = c->cpus;
        return t;
    } catch (const std::bad_alloc&) {
        return detail::errno_code(ENOMEM);
    }
}

}  // namespace proctimes::inline v1
