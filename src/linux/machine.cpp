// SPDX-License-Identifier: MIT
// read_machine_status (proctimes/machine.hpp) on Linux: /proc/loadavg,
// /proc/meminfo and the per-CPU lines of /proc/stat through their pure
// parsers (src/parse/machine.hpp).
#include <ctime>
#include <new>
#include <string>
#include <system_error>

#include "backend/backend.hpp"
#include "fd.hpp"
#include "parse/machine.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/machine.hpp"

namespace proctimes::inline v1 {

using std::chrono::nanoseconds;

result<machine_status> read_machine_status(machine_part parts, const std::string& proc_root) noexcept {
    try {
        machine_status m;
        std::error_code first_error;
        bool read_any = false, parsed_any = false;
        std::string text;
        const auto read = [&](const char* name) {
            text.clear();
            if (auto e = detail::read_file((proc_root + name).c_str(), text, 1 << 20)) {
                if (!first_error) first_error = e;
                return false;
            }
            read_any = true;
            return true;
        };
        if (has(parts, machine_part::load) && read("/loadavg")) {
            m.load = parse::parse_load_averages(text);
            parsed_any = parsed_any || m.load.has_value();
        }
        if (has(parts, machine_part::memory) && read("/meminfo")) {
            const auto t = parse::parse_meminfo_totals(text);
            m.memory_total_bytes = t.total_bytes;
            m.memory_available_bytes = t.available_bytes;
            parsed_any = parsed_any || t.total_bytes.has_value();
        }
        if (has(parts, machine_part::per_cpu)) {
            timespec now{};
            ::clock_gettime(CLOCK_BOOTTIME, &now);
            const nanoseconds at = std::chrono::seconds(now.tv_sec) + nanoseconds(now.tv_nsec);
            if (read("/stat")) {
                const std::int64_t hz = clock_ticks_per_second();
                const std::int64_t per_tick = hz > 0 ? 1'000'000'000 / hz : 10'000'000;
                const auto ns = [per_tick](std::uint64_t ticks) {
                    return nanoseconds(static_cast<std::int64_t>(ticks) * per_tick);
                };
                for (const auto& c : parse::parse_proc_stat_per_cpu(text)) {
                    cpu_times_of o;
                    o.cpu = c.cpu;
                    o.times.user = ns(c.ticks[0]);
                    o.times.nice = ns(c.ticks[1]);
                    o.times.system = ns(c.ticks[2]);
                    o.times.idle = ns(c.ticks[3]);
                    o.times.iowait = ns(c.ticks[4]);
                    o.times.irq = ns(c.ticks[5]);
                    o.times.softirq = ns(c.ticks[6]);
                    o.times.steal = ns(c.ticks[7]);
                    o.times.guest = ns(c.ticks[8]);
                    o.times.guest_nice = ns(c.ticks[9]);
                    o.times.since_boot = at;
                    o.times.cpus = 1;
                    m.per_cpu.push_back(o);
                }
                parsed_any = parsed_any || !m.per_cpu.empty();
            }
        }
        if (parts == machine_part::none) return m;
        if (!read_any) return first_error;
        if (!parsed_any) return make_error_code(errc::malformed_data);
        return m;
    } catch (const std::bad_alloc&) {
        return detail::errno_code(ENOMEM);
    }
}

}  // namespace proctimes::inline v1
