// SPDX-License-Identifier: MIT
// tools/proctimes/watch/scope.hpp — the scope of `watch --all / --name /
// --user / --cgroup`: which processes it reports, decided from what a
// snapshot or an exit record says about each (docs/CLI.md, "proctimes watch").
#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "output/output.hpp"
#include "pattern.hpp"
#include "users.hpp"

namespace proctimes::cli {

/// A cgroup given to --cgroup, resolved to a directory of a mounted cgroup
/// file system: in the v2 (unified) hierarchy, or in the v1 hierarchy with
/// the cpuacct controller (the two proctimes::cgroup_cpu_usage can read).
struct cgroup_target {
    std::string directory;  ///< e.g. /sys/fs/cgroup/unified/build
    std::string path;       ///< inside its hierarchy, as proctimes::process_cgroup gives it: "/build"
    bool v2 = false;        ///< in the unified (v2) hierarchy; else v1 cpuacct
};

/// Resolves --cgroup PATH: a directory of the v2 or v1 cpuacct mount
/// (/sys/fs/cgroup/unified/build), or a path inside a hierarchy (/build),
/// looked for in the v2 hierarchy first, then in v1 cpuacct
/// (proctimes::find_cgroup). Empty, with `why` set, when there is no such cgroup.
std::optional<cgroup_target> resolve_cgroup(const std::string& arg, std::string& why);

/// Whether process `pid` of <proc_root> is in `t` or below it: its path in
/// t's hierarchy (proctimes::process_cgroup). False when it cannot be read.
bool in_cgroup(const std::string& proc_root, pid_t pid, const cgroup_target& t);

/// `path` is `under` or below it ("/a/b" is under "/a", "/ab" is not). Pure.
bool cgroup_path_under(std::string_view path, std::string_view under);

/// The cgroup's own CPU counter (proctimes::cgroup_cpu_usage of its
/// directory). Empty when it cannot be read.
std::optional<std::chrono::nanoseconds> read_cgroup_counter(const cgroup_target& t);

/// The real uid of a process (read_process_resources' owner family, read
/// under proc_root); empty when it cannot be read.
std::optional<user_id> read_real_uid(const std::string& proc_root, pid_t pid);

/// A whole small file, opened without blocking (O_NONBLOCK: a FIFO put where
/// a file was expected answers at once) and only if it is a regular file or a
/// kernel file (procfs, cgroupfs). Empty on any error.
std::optional<std::string> read_small_file(const std::string& path);

/// What `watch` with a scope is given on its command line, checked.
struct watch_scope {
    bool all = false;
    std::shared_ptr<const pattern> name;  ///< RE2 (Go's syntax), searched in the comm
    std::string name_text;
    std::optional<user_id> uid;  ///< real uid
    std::optional<cgroup_target> cgroup;

    /// Whether a process with this comm and real uid is in scope, as far as
    /// name and user decide (the cgroup is decided apart).
    [[nodiscard]] bool matches(std::string_view comm, user_id real_uid) const;
    /// One line describing it: "--name '^make$' --user 1000".
    [[nodiscard]] std::string describe() const;
};

}  // namespace proctimes::cli
