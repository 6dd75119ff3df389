// SPDX-License-Identifier: MIT
// proctimes/cgroup.hpp — which cgroup a process is in, and the CPU time the
// cgroup's own counter holds.
//
// A cgroup's counter includes every task that ever ran in it (or in its
// descendants), exited ones included, and needs no privilege to read: it is
// the exact account of what a service, a container or a build used, where a
// walk of /proc sees only the tasks still alive.
//
//   auto cg = proctimes::process_cgroup(pid).value();        // "/user.slice/user-1000.slice/…"
//   auto t0 = proctimes::cgroup_cpu_usage(cg).value();
//   ... later ...
//   auto used = proctimes::cgroup_cpu_usage(cg).value() - t0;  // CPU time, ns
//
// Sources (cgroups(7)): /proc/<pid>/cgroup for membership; for the counter,
// the v2 (unified) hierarchy's cpu.stat "usage_usec" (1 µs resolution),
// else the v1 cpuacct controller's cpuacct.usage (1 ns). Both hierarchies
// can be mounted side by side (a "hybrid" system: v1 controllers beside a
// v2 tree); the mounts are found in /proc/self/mountinfo on every call.
// Thread-safe; no state is kept.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "proctimes/export.h"
#include "proctimes/result.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1 {

/// The cgroup of process `pid`, as a path inside its hierarchy ("/" for the
/// root; it starts with '/'): the v2 (unified, "0::") path when the process
/// has one, else the path in the v1 hierarchy that has the cpuacct
/// controller (the one cgroup_cpu_usage reads), else the first hierarchy
/// listed. Inside a cgroup namespace the path is relative to the namespace's
/// root, and a cgroup outside it shows as "/../…" (the kernel's form).
/// Errors: errc::no_such_process when <proc_root>/<pid> is gone (ENOENT,
/// ESRCH); errc::invalid_argument for pid <= 0; errc::malformed_data when the
/// file does not have the format of cgroups(7); errc::access_denied; the
/// native errno of the read.
PROCTIMES_API result<std::string> process_cgroup(pid_t pid, const std::string& proc_root = "/proc") noexcept;

/// The two hierarchies that hold a CPU counter: the v2 (unified) one, and
/// the v1 one with the cpuacct controller.
enum class cgroup_hierarchy : std::uint8_t { unified, cpuacct };

/// The cgroup of process `pid` in one hierarchy (its "0::" line, or the line
/// of the v1 hierarchy with cpuacct). Errors: those of process_cgroup, and
/// errc::not_supported when the file has no line for that hierarchy.
PROCTIMES_API result<std::string> process_cgroup(pid_t pid, cgroup_hierarchy in,
                                                 const std::string& proc_root = "/proc") noexcept;

/// A cgroup found on the cgroup file systems this process sees mounted.
struct PROCTIMES_API cgroup_location {
    std::string directory;  ///< its directory: "/sys/fs/cgroup/build"
    std::string path;       ///< inside its hierarchy, as process_cgroup gives it: "/build"
    cgroup_hierarchy hierarchy = cgroup_hierarchy::unified;
};

/// Finds a cgroup by `cgroup_path`: a directory of a mounted v2 or v1
/// cpuacct cgroup file system ("/sys/fs/cgroup/build"), or a path inside a
/// hierarchy ("/build"), looked for in the v2 hierarchy first, then in v1
/// cpuacct; a trailing '/' is ignored. Errors: errc::invalid_argument for a
/// path that is not absolute or has a "." or ".." step;
/// errc::not_supported when neither hierarchy is mounted;
/// std::errc::no_such_file_or_directory when no such cgroup exists in one
/// that is; errc::malformed_data when the mount table cannot be parsed; the
/// native errno of its read. Reads the mount table on every call.
PROCTIMES_API result<cgroup_location> find_cgroup(const std::string& cgroup_path) noexcept;

/// CPU time used by every task that ever ran in the cgroup or its
/// descendants since the cgroup was made, exited tasks included: the v2
/// cgroup's cpu.stat "usage_usec" (1 µs resolution) when the cgroup is
/// visible in a mounted v2 hierarchy, else the v1 cpuacct.usage (1 ns).
/// `cgroup_path` is either a hierarchy path as process_cgroup returns it
/// ("/system.slice/cron.service"), or the cgroup's directory on a mounted
/// cgroup file system ("/sys/fs/cgroup/unified/system.slice/cron.service",
/// recognised by starting with a cgroup mount point). Errors:
/// errc::not_supported when no cgroup file system with a CPU counter is
/// mounted, or the path is in none that is (a ".." step, or outside this
/// cgroup namespace); std::errc::no_such_file_or_directory when the cgroup
/// does not exist; errc::malformed_data when the counter is not a number;
/// the native errno of the reads.
///
/// The root cgroup ("/") is the whole machine. The kernel keeps no counter of
/// its own for the v2 root: its usage_usec is the sum of every CPU's busy
/// time, in the scheduler ticks /proc/stat counts (4 ms at HZ=250), so it can
/// be a few ticks off what the tasks used. Where a v1 cpuacct hierarchy is
/// mounted beside it, its root counter (charged to the ns like every cpuacct
/// group) is read for "/" instead.
PROCTIMES_API result<std::chrono::nanoseconds> cgroup_cpu_usage(const std::string& cgroup_path) noexcept;

}  // namespace proctimes::inline v1
