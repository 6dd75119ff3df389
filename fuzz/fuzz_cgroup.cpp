// SPDX-License-Identifier: MIT
// The cgroup parsers (parse/cgroup.hpp) against reference parsers written the
// plain way (split into lines, then on the separators), and the invariants of
// cgroup_directory: a directory it gives is under the mount point and has no
// ".." step.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "parse/cgroup.hpp"

using namespace proctimes::parse;

namespace {

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out(1);
    for (char c : s) {
        if (c == sep)
            out.emplace_back();
        else
            out.back() += c;
    }
    return out;
}

std::optional<std::uint64_t> digits(const std::string& s) {
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (char ch : s) {
        if (ch < '0' || ch > '9') return std::nullopt;
        const auto d = static_cast<std::uint64_t>(ch - '0');
        if (v > (UINT64_MAX - d) / 10) return std::nullopt;
        v = v * 10 + d;
    }
    return v;
}

// /proc/<pid>/cgroup: lines "ID:CONTROLLERS:PATH" (the last newline optional).
std::optional<std::string> reference_unified(std::string_view text, bool& ok) {
    ok = false;
    if (text.empty()) return std::nullopt;
    auto lines = split(text, '\n');
    if (lines.back().empty()) lines.pop_back();
    std::optional<std::string> unified;
    for (const auto& l : lines) {
        const auto c1 = l.find(':');
        if (c1 == std::string::npos) return std::nullopt;
        const auto c2 = l.find(':', c1 + 1);
        if (c2 == std::string::npos) return std::nullopt;
        if (!digits(l.substr(0, c1))) return std::nullopt;
        const std::string path = l.substr(c2 + 1);
        if (path.empty() || path[0] != '/') return std::nullopt;
        if (l.substr(0, c2) == "0:" && !unified) unified = path;
    }
    ok = true;
    return unified;
}

std::optional<std::uint64_t> reference_usage_usec(std::string_view text) {
    for (const auto& l : split(text, '\n')) {
        const auto sp = l.find(' ');
        if (l.substr(0, sp) != "usage_usec") continue;
        if (sp == std::string::npos) return std::nullopt;
        return digits(l.substr(sp + 1));
    }
    return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    bool ok = false;
    const auto ref = reference_unified(text, ok);
    const auto r = parse_proc_cgroup(text);
    FUZZ_CHECK(r.has_value() == ok);
    if (r) {
        FUZZ_CHECK(r->unified.has_value() == ref.has_value());
        if (ref) FUZZ_CHECK(std::string(*r->unified) == *ref);
        FUZZ_CHECK(!r->first.empty() && r->first.front() == '/');
    }

    FUZZ_CHECK(parse_cpu_stat_usage_usec(text) == reference_usage_usec(text));
    std::string_view one = text;
    if (!one.empty() && one.back() == '\n') one.remove_suffix(1);
    FUZZ_CHECK(parse_cpuacct_usage(text) == digits(std::string(one)));

    if (const auto m = parse_cgroup_mounts(text)) {
        for (const auto* mount : {m->unified ? &*m->unified : nullptr, m->cpuacct ? &*m->cpuacct : nullptr}) {
            if (!mount) continue;
            FUZZ_CHECK(!mount->root.empty() && !mount->mount_point.empty());
        }
    }

    // The input as a hierarchy path below a mount.
    const cgroup_mount mount{"/", "/sys/fs/cgroup"};
    if (const auto dir = cgroup_directory(mount, text)) {
        FUZZ_CHECK(dir->rfind("/sys/fs/cgroup", 0) == 0);
        FUZZ_CHECK(dir->find("/../") == std::string::npos);
        FUZZ_CHECK(dir->size() < 3 || dir->compare(dir->size() - 3, 3, "/..") != 0);
    }
    return 0;
}
