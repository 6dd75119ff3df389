// SPDX-License-Identifier: MIT
// /proc/loadavg: see src/parse/loadavg.hpp.
#include "parse/loadavg.hpp"

#include "parse/procfs.hpp"

namespace proctimes::inline v1::parse {

std::optional<task_load> parse_loadavg_tasks(std::string_view text) noexcept {
    std::string_view s = text;
    for (int i = 0; i < 3; ++i) {
        const auto sp = s.find(' ');
        if (sp == std::string_view::npos) return std::nullopt;
        s.remove_prefix(sp + 1);
    }
    s = s.substr(0, s.find(' '));
    const auto slash = s.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    const auto running = parse_id(s.substr(0, slash));
    const auto total = parse_id(s.substr(slash + 1));
    if (!running || !total) return std::nullopt;
    return task_load{static_cast<std::uint64_t>(*running), static_cast<std::uint64_t>(*total)};
}

}  // namespace proctimes::inline v1::parse
