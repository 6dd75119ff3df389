// SPDX-License-Identifier: MIT
// proctimes/cgroup.hpp on this machine: the cgroup of this process and its
// counter, which keeps the CPU of a child after the child is gone.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "burn.hpp"
#include "proctimes/cgroup.hpp"
#include "proctimes/error.hpp"

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST(Cgroup, ThisProcessAndACounterThatKeepsExitedChildren) {
    const auto cg = proctimes::process_cgroup(::getpid());
    ASSERT_TRUE(cg) << cg.error().message();
    ASSERT_FALSE(cg->empty());
    EXPECT_EQ(cg->front(), '/');
    // The path is one of the lines of /proc/self/cgroup.
    EXPECT_NE(slurp("/proc/self/cgroup").find(":" + *cg + "\n"), std::string::npos) << *cg;

    const auto before = proctimes::cgroup_cpu_usage(*cg);
    if (!before && before.error() == proctimes::errc::not_supported)
        GTEST_SKIP() << "no cgroup file system with a CPU counter is mounted here";
    ASSERT_TRUE(before) << before.error().message();
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        testing_helpers::burn_process_cpu(60ms);
        ::_exit(0);
    }
    int status = 0;
    rusage ru{};
    ASSERT_EQ(::wait4(child, &status, 0, &ru), child);
    const auto after = proctimes::cgroup_cpu_usage(*cg);
    ASSERT_TRUE(after) << after.error().message();
    // The child is reaped; its CPU (at least the 60 ms it burned, less the
    // counter's 1 µs resolution) is still in the cgroup's account.
    EXPECT_GE(*after - *before, 60ms - 1us);
}

TEST(Cgroup, ClearErrors) {
    EXPECT_EQ(proctimes::process_cgroup(0).error(), proctimes::errc::invalid_argument);
    EXPECT_EQ(proctimes::process_cgroup(-5).error(), proctimes::errc::invalid_argument);
    // A child that is reaped has no cgroup file any more.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) ::_exit(0);
    ASSERT_EQ(::waitpid(child, nullptr, 0), child);
    EXPECT_EQ(proctimes::process_cgroup(child).error(), proctimes::errc::no_such_process);
    EXPECT_EQ(proctimes::process_cgroup(::getpid(), "/nonexistent-proc").error(), proctimes::errc::no_such_process);

    EXPECT_EQ(proctimes::cgroup_cpu_usage("relative/path").error(), proctimes::errc::not_supported);
    EXPECT_EQ(proctimes::cgroup_cpu_usage("/../escape").error(), proctimes::errc::not_supported);
    EXPECT_EQ(proctimes::cgroup_cpu_usage("").error(), proctimes::errc::not_supported);
    const auto missing = proctimes::cgroup_cpu_usage("/proctimes-no-such-cgroup-7f3a");
    ASSERT_FALSE(missing);
    if (missing.error() != proctimes::errc::not_supported) {
        EXPECT_EQ(missing.error(), std::errc::no_such_file_or_directory) << missing.error().message();
    }
}

TEST(Cgroup, DirectoryFormNamesTheSameCounter) {
    // The root of whichever hierarchy is mounted, named by its directory.
    for (const char* dir : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/cpuacct"}) {
        const bool v2 = std::ifstream(std::string(dir) + "/cpu.stat").good();
        const bool v1 = std::ifstream(std::string(dir) + "/cpuacct.usage").good();
        if (!v2 && !v1) continue;
        const auto a = proctimes::cgroup_cpu_usage(dir);
        ASSERT_TRUE(a) << dir << ": " << a.error().message();
        EXPECT_GT(a->count(), 0) << dir;
        const auto b = proctimes::cgroup_cpu_usage(dir);
        ASSERT_TRUE(b);
        EXPECT_GE(*b, *a) << "a counter never goes back";
        return;
    }
    GTEST_SKIP() << "no cgroup counter under /sys/fs/cgroup";
}
