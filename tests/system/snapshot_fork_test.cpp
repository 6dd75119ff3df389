// SPDX-License-Identifier: MIT
// A snapshotter used on both sides of fork(2): the parent and its child take
// snapshots at the same time, many times, each through its copy of the same
// snapshotter. Each must see the whole system every time — its own pid, and
// about as many processes as /proc lists — with the /proc walk (whose
// directory descriptor's offset the two would otherwise share) and with the
// eBPF source (whose ring buffer and counters they would otherwise share).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"

using namespace proctimes;

namespace {

constexpr int rounds = 300;

// The processes /proc lists now.
std::vector<pid_t> proc_listing() {
    std::vector<pid_t> pids;
    DIR* d = ::opendir("/proc");
    if (!d) return pids;
    while (const dirent* e = ::readdir(d))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9') pids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    ::closedir(d);
    std::sort(pids.begin(), pids.end());
    return pids;
}

// Takes `rounds` snapshots; "" when each was complete, else what was wrong
// with the first one that was not.
std::string take_many(snapshotter& s) {
    const pid_t me = ::getpid();
    for (int i = 0; i < rounds; ++i) {
        const auto before = proc_listing();
        auto snap = s.take();
        if (!snap) return "take " + std::to_string(i) + " failed: " + snap.error().message();
        const auto after = proc_listing();
        const std::size_t got = snap->processes.size();
        if (!snap->find(me))
            return "take " + std::to_string(i) + " lacks the caller's pid " + std::to_string(me) + " (" +
                   std::to_string(got) + " processes)";
        // The processes /proc listed before and after the walk were there all
        // along (but for a pid reused in between, rare): the walk lists them.
        // Others start and end around it on a busy machine.
        std::size_t stable = 0, missing = 0;
        for (const pid_t p : before) {
            if (!std::binary_search(after.begin(), after.end(), p)) continue;
            ++stable;
            if (!snap->find(p)) ++missing;
        }
        if (missing * 50 > stable)
            return "take " + std::to_string(i) + ": " + std::to_string(missing) + " of the " + std::to_string(stable) +
                   " processes /proc listed before and after it are missing (" + std::to_string(got) + " listed)";
    }
    return {};
}

// Forks; the child and the parent then run take_many on `s` at once. Returns
// the parent's finding and sets `child_finding` to the child's.
std::string take_on_both_sides(snapshotter& s, std::string& child_finding) {
    int go[2], report[2];
    if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0) return "pipe failed";
    const pid_t pid = ::fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
        ::close(go[1]);
        ::close(report[0]);
        char c;
        if (::read(go[0], &c, 1) != 1) ::_exit(3);
        const std::string found = take_many(s);
        const char* p = found.data();
        std::size_t left = found.size();
        while (left > 0) {
            const ssize_t n = ::write(report[1], p, left);
            if (n <= 0) break;
            p += n;
            left -= static_cast<std::size_t>(n);
        }
        ::_exit(found.empty() ? 0 : 1);
    }
    ::close(go[0]);
    ::close(report[1]);
    const char c = 'g';
    (void)!::write(go[1], &c, 1);
    ::close(go[1]);
    std::string mine = take_many(s);
    child_finding.clear();
    char buf[512];
    ssize_t n;
    while ((n = ::read(report[0], buf, sizeof buf)) > 0) child_finding.append(buf, static_cast<std::size_t>(n));
    ::close(report[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (child_finding.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        child_finding = "the child ended with status " + std::to_string(status);
    return mine;
}

void check_both_sides(const snapshot_options& o, snapshot_source expected) {
    // The child of a multi-threaded process starts walker threads here, which
    // ThreadSanitizer refuses (die_after_fork); the main and ASan runs cover it.
    if (const char* san = std::getenv("PROCTIMES_SANITIZER"); san && std::string_view(san) == "tsan")
        GTEST_SKIP() << "ThreadSanitizer cannot run threads in the child of a multi-threaded fork";
    auto s = snapshotter::open(o);
    ASSERT_TRUE(s) << s.error().message();
    // One take before the fork: the descriptors, buffers and (eBPF) ring
    // buffer exist and are inherited.
    auto first = s->take();
    ASSERT_TRUE(first) << first.error().message();
    if (first->source != expected) GTEST_SKIP() << "the eBPF source is unusable: " << bpf_snapshot_status().reason;
    std::string child;
    const std::string parent = take_on_both_sides(*s, child);
    EXPECT_EQ(parent, "") << "parent";
    EXPECT_EQ(child, "") << "child";
    // The parent's snapshotter still works alone afterwards.
    EXPECT_EQ(take_many(*s), "");
}

// Options for a walk of threads too from `source`, with `workers` walkers (0:
// the default).
snapshot_options with_threads(snapshot_source source, unsigned workers = 0) {
    snapshot_options o;
    o.source = source;
    o.threads = true;
    if (workers != 0) o.workers = workers;
    return o;
}

}  // namespace

TEST(SnapshotFork, ProcWalkOnBothSides) {
    check_both_sides(with_threads(snapshot_source::procfs, 1), snapshot_source::procfs);
}

TEST(SnapshotFork, ProcWalkWithTwoWalkersOnBothSides) {
    check_both_sides(with_threads(snapshot_source::procfs, 2), snapshot_source::procfs);
}

TEST(SnapshotFork, BpfSourceOnBothSides) { check_both_sides(with_threads(snapshot_source::bpf), snapshot_source::bpf); }
