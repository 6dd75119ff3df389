// SPDX-License-Identifier: MIT
#include "parse/proc_stat_cpu.hpp"

#include <limits>

namespace proctimes::inline v1::parse {

std::optional<proc_stat_cpu> parse_proc_stat_cpu(std::string_view text) noexcept {
    // Find the aggregate line: "cpu" followed by a space (per-CPU lines are "cpuN").
    std::size_t at = 0;
    std::string_view line;
    for (;;) {
        if (at >= text.size()) return std::nullopt;
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view l = text.substr(at, end - at);
        if (l.size() > 4 && l.substr(0, 4) == "cpu ") {
            line = l.substr(4);
            break;
        }
        at = end + 1;
    }
    std::uint64_t v[10] = {};
    int n = 0;
    std::size_t i = 0;
    for (;;) {
        while (i < line.size() && line[i] == ' ') ++i;
        if (i == line.size()) break;
        if (line[i] < '0' || line[i] > '9') return std::nullopt;
        std::uint64_t x = 0;
        while (i < line.size() && line[i] >= '0' && line[i] <= '9') {
            const auto d = static_cast<std::uint64_t>(line[i] - '0');
            if (x > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return std::nullopt;
            x = x * 10 + d;
            ++i;
        }
        if (i < line.size() && line[i] != ' ') return std::nullopt;
        if (n < 10) v[n] = x;
        ++n;
    }
    if (n < 4) return std::nullopt;
    proc_stat_cpu r;
    for (std::size_t p = 0; p < text.size();) {
        std::size_t e = text.find('\n', p);
        if (e == std::string_view::npos) e = text.size();
        const std::string_view l = text.substr(p, e - p);
        if (l.size() > 3 && l.substr(0, 3) == "cpu" && l[3] >= '0' && l[3] <= '9') ++r.cpus;
        p = e + 1;
    }
    r.user = v[0];
    r.nice = v[1];
    r.system = v[2];
    r.idle = v[3];
    r.iowait = v[4];
    r.irq = v[5];
    r.softirq = v[6];
    r.steal = v[7];
    r.guest = v[8];
    r.guest_nice = v[9];
    r.fields = n < 10 ? n : 10;
    return r;
}

}  // namespace proctimes::inline v1::parse
