// SPDX-License-Identifier: MIT
// compute_delta on hand-made snapshots: matching by identity, pid reuse,
// clamping of the split, new and exited processes, threads.
#include <gtest/gtest.h>

#include <chrono>

#include "proctimes/snapshot.hpp"

using namespace std::chrono_literals;
using namespace proctimes;
using std::chrono::nanoseconds;

namespace {

boot_id boot_a() {
    boot_id b;
    b.bytes[0] = 0xaa;
    return b;
}

task_times cpu(nanoseconds kernel, nanoseconds user, nanoseconds total_res = 10ms) {
    task_times t;
    t.kernel = kernel;
    t.user = user;
    t.precision = {10ms, total_res, 10ms, total_res == 10ms ? cpu_source::stat_ticks : cpu_source::cpu_clock_and_stat};
    return t;
}

// Start ticks are 10 ms each; `at` is the snapshot's CLOCK_BOOTTIME.
snapshot snap(nanoseconds at) {
    snapshot s;
    s.boot = boot_a();
    s.since_boot = at;
    return s;
}

snapshot_process& add(snapshot& s, pid_t pid, std::uint64_t start, task_times t) {
    snapshot_process p;
    p.identity = {s.boot, pid, start, 0};
    p.times = t;
    p.first_thread = s.threads.size();
    s.processes.push_back(p);
    return s.processes.back();
}

void add_thread(snapshot& s, pid_t tid, std::uint64_t start, task_times t) {
    snapshot_thread th;
    th.identity = {s.boot, tid, start, 0};
    th.pid = s.processes.back().pid();
    th.times = t;
    s.threads.push_back(th);
    ++s.processes.back().thread_entries;
}

}  // namespace

TEST(SnapshotDelta, SameProcessUsesTheDifference) {
    auto a = snap(100s);
    auto b = snap(102s);
    add(a, 10, 500, cpu(1s, 2s));
    add(b, 10, 500, cpu(1500ms, 3s));
    auto d = compute_delta(a, b).value();
    EXPECT_EQ(d.interval, 2s);
    ASSERT_EQ(d.processes.size(), 1u);
    EXPECT_EQ(d.processes[0].basis, delta_basis::both);
    EXPECT_EQ(d.processes[0].kernel, 500ms);
    EXPECT_EQ(d.processes[0].user, 1s);
    EXPECT_DOUBLE_EQ(d.processes[0].cpu_percent, 75.0);
    EXPECT_EQ(d.total_cpu(), 1500ms);
    EXPECT_TRUE(d.exited.empty());
    EXPECT_TRUE(d.threads.empty()) << "neither snapshot has threads";
}

TEST(SnapshotDelta, ReusedPidIsANewProcess) {
    // pid 10 exited and was reused by a process started after `a`.
    auto a = snap(100s);
    auto b = snap(101s);
    add(a, 10, 500, cpu(5s, 5s));
    add(b, 10, 10'050, cpu(100ms, 200ms));  // started at 100.5 s
    auto d = compute_delta(a, b).value();
    ASSERT_EQ(d.processes.size(), 1u);
    EXPECT_EQ(d.processes[0].basis, delta_basis::created);
    EXPECT_EQ(d.processes[0].cpu(), 300ms) << "all of the new process's CPU, none of the old one's";
    EXPECT_EQ(d.processes[0].identity.start_ticks, 10'050u);
    ASSERT_EQ(d.exited.size(), 1u);
    EXPECT_EQ(d.exited[0], (task_identity{boot_a(), 10, 500, 0}));
}

TEST(SnapshotDelta, ProcessMissingFromBeforeButOlderHasNoBaseline) {
    auto a = snap(100s);
    auto b = snap(101s);
    add(b, 11, 2'000, cpu(3s, 3s));  // started at 20 s, not in `a`
    auto d = compute_delta(a, b).value();
    EXPECT_EQ(d.processes[0].basis, delta_basis::unseen);
    EXPECT_EQ(d.processes[0].cpu(), 0ns);
    EXPECT_EQ(d.processes[0].cpu_percent, 0.0);
}

TEST(SnapshotDelta, ShiftedSplitIsClampedTotalIsExact) {
    // Total from a ns clock grew by 100 ms, but the tick ratio moved time from
    // kernel to user: kernel must not go negative.
    auto a = snap(100s);
    auto b = snap(101s);
    add(a, 10, 500, cpu(400ms, 600ms, 1ns));
    add(b, 10, 500, cpu(380ms, 720ms, 1ns));
    auto d = compute_delta(a, b).value();
    EXPECT_EQ(d.processes[0].kernel, 0ms);
    EXPECT_EQ(d.processes[0].user, 100ms);
    EXPECT_EQ(d.processes[0].precision.total_resolution, 1ns);
}

TEST(SnapshotDelta, PrecisionIsTheCoarserOfTheTwo) {
    auto a = snap(100s);
    auto b = snap(101s);
    add(a, 10, 500, cpu(0ms, 600ms, 10ms));
    add(b, 10, 500, cpu(0ms, 720ms, 1ns));
    auto d = compute_delta(a, b).value();
    EXPECT_EQ(d.processes[0].precision.total_resolution, 10ms);
    EXPECT_EQ(d.processes[0].precision.source, cpu_source::stat_ticks);
}

TEST(SnapshotDelta, MultiCoreProcessExceedsOneHundredPercent) {
    auto a = snap(100s);
    auto b = snap(101s);
    add(a, 10, 500, cpu(0s, 1s));
    add(b, 10, 500, cpu(0s, 2900ms));
    auto d = compute_delta(a, b).value();
    EXPECT_DOUBLE_EQ(d.processes[0].cpu_percent, 190.0);
}

TEST(SnapshotDelta, MergesInterleavedPids) {
    auto a = snap(100s);
    auto b = snap(100s + 500ms);
    add(a, 5, 100, cpu(0s, 1s));
    add(a, 7, 100, cpu(0s, 1s));  // exits
    add(a, 9, 100, cpu(0s, 1s));
    add(b, 5, 100, cpu(0s, 1100ms));
    add(b, 8, 10'020, cpu(0s, 50ms));  // new
    add(b, 9, 100, cpu(0s, 1200ms));
    add(b, 12, 10'040, cpu(10ms, 0s));  // new
    auto d = compute_delta(a, b).value();
    ASSERT_EQ(d.processes.size(), 4u);
    EXPECT_EQ(d.processes[0].pid, 5);
    EXPECT_EQ(d.processes[0].cpu(), 100ms);
    EXPECT_EQ(d.processes[1].pid, 8);
    EXPECT_EQ(d.processes[1].basis, delta_basis::created);
    EXPECT_EQ(d.processes[2].cpu(), 200ms);
    EXPECT_DOUBLE_EQ(d.processes[2].cpu_percent, 40.0);
    EXPECT_EQ(d.processes[3].kernel, 10ms);
    ASSERT_EQ(d.exited.size(), 1u);
    EXPECT_EQ(d.exited[0].id, 7);
}

TEST(SnapshotDelta, ThreadsMatchedWithinTheirProcess) {
    auto a = snap(100s);
    auto b = snap(101s);
    a.has_threads = b.has_threads = true;
    add(a, 10, 500, cpu(0s, 3s));
    add_thread(a, 10, 500, cpu(0s, 1s));
    add_thread(a, 11, 600, cpu(0s, 2s));  // exits
    add(b, 10, 500, cpu(0s, 3500ms));
    add_thread(b, 10, 500, cpu(0s, 1100ms));
    add_thread(b, 11, 10'030, cpu(0s, 40ms));  // a new thread reusing tid 11
    add_thread(b, 13, 10'040, cpu(0s, 60ms));
    auto d = compute_delta(a, b).value();
    ASSERT_EQ(d.threads.size(), 3u);
    EXPECT_EQ(d.threads[0].basis, delta_basis::both);
    EXPECT_EQ(d.threads[0].cpu(), 100ms);
    EXPECT_EQ(d.threads[1].basis, delta_basis::created);
    EXPECT_EQ(d.threads[1].cpu(), 40ms);
    EXPECT_EQ(d.threads[1].pid, 10);
    EXPECT_EQ(d.threads[2].cpu(), 60ms);
    EXPECT_DOUBLE_EQ(d.threads[2].cpu_percent, 6.0);
}

TEST(SnapshotDelta, RejectsMismatchedSnapshots) {
    auto a = snap(100s);
    auto b = snap(99s);
    EXPECT_EQ(compute_delta(a, b).error(), errc::invalid_argument) << "after taken before before";
    auto c = snap(101s);
    c.boot.bytes[0] = 0xbb;
    EXPECT_EQ(compute_delta(a, c).error(), errc::invalid_argument) << "another boot";
    auto same = compute_delta(a, a).value();
    EXPECT_EQ(same.interval, 0ns);
}

TEST(SnapshotDelta, ZeroIntervalGivesZeroPercent) {
    auto a = snap(100s);
    add(a, 10, 500, cpu(0s, 1s));
    auto b = a;
    b.processes[0].times.user = 2s;
    auto d = compute_delta(a, b).value();
    EXPECT_EQ(d.processes[0].cpu(), 1s);
    EXPECT_EQ(d.processes[0].cpu_percent, 0.0);
}
