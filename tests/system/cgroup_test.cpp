// SPDX-License-Identifier: MIT
// proctimes/cgroup.hpp on this machine: the cgroup of this process and its
// counter, which keeps the CPU of a child after the child is gone.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "burn.hpp"
#include "file_text.hpp"
#include "proctimes/cgroup.hpp"
#include "proctimes/error.hpp"

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

namespace {

using testing_helpers::file_text;

// CPU the counter of `cg` gained while a child of this process burned
// `burn` of CPU and was reaped; the child is moved into `procs` first when
// that is not empty (a cgroup directory's cgroup.procs).
std::chrono::nanoseconds counter_growth_over_a_reaped_child(const std::string& cg, nanoseconds burn,
                                                            const std::string& procs = {}) {
    int go[2];
    EXPECT_EQ(::pipe(go), 0);
    const pid_t child = ::fork();
    EXPECT_GE(child, 0);
    if (child == 0) {
        ::close(go[1]);
        char c;
        if (::read(go[0], &c, 1) != 1) ::_exit(1);
        testing_helpers::burn_process_cpu(burn);
        ::_exit(0);
    }
    ::close(go[0]);
    if (!procs.empty()) {
        std::ofstream f(procs);
        f << child << std::flush;
        EXPECT_TRUE(f.good()) << "cannot move a process into " << procs;
    }
    const auto before = proctimes::cgroup_cpu_usage(cg);
    EXPECT_TRUE(before) << before.error().message();
    EXPECT_EQ(::write(go[1], "x", 1), 1);
    ::close(go[1]);
    int status = 0;
    rusage ru{};
    EXPECT_EQ(::wait4(child, &status, 0, &ru), child);
    const auto after = proctimes::cgroup_cpu_usage(cg);
    EXPECT_TRUE(after) << after.error().message();
    return before && after ? *after - *before : nanoseconds{-1};
}

bool v1_cpuacct_mounted() {
    std::ifstream in("/proc/self/mountinfo");
    for (std::string line; std::getline(in, line);) {
        const auto dash = line.find(" - cgroup ");
        if (dash != std::string::npos && line.find("cpuacct", dash) != std::string::npos) return true;
    }
    return false;
}

}  // namespace

TEST(Cgroup, ThisProcessAndACounterThatKeepsExitedChildren) {
    const auto cg = proctimes::process_cgroup(::getpid());
    ASSERT_TRUE(cg) << cg.error().message();
    ASSERT_FALSE(cg->empty());
    EXPECT_EQ(cg->front(), '/');
    // The path is one of the lines of /proc/self/cgroup.
    EXPECT_NE(file_text("/proc/self/cgroup").find(":" + *cg + "\n"), std::string::npos) << *cg;

    const auto probe = proctimes::cgroup_cpu_usage(*cg);
    if (!probe && probe.error() == proctimes::errc::not_supported)
        GTEST_SKIP() << "no cgroup file system with a CPU counter is mounted here";
    ASSERT_TRUE(probe) << probe.error().message();
    // The child is reaped; its CPU (at least the 60 ms it burned, less the
    // counter's 1 µs resolution) is still in the cgroup's account — but for
    // the v2 root without a v1 cpuacct beside it, which counts scheduler
    // ticks (cgroup.hpp): there it may be short by up to a tick per CPU.
    nanoseconds slack = 1us;
    if (*cg == "/" && !v1_cpuacct_mounted()) slack = 10ms * static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    EXPECT_GE(counter_growth_over_a_reaped_child(*cg, 60ms), 60ms - slack) << *cg;
}

TEST(Cgroup, TheRootIsExactWhereACpuacctHierarchyIsMounted) {
    if (!v1_cpuacct_mounted()) GTEST_SKIP() << "no v1 cpuacct hierarchy is mounted: the v2 root counts ticks";
    // Five in a row: a counter of ticks (the v2 root's) is short in some.
    for (int i = 0; i < 5; ++i) EXPECT_GE(counter_growth_over_a_reaped_child("/", 30ms), 30ms - 1us) << i;
}

TEST(Cgroup, ANewCgroupCountsAReapedChildExactly) {
    std::string dir, why;
    for (const char* base : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/cpuacct"}) {
        const std::string b = base;
        if (!std::ifstream(b + "/cpu.stat").good() && !std::ifstream(b + "/cpuacct.usage").good()) continue;
        const std::string d = b + "/proctimes-cgroup-test-" + std::to_string(::getpid());
        if (::mkdir(d.c_str(), 0755) == 0) {
            dir = d;
            break;
        }
        why += b + ": " + std::strerror(errno) + "; ";
    }
    if (dir.empty()) GTEST_SKIP() << "no cgroup this user may create: " << (why.empty() ? "none mounted" : why);
    // Named by its directory; the child runs in it from before its burn.
    for (int i = 0; i < 3; ++i)
        EXPECT_GE(counter_growth_over_a_reaped_child(dir, 30ms, dir + "/cgroup.procs"), 30ms - 1us) << dir << " " << i;
    // Removable once empty (a reaped task can take a moment to leave it).
    int rc = -1;
    for (int i = 0; i < 100 && (rc = ::rmdir(dir.c_str())) != 0 && errno == EBUSY; ++i) ::usleep(10'000);
    EXPECT_EQ(rc, 0) << dir << ": " << std::strerror(errno);
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

TEST(Cgroup, OneHierarchyOfAProcess) {
    using proctimes::cgroup_hierarchy;
    const std::string root = ::testing::TempDir() + "/cgroup-proc-" + std::to_string(::getpid());
    ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir((root + "/7").c_str(), 0700), 0);
    const auto of = [&](const std::string& text, cgroup_hierarchy h) {
        std::ofstream(root + "/7/cgroup", std::ios::trunc) << text;
        return proctimes::process_cgroup(7, h, root);
    };
    const std::string hybrid = "3:cpu,cpuacct:/v1/job\n2:memory:/m\n0::/user.slice/x\n";
    EXPECT_EQ(of(hybrid, cgroup_hierarchy::unified).value(), "/user.slice/x");
    EXPECT_EQ(of(hybrid, cgroup_hierarchy::cpuacct).value(), "/v1/job");
    EXPECT_EQ(of("2:memory:/m\n0::/x\n", cgroup_hierarchy::cpuacct).error(), proctimes::errc::not_supported);
    EXPECT_EQ(of("3:cpu,cpuacct:/j\n", cgroup_hierarchy::unified).error(), proctimes::errc::not_supported);
    EXPECT_EQ(of("garbage\n", cgroup_hierarchy::unified).error(), proctimes::errc::malformed_data);
    EXPECT_EQ(proctimes::process_cgroup(8, cgroup_hierarchy::unified, root).error(), proctimes::errc::no_such_process);
    EXPECT_EQ(proctimes::process_cgroup(0, cgroup_hierarchy::unified, root).error(), proctimes::errc::invalid_argument);
    // The live table: this process's own line, the one process_cgroup gives first.
    const auto mine = proctimes::process_cgroup(::getpid());
    const auto v2 = proctimes::process_cgroup(::getpid(), cgroup_hierarchy::unified);
    if (mine && v2) {
        EXPECT_EQ(*v2, *mine);
    }
    ::unlink((root + "/7/cgroup").c_str());
    ::rmdir((root + "/7").c_str());
    ::rmdir(root.c_str());
}

TEST(Cgroup, FindByDirectoryOrHierarchyPath) {
    using proctimes::errc;
    EXPECT_EQ(proctimes::find_cgroup("").error(), errc::invalid_argument);
    EXPECT_EQ(proctimes::find_cgroup("relative").error(), errc::invalid_argument);
    EXPECT_EQ(proctimes::find_cgroup("/a/../b").error(), errc::invalid_argument);
    EXPECT_EQ(proctimes::find_cgroup("/a/./b").error(), errc::invalid_argument);
    EXPECT_EQ(proctimes::find_cgroup("/..").error(), errc::invalid_argument);
    const auto root = proctimes::find_cgroup("/");
    if (!root && root.error() == errc::not_supported) GTEST_SKIP() << "no v2 or v1 cpuacct hierarchy is mounted";
    ASSERT_TRUE(root) << root.error().message();
    EXPECT_EQ(root->path, "/");
    // Its directory names the same cgroup, with or without a trailing slash,
    // and the counter of either form is the same one.
    for (const std::string& form : {root->directory, root->directory + "/"}) {
        const auto again = proctimes::find_cgroup(form);
        ASSERT_TRUE(again) << form << ": " << again.error().message();
        EXPECT_EQ(again->directory, root->directory);
        EXPECT_EQ(again->path, "/");
        EXPECT_EQ(again->hierarchy, root->hierarchy);
    }
    // This process's own cgroup, by its hierarchy path.
    const auto h = root->hierarchy;
    const auto mine = proctimes::process_cgroup(::getpid(), h);
    ASSERT_TRUE(mine) << mine.error().message();
    if (mine->starts_with("/..")) GTEST_SKIP() << "this cgroup is outside the cgroup namespace's root";
    const auto found = proctimes::find_cgroup(*mine);
    ASSERT_TRUE(found) << *mine << ": " << found.error().message();
    EXPECT_EQ(found->path, *mine);
    struct stat st {};
    EXPECT_EQ(::stat(found->directory.c_str(), &st), 0) << found->directory;
    EXPECT_EQ(proctimes::find_cgroup("/proctimes-no-such-cgroup-7f3a").error(), std::errc::no_such_file_or_directory);
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
