// SPDX-License-Identifier: MIT
// The eBPF exit stream: exact final values and exit instants of tasks nobody
// held, and no silent loss in a fork/exit storm (docs/BPF.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf_skip.hpp"
#include "burn.hpp"
#include "linux/bpf/exit_ring_reader.hpp"
#include "linux/exit/recent.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/clock.hpp"
#include "proctimes/snapshot.hpp"

using namespace proctimes;
using namespace std::chrono_literals;
using detail::bpf_task_end;
using std::chrono::nanoseconds;

namespace {

nanoseconds boottime() {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return std::chrono::seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec};
}

// Collects the ends the stream delivers, keyed by tid.
class collector {
public:
    void add(const bpf_task_end& e) {
        std::lock_guard lock(m_);
        ends_[e.tid] = e;
        cv_.notify_all();
    }
    // The stream's report of a task whose end it lost (on_lost).
    void lost(const detail::bpf_lost_task& t) {
        std::lock_guard lock(m_);
        lost_.insert(t.tid);
        cv_.notify_all();
    }
    // The end of `tid`, waiting up to `limit` for it (sched_process_free comes
    // an RCU grace period after the reap) or for its report of loss: under load the kernel now and
    // then runs no sched_process_free program for a task (docs/BPF.md,
    // Losses), and the stream reports that end lost (when the task's address
    // is reused, or by its sweep 10-11 s on).
    std::optional<bpf_task_end> wait_for(pid_t tid, nanoseconds limit = 15s) {
        std::unique_lock lock(m_);
        if (!cv_.wait_for(lock, limit, [&] { return ends_.count(tid) != 0 || lost_.count(tid) != 0; }))
            return std::nullopt;
        if (!ends_.count(tid)) return std::nullopt;
        return ends_[tid];
    }
    // A try whose task's end the kernel never gave to the stream is repeated
    // (up to three tries): that end cannot be delivered, only reported.
    bool lost_in_kernel(pid_t tid, int attempt) {
        std::lock_guard lock(m_);
        if (attempt >= 3 || ends_.count(tid) || !lost_.count(tid)) return false;
        std::printf("try %d: the end of %d was reported lost (no free program ran for it); once more\n", attempt, tid);
        return true;
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::map<pid_t, bpf_task_end> ends_;
    std::set<pid_t> lost_;
};

// The arguments are a declared name and a captured name, which cannot be
// parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define START_STREAM(stream, col)                                                                          \
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();                                                                      \
    auto stream = detail::bpf_exit_stream::start([&col](const bpf_task_end& e) { col.add(e); },            \
                                                 [&col](const detail::bpf_lost_task& t) { col.lost(t); }); \
    ASSERT_TRUE(stream) << stream.error().message()
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace

TEST(BpfExitStream, ProcessReapedAtOnceByItsOwnParent) {
    collector col;
    START_STREAM(stream, col);
    auto anchor = get_boot_anchor();
    ASSERT_TRUE(anchor);
    constexpr auto burned = 60ms;
    pid_t middle = 0, worker = 0;
    std::int64_t t0 = 0;
    nanoseconds t1{};
    std::optional<bpf_task_end> e;
    for (int attempt = 1;; ++attempt) {
        // middle forks `worker`, which burns, notes the clock, exits with 7; middle
        // reaps it at once. Nobody else ever holds the worker.
        int p[2];
        ASSERT_EQ(::pipe(p), 0);
        middle = ::fork();
        ASSERT_GE(middle, 0);
        if (middle == 0) {
            const pid_t w = ::fork();
            if (w == 0) {
                testing_helpers::burn_thread_cpu(burned);
                const std::int64_t done = boottime().count();
                (void)!::write(p[1], &done, sizeof done);
                ::_exit(7);
            }
            (void)!::write(p[1], &w, sizeof w);
            int st;
            ::waitpid(w, &st, 0);
            ::_exit(0);
        }
        ::close(p[1]);
        worker = 0;
        ASSERT_EQ(::read(p[0], &worker, sizeof worker), static_cast<ssize_t>(sizeof worker));
        ASSERT_EQ(::read(p[0], &t0, sizeof t0), static_cast<ssize_t>(sizeof t0));
        ::close(p[0]);
        ASSERT_EQ(::waitpid(middle, nullptr, 0), middle);
        t1 = boottime();  // the worker was reaped before middle exited
        e = col.wait_for(worker);
        if (!col.lost_in_kernel(worker, attempt)) break;
    }
    ASSERT_TRUE(e) << "no end for pid " << worker;
    EXPECT_TRUE(e->is_process());
    EXPECT_EQ(e->parent_pid, middle);
    EXPECT_EQ(e->status.code, 7);
    EXPECT_FALSE(e->status.signaled());
    EXPECT_GE(e->group_kernel + e->group_user, burned);
    EXPECT_GE(e->kernel + e->user, burned);
    ASSERT_TRUE(e->exit);
    EXPECT_LE(nanoseconds{t0}, *e->exit - anchor->boot);
    EXPECT_LE(*e->exit - anchor->boot, t1);
    EXPECT_LE(e->creation, *e->exit);
    EXPECT_LE(*e->exit, e->released);
}

// The hook for handles: a task's end found by its identity after the fact.
TEST(BpfExitStream, RecentExitsFindsAReapedChildByIdentity) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    auto recent = detail::bpf_recent_exits::start(16);
    ASSERT_TRUE(recent) << recent.error().message();
    const pid_t kid = ::fork();
    ASSERT_GE(kid, 0);
    if (kid == 0) {
        testing_helpers::burn_thread_cpu(20ms);
        ::_exit(3);
    }
    // Its start tick, read while it lives (what a handle keeps).
    auto snap = take_snapshot({.source = snapshot_source::procfs});
    ASSERT_TRUE(snap);
    const auto* p = snap->find(kid);
    ASSERT_NE(p, nullptr);
    const std::uint64_t ticks = p->identity.start_ticks;
    ASSERT_EQ(::waitpid(kid, nullptr, 0), kid);
    std::optional<bpf_task_end> e;
    for (int i = 0; i < 1000 && !e; ++i) {
        e = (*recent)->find(kid, ticks);
        if (!e) std::this_thread::sleep_for(10ms);
    }
    ASSERT_TRUE(e) << "no end for " << kid;
    EXPECT_EQ(e->status.code, 3);
    EXPECT_GE(e->group_kernel + e->group_user, 20ms);
    EXPECT_FALSE((*recent)->find(kid, ticks + 1));  // another task that had the same pid
}

TEST(BpfExitStream, ThreadThatEnded) {
    collector col;
    START_STREAM(stream, col);
    auto anchor = get_boot_anchor();
    ASSERT_TRUE(anchor);
    constexpr auto burned = 40ms;
    pid_t tid = 0;
    nanoseconds t0{};
    nanoseconds t1{};
    std::optional<bpf_task_end> e;
    for (int attempt = 1;; ++attempt) {
        std::thread t([&] {
            tid = static_cast<pid_t>(::syscall(SYS_gettid));
            testing_helpers::burn_thread_cpu(burned);
            t0 = boottime();
        });
        t.join();
        // join returns when the kernel clears the thread's tid, which is before
        // do_exit() is traced; the task is gone from /proc only after it.
        const std::string dir = "/proc/self/task/" + std::to_string(tid);
        for (int i = 0; i < 5000 && ::access(dir.c_str(), F_OK) == 0; ++i) std::this_thread::sleep_for(1ms);
        t1 = boottime();
        e = col.wait_for(tid);
        if (!col.lost_in_kernel(tid, attempt)) break;
    }
    ASSERT_TRUE(e) << "no end for tid " << tid;
    EXPECT_FALSE(e->is_process());
    EXPECT_EQ(e->pid, ::getpid());
    EXPECT_GE(e->kernel + e->user, burned);
    ASSERT_TRUE(e->exit);
    EXPECT_LE(t0, *e->exit - anchor->boot);
    EXPECT_LE(*e->exit - anchor->boot, t1);
}

namespace {
void storm_test();
}  // namespace

// A storm of 20,000 short processes: every end is delivered or reported lost
// with its identity, exactly (delivered + lost == 20,000), and no end is lost
// without its task being known (docs/BPF.md, "Losses").
TEST(BpfExitStream, StormOf20000ProcessesEveryEndDeliveredOrLostByName) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    storm_test();
}

namespace {
void storm_test() {
    constexpr int storm = 20'000;
    // The forker writes each child's pid here (shared with the test).
    auto* pids = static_cast<pid_t*>(
        ::mmap(nullptr, storm * sizeof(pid_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(pids, MAP_FAILED);
    std::mutex m;
    std::vector<std::pair<pid_t, instant>> ends;  // every process end: pid, creation
    std::vector<std::pair<pid_t, instant>> lost;  // every lost end whose task is known
    ends.reserve(std::size_t{4} * storm);
    auto stream = detail::bpf_exit_stream::start(
        [&](const bpf_task_end& e) {
            if (!e.is_process()) return;
            std::lock_guard lock(m);
            ends.emplace_back(e.pid, e.creation);
        },
        [&](const detail::bpf_lost_task& t) {
            if (t.pid != t.tid) return;
            std::lock_guard lock(m);
            lost.emplace_back(t.pid, t.creation);
        });
    ASSERT_TRUE(stream) << stream.error().message();
    const std::uint64_t unnamed_before = (*stream)->unnamed_lost();
    const instant began = std::chrono::time_point_cast<nanoseconds>(std::chrono::system_clock::now()) - 1s;
    const auto start = std::chrono::steady_clock::now();
    const pid_t f = ::fork();
    ASSERT_GE(f, 0);
    if (f == 0) {
        for (int i = 0; i < storm; ++i) {
            // vfork: no copy of the test's address space, so the storm is
            // as fast as the kernel can create and end processes.
            const pid_t k = ::vfork();
            if (k == 0) ::_exit(0);
            if (k < 0 || ::waitpid(k, nullptr, 0) != k) ::_exit(1);
            pids[i] = k;
        }
        ::_exit(0);
    }
    int st = 0;
    ASSERT_EQ(::waitpid(f, &st, 0), f);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "the forker failed";
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::set<pid_t> wanted(pids, pids + storm);
    ::munmap(pids, storm * sizeof(pid_t));
    ASSERT_EQ(wanted.size(), static_cast<std::size_t>(storm));  // no pid reused within the storm

    // The storm's ends delivered, and those lost (and not delivered after all).
    std::set<pid_t> got, gone;
    auto count = [&] {
        std::lock_guard lock(m);
        got.clear();
        gone.clear();
        for (const auto& [pid, created] : ends)
            if (created >= began && wanted.count(pid)) got.insert(pid);
        for (const auto& [pid, created] : lost)
            if (created >= began && wanted.count(pid) && !got.count(pid)) gone.insert(pid);
    };
    // The last records arrive an RCU grace period after the last reap; an end
    // whose free never ran is reported by the stream's sweep 10-11 s after
    // its task is gone.
    for (int i = 0; i < 3000; ++i) {
        count();
        if (got.size() + gone.size() >= storm) break;
        std::this_thread::sleep_for(10ms);
    }
    const std::uint64_t unnamed = (*stream)->unnamed_lost() - unnamed_before;
    std::printf("storm: %d processes in %.2f s (%.0f ends/s): %zu delivered, %zu lost by name, %llu lost unnamed\n",
                storm, secs, storm / secs, got.size(), gone.size(), static_cast<unsigned long long>(unnamed));
    EXPECT_EQ((*stream)->malformed(), 0u);
    {
        const auto c = (*stream)->count();
        std::printf(
            "counters: exit_runs %llu free_runs %llu submitted %llu ring_full %llu free_recursion %llu "
            "exit_recursion %llu swept %llu found_after_sweep %llu freed_unseen %llu lost_unnamed %llu "
            "delivered %llu\n",
            (unsigned long long)c.exit_runs, (unsigned long long)c.free_runs, (unsigned long long)c.submitted,
            (unsigned long long)c.ring_full, (unsigned long long)c.free_recursion, (unsigned long long)c.exit_recursion,
            (unsigned long long)c.swept, (unsigned long long)c.found_after_sweep, (unsigned long long)c.freed_unseen,
            (unsigned long long)c.lost_unnamed, (unsigned long long)(*stream)->delivered());
    }
    if (got.size() + gone.size() < storm) {
        std::size_t shown = 0;
        for (pid_t p : wanted)
            if (!got.count(p) && !gone.count(p) && shown++ < 20) std::printf("no end for pid %d\n", p);
    }
    // Exactly: each end delivered or lost by name, none both, none missing;
    // and no loss whose task is unknown (none was ever seen here).
    EXPECT_EQ(got.size() + gone.size(), static_cast<std::size_t>(storm)) << "ends lost without being reported";
    EXPECT_EQ(unnamed, 0u) << "ends lost without their task being known";
}
}  // namespace

// The stamps the stream counts in its map: a zombie holds one from its exit
// to its free, so a sweep reads the map while any is held; once they are
// freed the count goes down by as many (give or take the ends of other
// tasks on the machine meanwhile, which the exit runs bound).
TEST(BpfExitStream, StampsLiveCountsTasksBetweenExitAndFree) {
    collector col;
    START_STREAM(stream, col);
    constexpr int zombies = 20;
    std::vector<pid_t> kids;
    for (int i = 0; i < zombies; ++i) {
        const pid_t k = ::fork();
        ASSERT_GE(k, 0);
        if (k == 0) ::_exit(0);
        kids.push_back(k);
    }
    for (pid_t k : kids) {  // each exited, not reaped: a zombie
        siginfo_t si{};
        ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(k), &si, WEXITED | WNOWAIT), 0);
    }
    const auto held = (*stream)->count();
    EXPECT_GE(held.stamps_live, zombies);
    for (pid_t k : kids) ASSERT_EQ(::waitpid(k, nullptr, 0), k);
    for (pid_t k : kids) (void)col.wait_for(k);  // its end delivered (or reported lost: no free ran)
    const auto freed = (*stream)->count();
    // Down by the 20, less at most the stamps other tasks made meanwhile.
    EXPECT_LE(freed.stamps_live,
              held.stamps_live - zombies + static_cast<std::int64_t>(freed.exit_runs - held.exit_runs));
    EXPECT_GE(freed.stamps_live, 0);
}

// More tasks between exit and free than the small stamp map holds (4,096):
// the rest are stamped in the large map, and each end still comes with its
// exit instant. Once they are freed, neither map holds their stamps, and a
// sweep reads the large map only while it holds one.
TEST(BpfExitStream, StampsBeyondTheSmallMapKeepTheirExitInstants) {
    collector col;
    START_STREAM(stream, col);
    constexpr int zombies = 4096 + 300;
    const auto before = (*stream)->count();
    const std::uint64_t unstamped_before = (*stream)->unstamped();
    std::vector<pid_t> kids;
    kids.reserve(zombies);
    const auto reap_all = [&kids] {
        for (pid_t k : kids) (void)::waitpid(k, nullptr, 0);
    };
    for (int i = 0; i < zombies; ++i) {
        const pid_t k = ::fork();
        if (k < 0) {
            reap_all();
            FAIL() << "fork " << i << ": " << std::strerror(errno);
        }
        if (k == 0) ::_exit(0);
        kids.push_back(k);
    }
    for (pid_t k : kids) {  // each exited, not reaped: a zombie holding its stamp
        siginfo_t si{};
        if (::waitid(P_PID, static_cast<id_t>(k), &si, WEXITED | WNOWAIT) != 0) {
            reap_all();
            FAIL() << "waitid " << k << ": " << std::strerror(errno);
        }
    }
    const auto held = (*stream)->count();
    EXPECT_GE(held.stamps_live, zombies);
    // The small map holds 4,096 at most: at least the other 300 are in the large one.
    EXPECT_GE(held.stamps_live_more, zombies - 4096);
    EXPECT_LE(held.stamps_live - held.stamps_live_more, 4096);
    reap_all();
    int delivered = 0, with_exit = 0;
    for (pid_t k : kids) {
        const auto e = col.wait_for(k, 20s);  // or reported lost: no free ran (docs/BPF.md, Losses)
        if (!e) continue;
        ++delivered;
        if (e->exit) ++with_exit;
    }
    const auto after = (*stream)->count();
    std::printf(
        "%d zombies: %d ends delivered, %d with their exit instant; stamps held %lld (%lld in the large map), "
        "after %lld (%lld)\n",
        zombies, delivered, with_exit, static_cast<long long>(held.stamps_live),
        static_cast<long long>(held.stamps_live_more), static_cast<long long>(after.stamps_live),
        static_cast<long long>(after.stamps_live_more));
    EXPECT_GE(delivered, zombies - 10);  // a free the kernel skips is a reported loss, a few in 10,000
    EXPECT_EQ(with_exit, delivered);
    EXPECT_EQ((*stream)->unstamped(), unstamped_before);
    // Their stamps are gone from both maps: down by the zombies, less at most
    // the stamps other tasks made meanwhile.
    const auto others = static_cast<std::int64_t>(after.exit_runs - held.exit_runs);
    EXPECT_LE(after.stamps_live, held.stamps_live - zombies + others);
    EXPECT_LE(after.stamps_live_more, std::max<std::int64_t>(0, held.stamps_live_more - (zombies - 4096)) + others);
    EXPECT_GE(after.stamps_live_more, 0);
    EXPECT_GE(after.exit_runs - before.exit_runs, static_cast<std::uint64_t>(zombies));
}
