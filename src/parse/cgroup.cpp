// SPDX-License-Identifier: MIT
// cgroup files: see src/parse/cgroup.hpp.
#include "parse/cgroup.hpp"

#include "parse/number.hpp"

namespace proctimes::inline v1::parse {

namespace {

// The next line of `s` (without its newline), consumed from `s`.
std::string_view next_line(std::string_view& s) noexcept {
    const auto nl = s.find('\n');
    const std::string_view line = s.substr(0, nl);
    s.remove_prefix(nl == std::string_view::npos ? s.size() : nl + 1);
    return line;
}

// The next space-separated field of `s`, consumed; empty at the end.
std::string_view next_field(std::string_view& s) noexcept {
    const auto sp = s.find(' ');
    const std::string_view f = s.substr(0, sp);
    s.remove_prefix(sp == std::string_view::npos ? s.size() : sp + 1);
    return f;
}

// Whether the comma-separated list `list` holds `item`.
bool list_has(std::string_view list, std::string_view item) noexcept {
    while (!list.empty()) {
        const auto comma = list.find(',');
        if (list.substr(0, comma) == item) return true;
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return false;
}

// mountinfo's escapes: the kernel writes space, tab, newline and backslash
// as a backslash and three octal digits (fs/proc_namespace.c, mangle()).
std::string unescape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && s.size() - i >= 4) {
            const char a = s[i + 1], b = s[i + 2], c = s[i + 3];
            if (a >= '0' && a <= '3' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
                out += static_cast<char>(((a - '0') << 6) | ((b - '0') << 3) | (c - '0'));
                i += 3;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

}  // namespace

std::optional<proc_cgroup_paths> parse_proc_cgroup(std::string_view text) noexcept {
    proc_cgroup_paths out;
    bool any = false;
    while (!text.empty()) {
        const std::string_view line = next_line(text);
        const auto c1 = line.find(':');
        if (c1 == std::string_view::npos) return std::nullopt;
        const auto c2 = line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) return std::nullopt;
        const std::string_view id = line.substr(0, c1);
        const std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
        const std::string_view path = line.substr(c2 + 1);
        // The hierarchy ID: a number that fits (a 70-digit one is not a kernel's).
        if (!parse_whole_number(id) || path.empty() || path.front() != '/') return std::nullopt;
        if (!any) out.first = path;
        any = true;
        if (id == "0" && controllers.empty()) {
            if (!out.unified) out.unified = path;
        } else if (!out.cpuacct && list_has(controllers, "cpuacct")) {
            out.cpuacct = path;
        }
    }
    if (!any) return std::nullopt;
    return out;
}

std::optional<cgroup_mounts> parse_cgroup_mounts(std::string_view text) {
    cgroup_mounts out;
    while (!text.empty()) {
        std::string_view line = next_line(text);
        if (line.empty()) continue;
        const auto sep = line.find(" - ");
        if (sep == std::string_view::npos) return std::nullopt;
        std::string_view head = line.substr(0, sep);
        std::string_view tail = line.substr(sep + 3);
        next_field(head);  // mount id
        next_field(head);  // parent id
        next_field(head);  // major:minor
        const std::string_view root = next_field(head);
        const std::string_view point = next_field(head);
        const std::string_view fstype = next_field(tail);
        next_field(tail);  // source
        const std::string_view super = next_field(tail);
        if (root.empty() || point.empty() || fstype.empty()) return std::nullopt;
        if (fstype == "cgroup2") {
            if (!out.unified) out.unified = cgroup_mount{unescape(root), unescape(point)};
        } else if (fstype == "cgroup" && list_has(super, "cpuacct")) {
            if (!out.cpuacct) out.cpuacct = cgroup_mount{unescape(root), unescape(point)};
        }
    }
    return out;
}

std::optional<std::uint64_t> parse_cpu_stat_usage_usec(std::string_view text) noexcept {
    while (!text.empty()) {
        std::string_view line = next_line(text);
        if (next_field(line) == "usage_usec") return parse_whole_number(line);
    }
    return std::nullopt;
}

std::optional<std::uint64_t> parse_cpuacct_usage(std::string_view text) noexcept {
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    return parse_whole_number(text);
}

std::optional<std::string> cgroup_directory(const cgroup_mount& m, std::string_view path) {
    // A process outside the reader's cgroup namespace shows as "/../..": such
    // a path (and any with a ".." step) is not below this mount.
    if (path.empty() || path.front() != '/') return std::nullopt;
    for (std::string_view rest = path; !rest.empty();) {
        const auto slash = rest.find('/');
        if (rest.substr(0, slash) == "..") return std::nullopt;
        if (slash == std::string_view::npos) break;
        rest.remove_prefix(slash + 1);
    }
    std::string_view root = m.root;
    while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
    std::string_view below;
    if (root == "/") {
        below = path;
    } else if (path.substr(0, root.size()) == root && (path.size() == root.size() || path[root.size()] == '/')) {
        below = path.substr(root.size());
    } else {
        return std::nullopt;
    }
    std::string dir = m.mount_point;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    while (!below.empty() && below.front() == '/') below.remove_prefix(1);
    if (!below.empty()) {
        if (dir != "/") dir += '/';
        dir += below;
    }
    return dir;
}

}  // namespace proctimes::inline v1::parse
