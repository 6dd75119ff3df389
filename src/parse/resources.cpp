// SPDX-License-Identifier: MIT
#include "parse/resources.hpp"

#include <charconv>

namespace proctimes::inline v1::parse {
namespace {

constexpr std::uint64_t u64_max = UINT64_MAX;

// A whole decimal number of 64 bits, nothing else ("-1", "1e3", "" fail).
std::optional<std::uint64_t> whole(std::string_view s) noexcept {
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string_view trim(std::string_view v) noexcept {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
    return v;
}

// Calls each(key, value) for every "key: value" line (value trimmed).
template <class F>
void each_line(std::string_view text, F&& each) {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        if (!each(line.substr(0, colon), trim(line.substr(colon + 1)))) return;
    }
}

// "123 kB" in bytes; nullopt when malformed or beyond 64 bits.
std::optional<std::uint64_t> kilobytes(std::string_view v) noexcept {
    if (v.size() < 3 || v.substr(v.size() - 3) != " kB") return std::nullopt;
    const auto n = whole(trim(v.substr(0, v.size() - 3)));
    if (!n || *n > u64_max / 1024) return std::nullopt;
    return *n * 1024;
}

}  // namespace

std::optional<io_record> parse_io(std::string_view text) noexcept {
    io_record r;
    bool ok = true, have_read = false, have_write = false;
    each_line(text, [&](std::string_view key, std::string_view val) {
        std::optional<std::uint64_t>* slot = nullptr;
        if (key == "read_bytes" || key == "write_bytes") {
            const auto v = whole(val);
            if (!v) return ok = false;
            (key == "read_bytes" ? r.read_bytes : r.write_bytes) = *v;
            (key == "read_bytes" ? have_read : have_write) = true;
            return true;
        }
        if (key == "rchar")
            slot = &r.read_chars;
        else if (key == "wchar")
            slot = &r.write_chars;
        else if (key == "syscr")
            slot = &r.read_syscalls;
        else if (key == "syscw")
            slot = &r.write_syscalls;
        if (slot) {
            *slot = whole(val);
            if (!*slot) return ok = false;
        }
        return true;
    });
    if (!ok || !have_read || !have_write) return std::nullopt;
    return r;
}

std::optional<std::uint64_t> parse_open_files_limit(std::string_view text) noexcept {
    constexpr std::string_view key = "Max open files";
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ') {
            line = trim(line.substr(key.size()));
            const std::string_view soft = line.substr(0, line.find(' '));
            if (soft == "unlimited") return u64_max;
            return whole(soft);
        }
    }
    return std::nullopt;
}

std::optional<smaps_record> parse_smaps_rollup(std::string_view text) noexcept {
    smaps_record r;
    bool ok = true, have_pss = false;
    each_line(text, [&](std::string_view key, std::string_view val) {
        if (key != "Pss" && key != "SwapPss") return true;
        const auto b = kilobytes(val);
        if (!b) return ok = false;
        if (key == "Pss") {
            r.pss_bytes = *b;
            have_pss = true;
        } else {
            r.swap_pss_bytes = *b;
        }
        return true;
    });
    if (!ok || !have_pss) return std::nullopt;
    return r;
}

std::string_view parse_wchan(std::string_view text) noexcept {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    return text == "0" ? std::string_view() : text;
}

std::optional<cgroup_line> next_cgroup_line(std::string_view& text) noexcept {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const auto c1 = line.find(':');
        if (c1 == std::string_view::npos) continue;
        const auto c2 = line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) continue;
        return cgroup_line{line.substr(0, c1), line.substr(c1 + 1, c2 - c1 - 1), line.substr(c2 + 1)};
    }
    return std::nullopt;
}

}  // namespace proctimes::inline v1::parse
