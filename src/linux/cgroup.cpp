// SPDX-License-Identifier: MIT
// proctimes/cgroup.hpp: /proc/<pid>/cgroup, /proc/self/mountinfo and the
// cgroup counters, each read whole through detail::read_file (never blocks
// on a FIFO planted in a cgroup directory) and parsed by src/parse/cgroup.
#include "proctimes/cgroup.hpp"

#include <sys/stat.h>
#include <cerrno>
#include <new>
#include <optional>
#include <string_view>

#include "fd.hpp"
#include "parse/cgroup.hpp"
#include "proctimes/error.hpp"

namespace proctimes::inline v1 {
namespace {

using std::chrono::nanoseconds;

// The directory `path` names when it is on the file system under `m`.
bool under_mount(const std::string& path, const parse::cgroup_mount& m) {
    std::string_view point = m.mount_point;
    while (point.size() > 1 && point.back() == '/') point.remove_suffix(1);
    if (point == "/") return false;  // a cgroup fs on "/" would claim every path
    return path.compare(0, point.size(), point) == 0 && (path.size() == point.size() || path[point.size()] == '/');
}

// "/", "//", ...: the root of a hierarchy.
bool is_root_path(std::string_view path) { return path.find_first_not_of('/') == std::string_view::npos; }

// `path` (under_mount of `m`) is the mount point itself, and the mount shows
// the hierarchy's root.
bool is_root_of(const std::string& path, const parse::cgroup_mount& m) {
    if (m.root != "/") return false;
    std::string_view p = path, point = m.mount_point;
    while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
    while (point.size() > 1 && point.back() == '/') point.remove_suffix(1);
    return p == point;
}

bool has_dotdot(std::string_view path) {
    for (std::string_view rest = path; !rest.empty();) {
        const auto slash = rest.find('/');
        if (rest.substr(0, slash) == "..") return true;
        if (slash == std::string_view::npos) break;
        rest.remove_prefix(slash + 1);
    }
    return false;
}

// A "." or ".." step: find_cgroup names cgroups by plain paths only.
bool has_step(std::string_view path) {
    for (std::string_view rest = path; !rest.empty();) {
        const auto slash = rest.find('/');
        const auto step = rest.substr(0, slash);
        if (step == "." || step == "..") return true;
        if (slash == std::string_view::npos) break;
        rest.remove_prefix(slash + 1);
    }
    return false;
}

// The v2 counter of the cgroup directory `dir`: usage_usec, in ns.
result<nanoseconds> read_unified(const std::string& dir) {
    std::string text;
    if (auto e = detail::read_file((dir + "/cpu.stat").c_str(), text, 1 << 16)) return e;
    const auto us = parse::parse_cpu_stat_usage_usec(text);
    if (!us || *us > static_cast<std::uint64_t>(INT64_MAX / 1000)) return make_error_code(errc::malformed_data);
    return nanoseconds(static_cast<std::int64_t>(*us) * 1000);
}

// The v1 counter of the cpuacct directory `dir`, in ns.
result<nanoseconds> read_cpuacct(const std::string& dir) {
    std::string text;
    if (auto e = detail::read_file((dir + "/cpuacct.usage").c_str(), text, 4096)) return e;
    const auto ns = parse::parse_cpuacct_usage(text);
    if (!ns || *ns > static_cast<std::uint64_t>(INT64_MAX)) return make_error_code(errc::malformed_data);
    return nanoseconds(static_cast<std::int64_t>(*ns));
}

}  // namespace

namespace {

// The path of <proc_root>/<pid>/cgroup that `in` names; without `in`, the v2
// path, else the v1 cpuacct one, else the first line's.
result<std::string> cgroup_of(pid_t pid, std::optional<cgroup_hierarchy> in, const std::string& proc_root) noexcept {
    if (pid <= 0) return make_error_code(errc::invalid_argument);
    try {
        std::string text;
        if (auto e = detail::read_file((proc_root + "/" + std::to_string(pid) + "/cgroup").c_str(), text, 1 << 16)) {
            if (e.value() == ENOENT || e.value() == ESRCH) return make_error_code(errc::no_such_process);
            return e;
        }
        const auto paths = parse::parse_proc_cgroup(text);
        if (!paths) return make_error_code(errc::malformed_data);
        if (!in) return std::string(paths->unified ? *paths->unified : paths->cpuacct ? *paths->cpuacct : paths->first);
        const auto& path = *in == cgroup_hierarchy::unified ? paths->unified : paths->cpuacct;
        if (!path) return make_error_code(errc::not_supported);
        return std::string(*path);
    } catch (const std::bad_alloc&) {
        return detail::errno_code(ENOMEM);
    }
}

}  // namespace

result<std::string> process_cgroup(pid_t pid, const std::string& proc_root) noexcept {
    return cgroup_of(pid, std::nullopt, proc_root);
}

result<std::string> process_cgroup(pid_t pid, cgroup_hierarchy in, const std::string& proc_root) noexcept {
    return cgroup_of(pid, in, proc_root);
}

result<cgroup_location> find_cgroup(const std::string& cgroup_path) noexcept {
    try {
        std::string a = cgroup_path;
        while (a.size() > 1 && a.back() == '/') a.pop_back();
        if (a.empty() || a.front() != '/' || has_step(a)) return make_error_code(errc::invalid_argument);
        std::string text;
        if (auto e = detail::read_file("/proc/self/mountinfo", text, 1 << 22)) return e;
        const auto mounts = parse::parse_cgroup_mounts(text);
        if (!mounts) return make_error_code(errc::malformed_data);
        if (!mounts->unified && !mounts->cpuacct) return make_error_code(errc::not_supported);
        const auto is_directory = [](const std::string& p) {
            struct stat st {};
            return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
        };
        const auto no_such = [] { return make_error_code(std::errc::no_such_file_or_directory); };
        constexpr cgroup_hierarchy order[] = {cgroup_hierarchy::unified, cgroup_hierarchy::cpuacct};
        // A directory of a mount: its hierarchy path is the mount's root + the rest.
        for (const auto h : order) {
            const auto& m = h == cgroup_hierarchy::unified ? mounts->unified : mounts->cpuacct;
            if (!m || !under_mount(a, *m)) continue;
            if (!is_directory(a)) return no_such();
            std::string_view point = m->mount_point;
            while (point.size() > 1 && point.back() == '/') point.remove_suffix(1);
            const std::string rest = a.substr(point.size());
            std::string path = m->root == "/" ? rest : m->root + rest;
            return cgroup_location{a, path.empty() ? "/" : path, h};
        }
        // A path inside a hierarchy.
        for (const auto h : order) {
            const auto& m = h == cgroup_hierarchy::unified ? mounts->unified : mounts->cpuacct;
            if (!m) continue;
            if (const auto dir = parse::cgroup_directory(*m, a); dir && is_directory(*dir))
                return cgroup_location{*dir, a, h};
        }
        return no_such();
    } catch (const std::bad_alloc&) {
        return detail::errno_code(ENOMEM);
    }
}

result<nanoseconds> cgroup_cpu_usage(const std::string& cgroup_path) noexcept {
    try {
        if (cgroup_path.empty() || cgroup_path.front() != '/' || has_dotdot(cgroup_path))
            return make_error_code(errc::not_supported);
        std::string text;
        if (auto e = detail::read_file("/proc/self/mountinfo", text, 1 << 22)) return e;
        const auto mounts = parse::parse_cgroup_mounts(text);
        if (!mounts) return make_error_code(errc::malformed_data);
        // The root of the v2 hierarchy has no usage counter of its own: the
        // kernel sums its per-CPU busy time (the ticks /proc/stat shows, 4 ms
        // steps at HZ=250). The root of a v1 cpuacct hierarchy is charged by
        // the scheduler like every other cpuacct group, to the ns: where one
        // is mounted and is the whole machine too, it is read instead.
        const auto v1_root = [&]() -> std::optional<std::string> {
            if (!mounts->cpuacct || mounts->cpuacct->root != "/") return std::nullopt;
            return parse::cgroup_directory(*mounts->cpuacct, "/");
        };
        // A directory on a mounted cgroup file system, named as such.
        if (mounts->unified && under_mount(cgroup_path, *mounts->unified)) {
            if (is_root_of(cgroup_path, *mounts->unified)) {
                if (const auto dir = v1_root())
                    if (auto r = read_cpuacct(*dir)) return r;
            }
            return read_unified(cgroup_path);
        }
        if (mounts->cpuacct && under_mount(cgroup_path, *mounts->cpuacct)) return read_cpuacct(cgroup_path);
        // A hierarchy path: v2 first (process_cgroup's choice), else v1
        // cpuacct — the same path in the v1 tree (a process with no v2 line,
        // or a v2 tree without cpu.stat, before Linux 4.15). The root ("/",
        // the whole machine) from v1 where it can, as above.
        if (mounts->unified && mounts->unified->root == "/" && is_root_path(cgroup_path)) {
            if (const auto dir = v1_root())
                if (auto r = read_cpuacct(*dir)) return r;
        }
        std::optional<std::error_code> first;
        if (mounts->unified) {
            if (const auto dir = parse::cgroup_directory(*mounts->unified, cgroup_path)) {
                auto r = read_unified(*dir);
                if (r) return r;
                first = r.error();
            }
        }
        if (mounts->cpuacct) {
            if (const auto dir = parse::cgroup_directory(*mounts->cpuacct, cgroup_path)) {
                auto r = read_cpuacct(*dir);
                if (r || !first) return r;
            }
        }
        if (first) return *first;
        return make_error_code(errc::not_supported);
    } catch (const std::bad_alloc&) {
        return detail::errno_code(ENOMEM);
    }
}

}  // namespace proctimes::inline v1
