// SPDX-License-Identifier: MIT
// `serve --namedprocess` (process-exporter's families, every one on): what a
// member that has not run since the last collection costs, and that the
// values of such members still follow what changes them (its own running,
// another process's prlimit).
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "scrape_text.hpp"
#include "serve/collect/collector.hpp"

namespace {

using proctimes::cli::serve::format;
using serve_testing::value_of;

double process_cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The read calls this process has made (/proc/self/io's syscr, every
// thread's): each file a collection reads costs at least one.
double read_calls() {
    std::ifstream io("/proc/self/io");
    std::string key;
    double value = -1;
    while (io >> key >> value)
        if (key == "syscr:") return value;
    return -1;
}

std::unique_ptr<proctimes::cli::serve::collector> every_family(const std::string& name, std::string& error) {
    proctimes::cli::serve_options opts;
    opts.namedprocess = true;
    opts.threads = true;
    opts.gather_smaps = true;
    opts.include = "^" + name + "$";
    opts.top = 0;
    opts.exit_records = false;
    auto made = proctimes::cli::serve::collector::open(opts);
    if (!made) error = made.error().message;
    return std::move(*made);
}

// Children named `name` that sleep until killed: sleep(1) run through a link
// called `name`, so that no code of this test program (a sanitizer's runtime
// restarts a thread of its own in a forked child, which then runs every
// 100 ms) runs in them.
struct idle_children {
    std::vector<pid_t> pids;
    std::string dir, link;
    idle_children(int n, const char* name) {
        char tmpl[] = "/tmp/proctimes_pe_cost_XXXXXX";
        if (::mkdtemp(tmpl) == nullptr) return;
        dir = tmpl;
        link = dir + "/" + name;
        if (::symlink("/bin/sleep", link.c_str()) != 0) return;
        for (int i = 0; i < n; ++i) {
            const pid_t c = ::fork();
            if (c == 0) {
                ::execl(link.c_str(), name, "100000", static_cast<char*>(nullptr));
                ::_exit(127);
            }
            if (c > 0) pids.push_back(c);
        }
    }
    ~idle_children() {
        for (const pid_t c : pids) ::kill(c, SIGKILL);
        for (const pid_t c : pids) ::waitpid(c, nullptr, 0);
        if (!dir.empty()) {
            ::unlink(link.c_str());
            ::rmdir(dir.c_str());
        }
    }
    idle_children(const idle_children&) = delete;
    idle_children& operator=(const idle_children&) = delete;
};

// CPU (seconds) and read calls of this process per collection of `col`, over
// `n` collections 150 ms apart.
struct collection_cost {
    double cpu = 0, reads = 0;
};
collection_cost cost_per_collection(proctimes::cli::serve::collector& col, int n) {
    collection_cost total;
    for (int i = 0; i < n; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));  // past the 100 ms shared collection
        const double c0 = process_cpu_seconds(), r0 = read_calls();
        (void)col.scrape(format::text_004);
        total.cpu += process_cpu_seconds() - c0;
        total.reads += read_calls() - r0;
    }
    return {total.cpu / n, total.reads / n};
}

// The cost per collection of `with` and of `without`, collected in turns
// (four rounds of three each), the smallest of each: what else runs only
// adds.
std::pair<collection_cost, collection_cost> best_of_rounds(proctimes::cli::serve::collector& with,
                                                           proctimes::cli::serve::collector& without) {
    collection_cost best_with{1e9, 1e9}, best_without{1e9, 1e9};
    for (int round = 0; round < 4; ++round) {
        const collection_cost w = cost_per_collection(with, 3), wo = cost_per_collection(without, 3);
        best_with = {std::min(best_with.cpu, w.cpu), std::min(best_with.reads, w.reads)};
        best_without = {std::min(best_without.cpu, wo.cpu), std::min(best_without.reads, wo.reads)};
    }
    return {best_with, best_without};
}

}  // namespace

// A member that has not run is not read again: its stat says what can move
// without it running (its resident size), the kernel gives its limit
// (prlimit), and the rest stands. From the eBPF walk, which reads those two
// with its CPU, nothing is read. Counted as the read calls a collection makes
// for 300 idle members beyond one that has none: reading every file of each
// member (stat, status, io, limits, smaps_rollup, wchan, and the fd/ listing)
// takes at least six, its stat alone one or two. The count, unlike the CPU
// (printed: 60-150 us per member before, 10-20 us after on the 2-core VM; more
// under the sanitizers), does not depend on the machine's load.
TEST(ServePeCost, IdleMembersAreNotReadAgain) {
    constexpr int members = 300;
    const idle_children kids(members, "pe-cost-idle");
    ASSERT_EQ(kids.pids.size(), static_cast<std::size_t>(members));
    ASSERT_GE(read_calls(), 0) << "no /proc/self/io here";
    std::string error;
    auto with = every_family("pe-cost-idle", error);
    ASSERT_TRUE(with) << error;
    auto without = every_family("pe-cost-none-xyz", error);
    ASSERT_TRUE(without) << error;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // every child exec'd and asleep
    const std::string first = with->scrape(format::text_004);
    ASSERT_EQ(value_of(first, "namedprocess_namegroup_num_procs{groupname=\"pe-cost-idle\"}"), members);
    (void)without->scrape(format::text_004);
    const auto [best_with, best_without] = best_of_rounds(*with, *without);
    const double per_member_us = (best_with.cpu - best_without.cpu) / members * 1e6;
    const double reads_per_member = (best_with.reads - best_without.reads) / members;
    std::printf(
        "per idle member per collection: %.2f read calls, %.1f us of CPU (collection %.2f ms, without "
        "members %.2f ms)\n",
        reads_per_member, per_member_us, best_with.cpu * 1e3, best_without.cpu * 1e3);
    EXPECT_LT(reads_per_member, 3.0);
    // From the eBPF walk, which reads each member's memory and open-files
    // limit with its CPU, a member that did not run is not read at all.
    if (first.find("proctimes_exporter_source{snapshot=\"bpf") != std::string::npos)
        EXPECT_LT(reads_per_member, 0.1) << "no file of an idle member read";
    // The values are still there, and the same as a fresh reader's.
    const std::string last = with->scrape(format::text_004);
    EXPECT_EQ(value_of(last, "namedprocess_namegroup_num_procs{groupname=\"pe-cost-idle\"}"), members);
    EXPECT_GT(value_of(last, "namedprocess_namegroup_memory_bytes{groupname=\"pe-cost-idle\",memtype=\"resident\"}"),
              0);
    EXPECT_GT(value_of(last, "namedprocess_namegroup_open_filedesc{groupname=\"pe-cost-idle\"}"), 0);
    EXPECT_GT(value_of(last, "namedprocess_namegroup_states{groupname=\"pe-cost-idle\",state=\"Sleeping\"}"), 0);
}

// A member that ran is read again; one that did not still shows a limit
// another process set on it (prlimit), as the next collection reads it.
TEST(ServePeCost, IdleMemberFollowsItsRunningAndItsLimit) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(p[1]);
        ::prctl(PR_SET_NAME, "pe-cost-wake");
        // Each byte read: 40 more descriptors, then wait again.
        char c;
        while (::read(p[0], &c, 1) == 1)
            for (int i = 0; i < 40; ++i) (void)::open("/dev/null", O_RDONLY);
        ::_exit(0);
    }
    ::close(p[0]);
    std::string error;
    auto col = every_family("pe-cost-wake", error);
    ASSERT_TRUE(col) << error;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::string fds_series = "namedprocess_namegroup_open_filedesc{groupname=\"pe-cost-wake\"}";
    const std::string ratio_series = "namedprocess_namegroup_worst_fd_ratio{groupname=\"pe-cost-wake\"}";
    const std::string a = col->scrape(format::text_004);
    const double fds_a = value_of(a, fds_series);
    ASSERT_GT(fds_a, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const std::string b = col->scrape(format::text_004);  // idle: the same
    EXPECT_EQ(value_of(b, fds_series), fds_a);

    // It runs: 40 descriptors more.
    ASSERT_EQ(::write(p[1], "x", 1), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::string c = col->scrape(format::text_004);
    EXPECT_EQ(value_of(c, fds_series), fds_a + 40);

    // Idle again; its soft limit is set from here: the ratio follows at once.
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    (void)col->scrape(format::text_004);
    rlimit lim{};
    ASSERT_EQ(::prlimit(child, RLIMIT_NOFILE, nullptr, &lim), 0);
    lim.rlim_cur = 200;
    ASSERT_EQ(::prlimit(child, RLIMIT_NOFILE, &lim, nullptr), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const std::string d = col->scrape(format::text_004);
    EXPECT_EQ(value_of(d, fds_series), fds_a + 40);
    EXPECT_NEAR(value_of(d, ratio_series), (fds_a + 40) / 200.0, 1e-9);

    ::close(p[1]);
    ::waitpid(child, nullptr, 0);
}

// A member's smaps_rollup is read at most once every 10 s, running or not:
// a member that maps 64 MiB between two scrapes shows them at once in its
// resident memory, while its proportional memory stands as last read.
TEST(ServePeCost, ProportionalMemoryStandsBetweenItsReads) {
    const std::string name = "pe-pss-" + std::to_string(::getpid() % 100000);
    int go[2], done[2];
    ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(done, O_CLOEXEC), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_NAME, name.c_str());
        char c = 0;
        if (::write(done[1], &c, 1) != 1 || ::read(go[0], &c, 1) != 1) ::_exit(1);
        constexpr std::size_t n = 64u << 20;
        auto* mem = static_cast<char*>(::malloc(n));
        for (std::size_t i = 0; mem && i < n; i += 4096) mem[i] = 1;
        if (::write(done[1], &c, 1) != 1) ::_exit(2);
        for (;;) ::pause();
    }
    ASSERT_GT(pid, 0);
    char c = 0;
    ASSERT_EQ(::read(done[0], &c, 1), 1);  // named
    std::string error;
    auto col = every_family(name, error);
    ASSERT_TRUE(col) << error;
    const std::string g = "namedprocess_namegroup_memory_bytes{groupname=\"" + name + "\",memtype=";
    const std::string a = col->scrape(format::text_004);
    ASSERT_EQ(::write(go[1], &c, 1), 1);
    ASSERT_EQ(::read(done[0], &c, 1), 1);                         // 64 MiB touched
    std::this_thread::sleep_for(std::chrono::milliseconds(150));  // past the 100 ms a collection is shared
    const std::string b = col->scrape(format::text_004);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    for (const int fd : {go[0], go[1], done[0], done[1]}) ::close(fd);
    EXPECT_GE(value_of(b, g + "\"resident\"}") - value_of(a, g + "\"resident\"}"), 60.0 * (1 << 20)) << b;
    EXPECT_GT(value_of(a, g + "\"proportionalResident\"}"), 0) << a;
    EXPECT_EQ(value_of(b, g + "\"proportionalResident\"}"), value_of(a, g + "\"proportionalResident\"}")) << b;
}

// A kernel thread has no address space: its smaps_rollup is refused at every
// read, and its memory is none whether it runs or not. So a kernel thread
// that has not run is not read again either (from the eBPF walk, which
// states its CPU exactly), and its proportional memory is missing as
// process-exporter counts it, a partial read at each collection. The kernel
// threads taken are those that run only when the machine is short of
// memory or changes its CPUs (rescuer workers, CPU hot-plug threads) and
// kthreadd, each its own group by name.
TEST(ServePeCost, KernelThreadsThatDidNotRunAreNotRead) {
    ASSERT_GE(read_calls(), 0) << "no /proc/self/io here";
    const std::string names = "(kthreadd|cpuhp/[0-9]+|kworker/R-.+)";
    const std::regex pattern(names);
    int members = 0;
    if (DIR* d = ::opendir("/proc")) {
        while (const dirent* e = ::readdir(d)) {
            if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
            std::ifstream comm(std::string("/proc/") + e->d_name + "/comm");
            std::string name;
            if (std::getline(comm, name) && std::regex_match(name, pattern)) ++members;
        }
        ::closedir(d);
    }
    if (members == 0) GTEST_SKIP() << "no kernel thread " << names << " in /proc (a pid namespace of its own)";
    std::string error;
    auto with = every_family(names, error);
    ASSERT_TRUE(with) << error;
    auto without = every_family("pe-cost-none-xyz", error);
    ASSERT_TRUE(without) << error;
    const std::string first = with->scrape(format::text_004);
    (void)without->scrape(format::text_004);
    const auto [best_with, best_without] = best_of_rounds(*with, *without);
    const double reads_per_member = (best_with.reads - best_without.reads) / members;
    std::printf("%d kernel threads: %.2f read calls per member per collection\n", members, reads_per_member);
    // Before: its stat at every collection (and an open of its smaps_rollup).
    if (first.find("proctimes_exporter_source{snapshot=\"bpf") != std::string::npos)
        EXPECT_LT(reads_per_member, 0.5) << "kernel threads that did not run were read";
    // Each one's proportional memory is missing at each collection, as
    // process-exporter counts it, and the group's is 0.
    const std::string a = with->scrape(format::text_004);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const std::string b = with->scrape(format::text_004);
    EXPECT_GE(value_of(b, "namedprocess_scrape_partial_errors") - value_of(a, "namedprocess_scrape_partial_errors"),
              members);
    EXPECT_EQ(
        value_of(b, "namedprocess_namegroup_memory_bytes{groupname=\"kthreadd\",memtype=\"proportionalResident\"}"), 0);
    EXPECT_EQ(value_of(b, "namedprocess_namegroup_num_procs{groupname=\"kthreadd\"}"), 1);
}
