// SPDX-License-Identifier: MIT
// The cgroup parsers (src/parse/cgroup.hpp), on text captured from real
// systems: a hybrid one (v1 controllers beside a v2 tree, as this project's
// VM mounts), a v2-only one and a v1-only one.
#include <gtest/gtest.h>

#include "parse/cgroup.hpp"

using namespace proctimes::parse;

TEST(ParseProcCgroup, HybridPrefersTheUnifiedLineAndFindsCpuacct) {
    const auto r = parse_proc_cgroup(
        "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/3c1c\n3:cpuset:/\n2:cpu,cpuacct:/build\n1:cpu:/\n0::/ci\n");
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->unified);
    EXPECT_EQ(*r->unified, "/ci");
    ASSERT_TRUE(r->cpuacct);
    EXPECT_EQ(*r->cpuacct, "/build");
    EXPECT_EQ(r->first, "/");
}

TEST(ParseProcCgroup, UnifiedOnlyAndV1Only) {
    const auto v2 = parse_proc_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n");
    ASSERT_TRUE(v2);
    EXPECT_EQ(*v2->unified, "/user.slice/user-1000.slice/session-3.scope");
    EXPECT_FALSE(v2->cpuacct);
    const auto v1 = parse_proc_cgroup("12:pids:/a\n3:cpuacct,cpu:/b:c\n");  // a ':' inside a path is kept
    ASSERT_TRUE(v1);
    EXPECT_FALSE(v1->unified);
    EXPECT_EQ(*v1->cpuacct, "/b:c");
    EXPECT_EQ(v1->first, "/a");
    // "cpuacct" must be a whole controller name, not part of one.
    EXPECT_FALSE(parse_proc_cgroup("3:cpuacctx:/b\n")->cpuacct);
    // No trailing newline, and a namespace's "/.." paths are kept as written.
    EXPECT_EQ(*parse_proc_cgroup("0::/../sibling")->unified, "/../sibling");
}

TEST(ParseProcCgroup, RejectsWhatIsNotTheFormat) {
    EXPECT_FALSE(parse_proc_cgroup(""));
    EXPECT_FALSE(parse_proc_cgroup("0:/\n"));          // one colon
    EXPECT_FALSE(parse_proc_cgroup("x::/\n"));         // id not a number
    EXPECT_FALSE(parse_proc_cgroup("0::\n"));          // no path
    EXPECT_FALSE(parse_proc_cgroup("0::relative\n"));  // not from the root
    EXPECT_FALSE(parse_proc_cgroup("0::/\n\n"));       // an empty line
    // An id that does not fit in 64 bits (found by fuzz/fuzz_cgroup.cpp).
    EXPECT_FALSE(parse_proc_cgroup("184467440737095516160:memory:/a\n0::/\n"));
    EXPECT_TRUE(parse_proc_cgroup("18446744073709551615:memory:/a\n0::/\n"));
}

TEST(ParseCgroupMounts, HybridMountinfo) {
    const auto m = parse_cgroup_mounts(
        "22 1 0:20 / /sys rw,nosuid - sysfs sysfs rw\n"
        "30 22 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
        "31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n"
        "32 30 0:28 / /sys/fs/cgroup/cpuacct rw,relatime shared:10 - cgroup cgroup rw,cpuacct\n"
        "40 30 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n");
    ASSERT_TRUE(m);
    ASSERT_TRUE(m->unified);
    EXPECT_EQ(m->unified->mount_point, "/sys/fs/cgroup/unified");
    EXPECT_EQ(m->unified->root, "/");
    ASSERT_TRUE(m->cpuacct);
    EXPECT_EQ(m->cpuacct->mount_point, "/sys/fs/cgroup/cpuacct");
}

TEST(ParseCgroupMounts, EscapesBindMountsAndNone) {
    const auto m = parse_cgroup_mounts(
        "50 1 0:36 /ci/job\\0401 /mnt/my\\040cg rw master:3 - cgroup2 none rw\n"
        "51 1 0:28 / /cg/v1 rw - cgroup cgroup rw,cpu,cpuacct\n");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->unified->root, "/ci/job 1");
    EXPECT_EQ(m->unified->mount_point, "/mnt/my cg");
    EXPECT_EQ(m->cpuacct->mount_point, "/cg/v1");
    const auto none = parse_cgroup_mounts("22 1 0:20 / /sys rw - sysfs sysfs rw\n");
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->unified);
    EXPECT_FALSE(none->cpuacct);
    EXPECT_FALSE(parse_cgroup_mounts("22 1 0:20 / /sys rw sysfs sysfs rw\n"));  // no " - "
    EXPECT_FALSE(parse_cgroup_mounts("22 1 0:20 - cgroup2 x rw\n"));            // no root, no mount point
}

TEST(ParseCgroupCounters, CpuStatAndCpuacctUsage) {
    EXPECT_EQ(parse_cpu_stat_usage_usec("usage_usec 42668848000\nuser_usec 33810592000\nsystem_usec 8858256000\n"),
              42668848000u);
    EXPECT_EQ(parse_cpu_stat_usage_usec("nr_periods 0\nusage_usec 7"), 7u);
    EXPECT_FALSE(parse_cpu_stat_usage_usec("user_usec 1\n"));
    EXPECT_FALSE(parse_cpu_stat_usage_usec("usage_usec -1\n"));
    EXPECT_FALSE(parse_cpu_stat_usage_usec("usage_usec 99999999999999999999\n"));
    EXPECT_FALSE(parse_cpu_stat_usage_usec("usage_usecs 1\n"));
    EXPECT_EQ(parse_cpuacct_usage("42804510327532\n"), 42804510327532u);
    EXPECT_FALSE(parse_cpuacct_usage(""));
    EXPECT_FALSE(parse_cpuacct_usage("12 34\n"));
    EXPECT_FALSE(parse_cpuacct_usage("1\n\n"));
}

TEST(CgroupDirectory, BelowTheMountRootOnly) {
    const cgroup_mount root{"/", "/sys/fs/cgroup/unified"};
    EXPECT_EQ(cgroup_directory(root, "/"), "/sys/fs/cgroup/unified");
    EXPECT_EQ(cgroup_directory(root, "/a/b"), "/sys/fs/cgroup/unified/a/b");
    const cgroup_mount sub{"/ci", "/mnt/cg/"};
    EXPECT_EQ(cgroup_directory(sub, "/ci"), "/mnt/cg");
    EXPECT_EQ(cgroup_directory(sub, "/ci/job"), "/mnt/cg/job");
    EXPECT_FALSE(cgroup_directory(sub, "/cix"));  // a sibling that shares the prefix
    EXPECT_FALSE(cgroup_directory(sub, "/other"));
    EXPECT_FALSE(cgroup_directory(root, "/../x"));  // outside the cgroup namespace
    EXPECT_FALSE(cgroup_directory(root, "/a/../../etc"));
    EXPECT_FALSE(cgroup_directory(root, "relative"));
}
