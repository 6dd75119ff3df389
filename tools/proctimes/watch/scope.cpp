// SPDX-License-Identifier: MIT
// The scope of `watch` (watch/scope.hpp): --cgroup resolved against the
// mounted cgroup file systems, a process's cgroup line, the cgroup's counter,
// the real uid, --user.
#include "watch/scope.hpp"

#include <sstream>

#include <fmt/format.h>

#include "proctimes/cgroup.hpp"
#include "proctimes/resources.hpp"

namespace proctimes::cli {

std::optional<cgroup_target> resolve_cgroup(const std::string& arg, std::string& why) {
    if (arg.empty() || arg.front() != '/') {
        why = fmt::format("'{}': a cgroup is an absolute path (/sys/fs/cgroup/... or a path inside a hierarchy)",
                          escape_for_table(arg));
        return std::nullopt;
    }
    auto found = find_cgroup(arg);
    if (found) return cgroup_target{found->directory, found->path, found->hierarchy == cgroup_hierarchy::unified};
    if (found.error() == errc::invalid_argument)
        why = fmt::format("'{}': a cgroup path may not contain '.' or '..' steps", escape_for_table(arg));
    else if (found.error() == errc::not_supported)
        why = "no cgroup v2 or v1 cpuacct file system is mounted";
    else if (found.error() == std::errc::no_such_file_or_directory)
        why = fmt::format("no such cgroup: {} (in the v2 or the v1 cpuacct hierarchy)", escape_for_table(arg));
    else
        why = fmt::format("cannot find cgroup {}: {}", escape_for_table(arg), found.error().message());
    return std::nullopt;
}

bool in_cgroup(const std::string& proc_root, pid_t pid, const cgroup_target& t) {
    const auto path = process_cgroup(pid, t.v2 ? cgroup_hierarchy::unified : cgroup_hierarchy::cpuacct, proc_root);
    return path && cgroup_path_under(*path, t.path);
}

bool cgroup_path_under(std::string_view path, std::string_view under) {
    if (under == "/") return !path.empty() && path.front() == '/';
    return path == under || (path.starts_with(under) && path.size() > under.size() && path[under.size()] == '/');
}

std::optional<std::chrono::nanoseconds> read_cgroup_counter(const cgroup_target& t) {
    auto r = cgroup_cpu_usage(t.directory);
    if (!r) return std::nullopt;
    return *r;
}

std::optional<user_id> read_real_uid(const std::string& proc_root, pid_t pid) {
    resource_options o;
    o.proc_root = proc_root;
    o.families = resource_family::owner;
    const auto r = read_process_resources(pid, o);
    if (!r || !r->owner) return std::nullopt;
    return r->owner->real;
}

bool watch_scope::matches(std::string_view comm, user_id real_uid) const {
    if (uid && real_uid != *uid) return false;
    if (name && !name->search(comm)) return false;
    return true;
}

std::string watch_scope::describe() const {
    std::string s;
    const auto add = [&s](const std::string& part) { s += (s.empty() ? "" : " ") + part; };
    if (name) add(fmt::format("--name '{}'", escape_for_table(name_text)));
    if (uid) add(fmt::format("--user {}", *uid));
    if (cgroup) add(fmt::format("--cgroup {}", escape_for_table(cgroup->directory)));
    return s.empty() ? "--all" : s;
}

}  // namespace proctimes::cli
