// SPDX-License-Identifier: MIT
// snapshot_options::workers beyond what the machine can run: the walk is cut
// to four walkers per usable CPU (at most 64) instead of allocating a thread
// and a buffer per requested walker. The huge requests run in a forked child
// whose address space is limited, so that a walk allocating per requested
// walker fails there (ENOMEM) instead of growing to gigabytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <string>

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"

using namespace proctimes;

namespace {

unsigned usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return static_cast<unsigned>(CPU_COUNT(&set));
}

unsigned cap() { return std::min(4 * usable_cpus(), 64u); }

// "" when a take with `asked` workers (one-shot and through a snapshotter,
// three takes) succeeds within 2 GiB of address space and runs at most cap()
// walkers; else what went wrong. Runs in a forked child.
std::string check_in_child(unsigned asked) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return "pipe failed";
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(p[0]);
        std::string found;
        const rlimit as{rlim_t{2} << 30, rlim_t{2} << 30};
        // A sanitizer's shadow memory needs far more address space than 2 GiB:
        // there, the cap is checked by the walker count alone.
        if (!std::getenv("PROCTIMES_SANITIZER") && ::setrlimit(RLIMIT_AS, &as) != 0) found = "setrlimit failed";
        snapshot_options o;
        o.source = snapshot_source::procfs;
        o.threads = true;
        o.workers = asked;
        if (found.empty()) {
            auto s = take_snapshot(o);
            if (!s)
                found = "take_snapshot: " + s.error().message();
            else if (s->workers < 1 || s->workers > cap())
                found = "take_snapshot ran " + std::to_string(s->workers) + " walkers";
            else if (!s->find(::getpid()))
                found = "take_snapshot lacks the caller";
        }
        if (found.empty()) {
            auto sn = snapshotter::open(o);
            if (!sn) found = "snapshotter::open: " + sn.error().message();
            for (int i = 0; found.empty() && i < 3; ++i) {
                auto s = sn->take();
                if (!s)
                    found = "take: " + s.error().message();
                else if (s->workers < 1 || s->workers > cap())
                    found = "take ran " + std::to_string(s->workers) + " walkers";
            }
        }
        (void)!::write(p[1], found.data(), found.size());
        ::_exit(0);
    }
    ::close(p[1]);
    std::string found;
    char buf[256];
    ssize_t n;
    while ((n = ::read(p[0], buf, sizeof buf)) > 0) found.append(buf, static_cast<std::size_t>(n));
    ::close(p[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (found.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        found = "the child ended with status " + std::to_string(status);
    return found;
}

}  // namespace

TEST(SnapshotWorkers, AHugeRequestIsCut) {
    for (const unsigned asked : {1u << 31, std::numeric_limits<unsigned>::max(), 65u, cap() + 1}) {
        const auto t0 = std::chrono::steady_clock::now();
        EXPECT_EQ(check_in_child(asked), "") << asked << " workers asked";
        EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds{30});
    }
}

TEST(SnapshotWorkers, ARequestWithinTheCapAllRun) {
    snapshot_options o;
    o.source = snapshot_source::procfs;
    o.workers = std::min(cap(), 2u);
    auto s = take_snapshot(o);
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->workers, o.workers);
}
