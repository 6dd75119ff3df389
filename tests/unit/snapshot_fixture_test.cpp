// SPDX-License-Identifier: MIT
// Snapshots of a captured /proc tree (tests/fixtures/proc, written by
// tests/fixtures/make_proc_tree.py): every value is known in advance.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "proctimes/proctimes.hpp"

using namespace std::chrono_literals;
using namespace proctimes;

namespace {

const std::string root = std::string(PROCTIMES_FIXTURES) + "/proc";

snapshot take(bool threads, snapshot_cpu cpu = snapshot_cpu::precise_processes, unsigned workers = 1) {
    snapshot_options o;
    o.threads = threads;
    o.proc_root = root;
    o.cpu = cpu;
    o.workers = workers;
    auto s = take_snapshot(o);
    EXPECT_TRUE(s) << s.error().message();
    return s ? std::move(*s) : snapshot{};
}

std::vector<pid_t> pids(const snapshot& s) {
    std::vector<pid_t> v;
    for (const auto& p : s.processes) v.push_back(p.pid());
    return v;
}

std::vector<pid_t> tids(const snapshot& s, pid_t pid) {
    std::vector<pid_t> v;
    const auto* p = s.find(pid);
    if (!p) return v;
    for (const auto& t : s.threads_of(*p)) v.push_back(t.tid());
    return v;
}

instant created(std::uint64_t ticks) { return instant_from_start_ticks(ticks).value(); }

// A snapshot's entries with the one field that differs between two walks of
// the same tree (sampled_at, the snapshot's timestamp) cleared.
template <class T>
std::vector<T> timeless(std::vector<T> v) {
    for (auto& e : v) e.times.sampled_at = instant{};
    return v;
}

}  // namespace

TEST(SnapshotFixture, ListsProcessesInPidOrderAndSkipsOtherEntries) {
    const auto s = take(true);
    // 3000 has no stat (vanished), 4000 is malformed (a failure); README,
    // loadavg, sys/ and the self link are not processes.
    EXPECT_EQ(pids(s), (std::vector<pid_t>{1, 2, 57, 1200, 1977, 3100, 4100}));
    EXPECT_TRUE(s.has_threads);
    EXPECT_EQ(s.boot, get_boot_anchor().value().id);
    EXPECT_EQ(s.find(3000), nullptr);
    EXPECT_EQ(s.find(4000), nullptr);
    EXPECT_EQ(s.find(999), nullptr);
}

TEST(SnapshotFixture, NameWithSpacesAndParentheses) {
    const auto s = take(true);
    const auto* p = s.find(1200);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->name, "a) (b c)");
    EXPECT_EQ(p->parent_pid, 1100);
    EXPECT_EQ(p->state, 'S');
    EXPECT_EQ(p->uid, 1001u) << "the effective uid (second field of Uid:)";
    EXPECT_FALSE(p->kernel_thread);
    EXPECT_EQ(p->thread_count, 3);
    EXPECT_EQ(p->identity, (task_identity{s.boot, 1200, 123456, 0}));
    EXPECT_EQ(p->times.creation, created(123456));
    EXPECT_FALSE(p->times.exit);
    EXPECT_EQ(p->times.sampled_at, s.taken) << "one timestamp for the whole snapshot";
    EXPECT_EQ(p->times.user, 2500ms);
    EXPECT_EQ(p->times.kernel, 750ms);
    // Not the caller's procfs: no process CPU clock, ticks only, and it says so.
    EXPECT_EQ(p->times.precision.source, cpu_source::stat_ticks);
    EXPECT_EQ(p->times.precision.resolution, 10ms);
    EXPECT_EQ(p->times.precision.total_resolution, 10ms);
    EXPECT_EQ(p->times.precision.creation_resolution, 10ms);
}

TEST(SnapshotFixture, ThreadsAscendingWithTheirOwnValues) {
    const auto s = take(true);
    EXPECT_EQ(tids(s, 1200), (std::vector<pid_t>{1200, 1203, 1204}));
    const auto th = s.threads_of(*s.find(1200));
    ASSERT_EQ(th.size(), 3u);
    EXPECT_EQ(th[0].name, "a) (b c)");
    EXPECT_EQ(th[1].name, "worker (1)");
    EXPECT_EQ(th[2].name, "x) R 1 2 (") << "a thread name imitating stat fields";
    EXPECT_EQ(th[0].state, 'S');
    EXPECT_EQ(th[1].state, 'R');
    EXPECT_EQ(th[2].state, 'D');
    for (const auto& t : th) {
        EXPECT_EQ(t.pid, 1200);
        EXPECT_EQ(t.identity.boot, s.boot);
        EXPECT_EQ(t.identity.serial, 0u);
        EXPECT_GE(t.times.creation, s.find(1200)->times.creation);
        EXPECT_EQ(t.times.precision.source, cpu_source::stat_ticks);
    }
    EXPECT_EQ(th[1].identity.start_ticks, 123500u);
    EXPECT_EQ(th[1].times.creation, created(123500));
    EXPECT_EQ(th[1].times.user, 1200ms);
    EXPECT_EQ(th[1].times.kernel, 300ms);
    EXPECT_EQ(th[2].times.user, 300ms);
    EXPECT_EQ(th[2].times.kernel, 200ms);
    // Thread ranges tile the thread vector in process order.
    std::size_t next = 0;
    for (const auto& p : s.processes) {
        EXPECT_EQ(p.first_thread, next) << p.pid();
        next += p.thread_entries;
    }
    EXPECT_EQ(next, s.threads.size());
}

TEST(SnapshotFixture, KernelThreads) {
    const auto s = take(true);
    const auto* kthreadd = s.find(2);
    const auto* worker = s.find(57);
    const auto* init = s.find(1);
    ASSERT_TRUE(kthreadd && worker && init);
    EXPECT_TRUE(kthreadd->kernel_thread);
    EXPECT_EQ(kthreadd->parent_pid, 0);
    EXPECT_TRUE(worker->kernel_thread);
    EXPECT_EQ(worker->parent_pid, 2);
    EXPECT_EQ(worker->state, 'I');
    EXPECT_EQ(worker->name, "kworker/u4:2-events_unbound") << "longer than 15 bytes: kept whole";
    EXPECT_EQ(worker->uid, 0u);
    EXPECT_EQ(worker->times.kernel, 120ms);
    EXPECT_EQ(worker->times.user, 0ms);
    EXPECT_FALSE(init->kernel_thread);
    EXPECT_EQ(init->parent_pid, 0);
    EXPECT_EQ(init->times.user, 1670ms) << "children's times (cutime) are not added";
}

TEST(SnapshotFixture, ZombieKeepsItsFinalTimesButNoExitInstant) {
    const auto s = take(true);
    const auto* z = s.find(1977);
    ASSERT_NE(z, nullptr);
    EXPECT_EQ(z->state, 'Z');
    EXPECT_EQ(z->uid, 1000u);
    EXPECT_EQ(z->times.user, 140ms);
    EXPECT_FALSE(z->times.exit) << "a snapshot does not know when a zombie exited";
    EXPECT_EQ(z->times.state, task_state::exited) << "a zombie's times are final";
    EXPECT_EQ(s.find(1200)->times.state, task_state::running);
    EXPECT_EQ(z->times.sampled_at, s.taken);
    EXPECT_EQ(tids(s, 1977), (std::vector<pid_t>{1977}));
}

TEST(SnapshotFixture, VanishedEntriesAreSkippedAndCounted) {
    const auto s = take(true);
    // Process 3000 (no stat) and thread 3101 (no stat).
    EXPECT_EQ(s.vanished, 2u);
    EXPECT_EQ(tids(s, 3100), (std::vector<pid_t>{3100, 3102}));
    EXPECT_EQ(s.find(3100)->thread_count, 2) << "the stat count, whatever the walk found";
}

TEST(SnapshotFixture, FailuresAreReportedPerItemAndTheWalkGoesOn) {
    const auto s = take(true);
    const auto bad = make_error_code(errc::malformed_data);
    const std::vector<snapshot_failure> want{
        {4000, 0, snapshot_item::process, bad},
        {4100, 0, snapshot_item::owner, bad},
        {4100, 4101, snapshot_item::thread, bad},
    };
    EXPECT_EQ(s.failures, want);
    const auto* p = s.find(4100);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->uid, snapshot_process::unknown_uid);
    EXPECT_EQ(tids(s, 4100), (std::vector<pid_t>{4100}));
}

TEST(SnapshotFixture, WithoutThreads) {
    const auto s = take(false);
    EXPECT_FALSE(s.has_threads);
    EXPECT_TRUE(s.threads.empty());
    EXPECT_EQ(pids(s), (std::vector<pid_t>{1, 2, 57, 1200, 1977, 3100, 4100}));
    for (const auto& p : s.processes) {
        EXPECT_EQ(p.thread_entries, 0u);
        EXPECT_TRUE(s.threads_of(p).empty());
    }
    EXPECT_EQ(s.vanished, 1u);
    ASSERT_EQ(s.failures.size(), 2u);
    EXPECT_EQ(s.failures[0].pid, 4000);
    EXPECT_EQ(s.failures[1].item, snapshot_item::owner);
    auto with = take(true);
    auto a = s.find(1200)->times, b = with.find(1200)->times;
    a.sampled_at = b.sampled_at = instant{};
    EXPECT_EQ(a, b);
}

TEST(SnapshotFixture, PreciseThreadsUseSchedstatAndFallBackWithoutIt) {
    const auto s = take(true, snapshot_cpu::precise);
    const auto th = s.threads_of(*s.find(1200));
    ASSERT_EQ(th.size(), 3u);
    // 1 500 000 011 ns split 120:30 ticks, floored on the kernel side.
    EXPECT_EQ(th[1].times.precision.source, cpu_source::schedstat_and_stat);
    EXPECT_EQ(th[1].times.precision.total_resolution, 1ns);
    EXPECT_EQ(th[1].times.precision.resolution, 10ms);
    EXPECT_EQ(th[1].times.kernel, 300'000'002ns);
    EXPECT_EQ(th[1].times.user, 1'200'000'009ns);
    EXPECT_EQ(th[1].times.cpu(), 1'500'000'011ns);
    EXPECT_EQ(th[2].times.cpu(), 500'000'003ns);
    // 3102 has no schedstat file: ticks, and the precision says so.
    const auto sh = s.threads_of(*s.find(3100));
    ASSERT_EQ(sh.size(), 2u);
    EXPECT_EQ(sh[1].times.precision.source, cpu_source::stat_ticks);
    // Processes of a tree that is not the caller's procfs stay on ticks.
    EXPECT_EQ(s.find(1200)->times.precision.source, cpu_source::stat_ticks);
    EXPECT_EQ(s.find(1200)->times.user, 2500ms);
}

TEST(SnapshotFixture, TicksOptionIgnoresSchedstat) {
    const auto s = take(true, snapshot_cpu::ticks);
    for (const auto& t : s.threads) EXPECT_EQ(t.times.precision.source, cpu_source::stat_ticks) << t.tid();
}

TEST(SnapshotFixture, TwoWorkersGiveTheSameSnapshot) {
    const auto a = take(true, snapshot_cpu::precise, 1);
    const auto b = take(true, snapshot_cpu::precise, 2);
    const auto c = take(true, snapshot_cpu::precise, 7);
    EXPECT_EQ(a.workers, 1u);
    EXPECT_EQ(b.workers, 2u);
    EXPECT_EQ(c.workers, 7u);
    EXPECT_EQ(take(true, snapshot_cpu::precise, 0).workers, 1u) << "automatic: a small tree gets one walker";
    EXPECT_EQ(timeless(a.processes), timeless(b.processes));
    EXPECT_EQ(timeless(a.threads), timeless(b.threads));
    EXPECT_EQ(a.failures, b.failures);
    EXPECT_EQ(a.vanished, b.vanished);
    EXPECT_EQ(timeless(a.processes), timeless(c.processes));
    EXPECT_EQ(timeless(a.threads), timeless(c.threads));
    EXPECT_EQ(a.failures, c.failures);
}

TEST(SnapshotFixture, SnapshotterReusesTheSnapshot) {
    snapshot_options o;
    o.threads = true;
    o.proc_root = root;
    auto taker = snapshotter::open(o);
    ASSERT_TRUE(taker) << taker.error().message();
    EXPECT_EQ(taker->options().proc_root, root);
    snapshot s;
    ASSERT_TRUE(taker->take(s));
    const auto first = s;
    ASSERT_TRUE(taker->take(s));
    EXPECT_EQ(timeless(s.processes), timeless(first.processes));
    EXPECT_EQ(timeless(s.threads), timeless(first.threads));
    EXPECT_EQ(s.failures, first.failures);
    EXPECT_EQ(s.vanished, first.vanished);
    EXPECT_GE(s.since_boot, first.since_boot);
    auto third = taker->take();
    ASSERT_TRUE(third);
    EXPECT_EQ(timeless(third->threads), timeless(first.threads));
}

TEST(SnapshotFixture, TimestampIsOnTheAnchorScale) {
    const auto anchor = get_boot_anchor().value();
    timespec before{};
    ::clock_gettime(CLOCK_BOOTTIME, &before);
    const auto s = take(false);
    timespec after{};
    ::clock_gettime(CLOCK_BOOTTIME, &after);
    const auto ns = [](const timespec& t) {
        return std::chrono::seconds{t.tv_sec} + std::chrono::nanoseconds{t.tv_nsec};
    };
    EXPECT_GE(s.since_boot, ns(before));
    EXPECT_LE(s.since_boot + s.walk_duration, ns(after));
    EXPECT_GT(s.walk_duration, 0ns);
    EXPECT_EQ(s.taken, anchor.boot + s.since_boot);
}

TEST(SnapshotFixture, UnusableRoots) {
    snapshot_options o;
    o.proc_root = root + "/does-not-exist";
    auto a = take_snapshot(o);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error(), errc::process_table_unavailable);
    o.proc_root = root + "/README";
    auto b = take_snapshot(o);
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error(), std::errc::not_a_directory);
    snapshotter empty;
    EXPECT_EQ(empty.take().error(), errc::invalid_handle);
}

TEST(TaskName, InlineAndTruncated) {
    task_name n("a) (b c)");
    EXPECT_EQ(n.size(), 8u);
    EXPECT_EQ(n.view(), "a) (b c)");
    EXPECT_EQ(n.str(), std::string("a) (b c)"));
    const std::string longer(100, 'x');
    task_name t(longer);
    EXPECT_EQ(t.size(), task_name::capacity);
    EXPECT_EQ(t.view(), std::string_view(longer).substr(0, task_name::capacity));
    EXPECT_TRUE(task_name{}.empty());
    EXPECT_EQ(task_name(std::string_view("a\0b", 3)).size(), 3u);
    EXPECT_NE(task_name("a"), task_name("b"));
}
