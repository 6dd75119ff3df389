// SPDX-License-Identifier: MIT
// The text of the view's cells (cells.hpp).
#include "top/cells.hpp"

#include <algorithm>
#include <array>
#include <csignal>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace proctimes::cli::top {

namespace {

using std::chrono::nanoseconds;

}  // namespace

std::string cpu_time_cell(nanoseconds t) {
    if (t.count() < 0) t = nanoseconds{0};
    const std::int64_t cs = t.count() / 10'000'000;
    const std::int64_t minutes = cs / 6000;
    if (minutes < 100) return fmt::format("{}:{:02}.{:02}", minutes, (cs / 100) % 60, cs % 100);
    const std::int64_t hours = minutes / 60;
    if (hours < 100) return fmt::format("{}h{:02}m", hours, minutes % 60);
    return fmt::format("{}h", hours);
}

std::string age_cell(nanoseconds age) {
    const std::int64_t s = std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(age).count());
    if (s < 60) return fmt::format("{}s", s);
    if (s < 3600) return fmt::format("{}m{:02}", s / 60, s % 60);
    if (s < 86400) return fmt::format("{}h{:02}", s / 3600, (s / 60) % 60);
    if (s < std::int64_t{100} * 86400) return fmt::format("{}d{:02}", s / 86400, (s / 3600) % 24);
    return fmt::format("{}d", s / 86400);
}

std::string bytes_cell(std::uint64_t bytes) {
    constexpr std::array<char, 5> units{'K', 'M', 'G', 'T', 'P'};
    double v = static_cast<double>(bytes) / 1024.0;
    std::size_t u = 0;
    while (v >= 1000.0 && u + 1 < units.size()) {
        v /= 1024.0;
        ++u;
    }
    if (v < 10.0 && u > 0) return fmt::format("{:.1f}{}", v, units[u]);
    return fmt::format("{:.0f}{}", v, units[u]);
}

std::string seconds_text(nanoseconds t) {
    if (t.count() < 0) return "-" + seconds_text(-t);
    if (t < std::chrono::seconds(1)) return fmt::format("{:.1f} ms", static_cast<double>(t.count()) / 1e6);
    return fmt::format("{:.3f} s", static_cast<double>(t.count()) / 1e9);
}

std::string signal_name(int sig) {
    static constexpr std::array<std::pair<int, std::string_view>, 14> names{{{SIGHUP, "HUP"},
                                                                             {SIGINT, "INT"},
                                                                             {SIGQUIT, "QUIT"},
                                                                             {SIGILL, "ILL"},
                                                                             {SIGABRT, "ABRT"},
                                                                             {SIGFPE, "FPE"},
                                                                             {SIGKILL, "KILL"},
                                                                             {SIGSEGV, "SEGV"},
                                                                             {SIGPIPE, "PIPE"},
                                                                             {SIGALRM, "ALRM"},
                                                                             {SIGTERM, "TERM"},
                                                                             {SIGUSR1, "USR1"},
                                                                             {SIGUSR2, "USR2"},
                                                                             {SIGBUS, "BUS"}}};
    for (const auto& [n, name] : names)
        if (n == sig) return std::string(name);
    return std::to_string(sig);
}

std::string end_status(const top_row& r) {
    if (!r.ended) return {};
    if (r.exit_signal) return fmt::format("signal {} ({})", *r.exit_signal, signal_name(*r.exit_signal));
    if (r.exit_code) return fmt::format("exit {}", *r.exit_code);
    return "ended";
}

}  // namespace proctimes::cli::top
