// SPDX-License-Identifier: MIT
#include "parse/machine.hpp"

#include <limits>

namespace proctimes::inline v1::parse {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Whole decimal digits at text[i..], at least one; false on overflow.
bool digits(std::string_view text, std::size_t& i, std::uint64_t& v) {
    const std::size_t start = i;
    v = 0;
    while (i < text.size() && is_digit(text[i])) {
        const auto d = static_cast<std::uint64_t>(text[i] - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
        v = v * 10 + d;
        ++i;
    }
    return i > start;
}

}  // namespace

std::optional<std::array<double, 3>> parse_load_averages(std::string_view text) noexcept {
    std::array<double, 3> out{};
    std::size_t i = 0;
    for (std::size_t k = 0; k < 3; ++k) {
        if (k > 0) {
            if (i >= text.size() || text[i] != ' ') return std::nullopt;
            ++i;
        }
        std::uint64_t whole = 0;
        if (!digits(text, i, whole) || whole > 1'000'000'000) return std::nullopt;
        if (i >= text.size() || text[i] != '.') return std::nullopt;
        ++i;
        double fraction = 0, scale = 0.1;
        const std::size_t start = i;
        while (i < text.size() && is_digit(text[i])) {
            fraction += scale * (text[i] - '0');
            scale /= 10;
            ++i;
        }
        if (i == start) return std::nullopt;
        out[k] = static_cast<double>(whole) + fraction;
    }
    if (i < text.size() && text[i] != ' ' && text[i] != '\n') return std::nullopt;
    return out;
}

meminfo_totals parse_meminfo_totals(std::string_view text) noexcept {
    meminfo_totals out;
    for (std::size_t p = 0; p < text.size();) {
        std::size_t e = text.find('\n', p);
        if (e == std::string_view::npos) e = text.size();
        const std::string_view line = text.substr(p, e - p);
        p = e + 1;
        std::optional<std::uint64_t>* into = nullptr;
        std::size_t i = 0;
        if (line.starts_with("MemTotal:")) {
            into = &out.total_bytes;
            i = 9;
        } else if (line.starts_with("MemAvailable:")) {
            into = &out.available_bytes;
            i = 13;
        } else {
            continue;
        }
        while (i < line.size() && line[i] == ' ') ++i;
        std::uint64_t kib = 0;
        if (!digits(line, i, kib) || line.substr(i) != " kB") continue;
        if (kib > std::numeric_limits<std::uint64_t>::max() / 1024) continue;
        *into = kib * 1024;
    }
    return out;
}

std::vector<per_cpu_line> parse_proc_stat_per_cpu(std::string_view text) {
    std::vector<per_cpu_line> out;
    for (std::size_t p = 0; p < text.size();) {
        std::size_t e = text.find('\n', p);
        if (e == std::string_view::npos) e = text.size();
        const std::string_view line = text.substr(p, e - p);
        p = e + 1;
        if (line.size() < 4 || !line.starts_with("cpu") || !is_digit(line[3])) continue;
        std::size_t i = 3;
        std::uint64_t n = 0;
        if (!digits(line, i, n) || n > (1U << 20)) continue;
        per_cpu_line c;
        c.cpu = static_cast<int>(n);
        int fields = 0;
        bool ok = true;
        while (ok) {
            while (i < line.size() && line[i] == ' ') ++i;
            if (i == line.size()) break;
            std::uint64_t v = 0;
            if (!digits(line, i, v) || (i < line.size() && line[i] != ' ')) {
                ok = false;
                break;
            }
            if (fields < 10) c.ticks[static_cast<std::size_t>(fields)] = v;
            ++fields;
        }
        if (ok && fields >= 4) out.push_back(c);
    }
    return out;
}

}  // namespace proctimes::inline v1::parse
