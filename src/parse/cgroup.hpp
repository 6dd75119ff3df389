// SPDX-License-Identifier: MIT
// Pure parsers for the cgroup files proctimes reads (cgroups(7), the kernel's
// Documentation/admin-guide/cgroup-v2.rst and cgroup-v1/cpuacct.rst):
// /proc/<pid>/cgroup, /proc/self/mountinfo's cgroup mounts, a v2 cgroup's
// cpu.stat and a v1 cgroup's cpuacct.usage. No I/O; unit-tested
// (tests/unit/parse_cgroup_test.cpp) and fuzzed (fuzz/fuzz_cgroup.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace proctimes::inline v1::parse {

/// What /proc/<pid>/cgroup says about where a process is. Each line is
/// "HIERARCHY-ID:CONTROLLER-LIST:PATH"; the v2 (unified) hierarchy's line is
/// "0::PATH". The paths view the input and are relative to the hierarchy's
/// root (they start with '/'; a path may itself contain ':').
struct proc_cgroup_paths {
    std::optional<std::string_view> unified;  ///< the "0::" line's path
    std::optional<std::string_view> cpuacct;  ///< the v1 hierarchy whose controllers include cpuacct
    std::string_view first;                   ///< the first line's path
};

/// Parses the whole text of /proc/<pid>/cgroup. nullopt when it has no line,
/// or a line is not DIGITS ':' [CONTROLLERS] ':' '/'... (the last line may
/// lack its newline).
std::optional<proc_cgroup_paths> parse_proc_cgroup(std::string_view text) noexcept;

/// A cgroup filesystem mounted somewhere: `root` is the hierarchy path seen
/// at `mount_point` ("/" unless a sub-tree was bind-mounted or the reader is
/// in a cgroup namespace). Octal escapes of mountinfo (\040 for a space) are
/// decoded.
struct cgroup_mount {
    std::string root;
    std::string mount_point;
};
struct cgroup_mounts {
    std::optional<cgroup_mount> unified;  ///< the first "cgroup2" mount
    std::optional<cgroup_mount> cpuacct;  ///< the first v1 "cgroup" mount whose options include cpuacct
};

/// Finds the cgroup mounts in the whole text of /proc/self/mountinfo
/// (proc(5): "ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] -
/// FSTYPE SOURCE SUPER-OPTIONS"). nullopt when a line lacks the " - "
/// separator or the fields around it; an empty result when no cgroup file
/// system is mounted. Not noexcept: the decoded paths are strings.
std::optional<cgroup_mounts> parse_cgroup_mounts(std::string_view text);

/// The usage_usec line of a v2 cgroup's cpu.stat: CPU time of every task that
/// ever ran in the cgroup or its descendants, in microseconds. nullopt without
/// that line or with a value that is not a whole decimal number of 64 bits.
std::optional<std::uint64_t> parse_cpu_stat_usage_usec(std::string_view text) noexcept;

/// A v1 cpuacct.usage file: one decimal number of nanoseconds and a newline.
std::optional<std::uint64_t> parse_cpuacct_usage(std::string_view text) noexcept;

/// Where the hierarchy path `path` of a cgroup is on the file system, given
/// the mount of its hierarchy: mount_point + the part of `path` below the
/// mount's root. nullopt when `path` does not start with '/', has a ".."
/// step (a cgroup outside the reader's cgroup namespace shows as "/../x"), or
/// is not under that root (the cgroup is not visible through this mount).
std::optional<std::string> cgroup_directory(const cgroup_mount& m, std::string_view path);

}  // namespace proctimes::inline v1::parse
