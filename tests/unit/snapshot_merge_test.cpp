// SPDX-License-Identifier: MIT
// The portable parts of a snapshot walk, without /proc: the merge of
// walkers' records (src/snapshot_merge.cpp), the copy of an idle process's
// threads (src/snapshot_reuse.cpp) and the worker pool (src/worker_pool.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <vector>

#include "snapshot_records.hpp"
#include "worker_pool.hpp"

using namespace proctimes;
using namespace proctimes::detail;
using std::chrono::nanoseconds;

namespace {

snapshot_thread thread_of(pid_t pid, pid_t tid) {
    snapshot_thread t;
    t.identity.id = tid;
    t.identity.start_ticks = 1000u + static_cast<unsigned>(tid);
    t.pid = pid;
    return t;
}

// Appends process `pid` with threads `tids` to `w`, as a walker does.
void add(walk_output& w, pid_t pid, const std::vector<pid_t>& tids) {
    snapshot_process p;
    p.identity.id = pid;
    p.identity.start_ticks = 1000u + static_cast<unsigned>(pid);
    p.first_thread = w.threads.size();
    for (pid_t tid : tids) w.threads.push_back(thread_of(pid, tid));
    p.thread_entries = tids.size();
    w.procs.push_back(p);
}

std::vector<pid_t> pids_of(const snapshot& s) {
    std::vector<pid_t> v;
    for (const auto& p : s.processes) v.push_back(p.pid());
    return v;
}

std::vector<pid_t> tids_of(const snapshot& s, const snapshot_process& p) {
    std::vector<pid_t> v;
    for (const auto& t : s.threads_of(p)) {
        EXPECT_EQ(t.pid, p.pid());
        v.push_back(t.tid());
    }
    return v;
}

}  // namespace

TEST(SnapshotMerge, TwoWalkersInterleavedPidsAscendWithTheirThreads) {
    walk_output a, b;
    add(a, 1, {1});
    add(a, 7, {7, 8, 9});
    add(a, 20, {});
    add(b, 3, {3, 4});
    add(b, 12, {12});
    a.vanished = 2;
    b.vanished = 1;
    b.reused = 5;
    walk_output* parts[] = {&a, &b};
    snapshot out;
    merge_walks(out, parts);
    EXPECT_EQ(pids_of(out), (std::vector<pid_t>{1, 3, 7, 12, 20}));
    ASSERT_EQ(out.threads.size(), 7u);
    EXPECT_EQ(tids_of(out, out.processes[0]), (std::vector<pid_t>{1}));
    EXPECT_EQ(tids_of(out, out.processes[1]), (std::vector<pid_t>{3, 4}));
    EXPECT_EQ(tids_of(out, out.processes[2]), (std::vector<pid_t>{7, 8, 9}));
    EXPECT_EQ(tids_of(out, out.processes[3]), (std::vector<pid_t>{12}));
    EXPECT_TRUE(tids_of(out, out.processes[4]).empty());
    EXPECT_EQ(out.vanished, 3u);
    EXPECT_EQ(out.reused_threads, 5u);
    // The parts are emptied for the next walk.
    EXPECT_TRUE(a.procs.empty() && a.threads.empty() && b.procs.empty() && b.threads.empty());
    EXPECT_EQ(a.vanished + b.vanished + b.reused, 0u);
}

TEST(SnapshotMerge, DeferredThreadsKeepOnlyThoseRead) {
    walk_output a, b;
    add(a, 2, {2});
    // Process 5's threads were read by all walkers into a block; 7 vanished.
    snapshot_process big;
    big.identity.id = 5;
    big.first_thread = deferred_threads;
    big.thread_entries = 0;  // index in a.deferred
    auto block = std::make_unique<thread_block>();
    for (pid_t tid : {5, 6, 7, 8}) block->slots.push_back(thread_of(5, tid));
    block->present = {1, 1, 0, 1};
    a.deferred.push_back(std::move(block));
    a.procs.push_back(big);
    add(b, 4, {4});
    add(b, 9, {9, 10});
    walk_output* parts[] = {&a, &b};
    snapshot out;
    merge_walks(out, parts);
    EXPECT_EQ(pids_of(out), (std::vector<pid_t>{2, 4, 5, 9}));
    EXPECT_EQ(tids_of(out, out.processes[2]), (std::vector<pid_t>{5, 6, 8}));
    EXPECT_EQ(tids_of(out, out.processes[3]), (std::vector<pid_t>{9, 10}));
    EXPECT_EQ(out.threads.size(), 1u + 1u + 3u + 2u);
    EXPECT_TRUE(a.deferred.empty());
}

TEST(SnapshotMerge, FailuresOrderedByPidThenTid) {
    walk_output a, b;
    const std::error_code e{EACCES, std::system_category()};
    a.fail(9, 0, snapshot_item::process, e);
    a.fail(3, 5, snapshot_item::thread, e);
    b.fail(3, 4, snapshot_item::thread, e);
    b.fail(1, 0, snapshot_item::owner, e);
    walk_output* parts[] = {&a, &b};
    snapshot out;
    merge_walks(out, parts);
    ASSERT_EQ(out.failures.size(), 4u);
    EXPECT_EQ(out.failures[0].pid, 1);
    EXPECT_EQ(out.failures[1].tid, 4);
    EXPECT_EQ(out.failures[2].tid, 5);
    EXPECT_EQ(out.failures[3].pid, 9);
}

TEST(SnapshotMerge, OneWalkerHandsOverItsVectorsAndGetsTheOldOnes) {
    walk_output a;
    add(a, 1, {1, 2});
    a.vanished = 4;
    snapshot out;
    out.processes.reserve(1000);  // a previous snapshot's buffer
    const auto* old = out.processes.data();
    const auto* mine = a.procs.data();
    walk_output* parts[] = {&a};
    merge_walks(out, parts);
    EXPECT_EQ(out.processes.data(), mine);  // no copy
    EXPECT_EQ(a.procs.data(), old);         // the walker keeps the capacity
    EXPECT_TRUE(a.procs.empty());
    EXPECT_EQ(tids_of(out, out.processes[0]), (std::vector<pid_t>{1, 2}));
    EXPECT_EQ(out.vanished, 4u);
}

namespace {

// A previous snapshot holding process 10 (threads 10, 11) with an exact total.
snapshot previous_with_process_10(nanoseconds kernel, nanoseconds user) {
    walk_output w;
    add(w, 10, {10, 11});
    w.procs[0].times.kernel = kernel;
    w.procs[0].times.user = user;
    w.procs[0].times.precision.source = cpu_source::cpu_clock_and_stat;
    snapshot s;
    s.has_threads = true;
    walk_output* parts[] = {&w};
    merge_walks(s, parts);
    return s;
}

snapshot_process process_10() {
    snapshot_process p;
    p.identity.id = 10;
    p.identity.start_ticks = 1010;
    return p;
}

}  // namespace

TEST(SnapshotReuse, CopiesTheThreadsOfAProcessThatHasNotRun) {
    const snapshot before = previous_with_process_10(nanoseconds{300}, nanoseconds{700});
    walk_output w;
    snapshot_process p = process_10();
    const instant now{std::chrono::seconds{5}};
    const pid_t tids[] = {10, 11};
    ASSERT_TRUE(copy_idle_threads(before, p, nanoseconds{1000}, cpu_source::cpu_clock_and_stat, tids, now, w));
    ASSERT_EQ(w.procs.size(), 1u);
    EXPECT_TRUE(w.procs[0].threads_copied);
    EXPECT_EQ(w.procs[0].thread_entries, 2u);
    ASSERT_EQ(w.threads.size(), 2u);
    EXPECT_EQ(w.threads[1].tid(), 11);
    EXPECT_EQ(w.threads[0].times.sampled_at, now);  // restamped
    EXPECT_EQ(w.reused, 2u);
}

TEST(SnapshotReuse, RefusesAProcessThatRanOrChanged) {
    const snapshot before = previous_with_process_10(nanoseconds{300}, nanoseconds{700});
    const instant now{};
    const pid_t same[] = {10, 11};
    const pid_t other[] = {10, 12};
    const pid_t fewer[] = {10};
    walk_output w;
    snapshot_process p = process_10();
    // One nanosecond more CPU: it ran.
    EXPECT_FALSE(copy_idle_threads(before, p, nanoseconds{1001}, cpu_source::cpu_clock_and_stat, same, now, w));
    // A thread ended and another started; or one ended.
    EXPECT_FALSE(copy_idle_threads(before, p, nanoseconds{1000}, cpu_source::cpu_clock_and_stat, other, now, w));
    EXPECT_FALSE(copy_idle_threads(before, p, nanoseconds{1000}, cpu_source::cpu_clock_and_stat, fewer, now, w));
    // Totals from another source are not proof.
    EXPECT_FALSE(copy_idle_threads(before, p, nanoseconds{1000}, cpu_source::stat_ticks, same, now, w));
    // The pid now names another process (other start tick).
    snapshot_process reused = p;
    reused.identity.start_ticks = 5000;
    EXPECT_FALSE(copy_idle_threads(before, reused, nanoseconds{1000}, cpu_source::cpu_clock_and_stat, same, now, w));
    // A pid the previous snapshot did not have.
    snapshot_process fresh = p;
    fresh.identity.id = 11;
    EXPECT_FALSE(copy_idle_threads(before, fresh, nanoseconds{1000}, cpu_source::cpu_clock_and_stat, same, now, w));
    EXPECT_TRUE(w.procs.empty());
    EXPECT_TRUE(w.threads.empty());
    EXPECT_EQ(w.reused, 0u);
}

TEST(WorkerPool, EveryWorkerRunsAndWorkDrawnFromACounterIsDoneOnce) {
    constexpr std::size_t items = 1000;
    std::vector<std::atomic<int>> done(items);
    std::atomic<std::size_t> next{0};
    std::vector<int> ran(3, 0);
    const unsigned n = run_on_workers(
        3,
        [&](std::size_t i) {
            ran[i] = 1;
            for (std::size_t k; (k = next.fetch_add(1)) < items;) done[k].fetch_add(1);
        },
        [](std::size_t) noexcept { ADD_FAILURE() << "no worker throws here"; });
    EXPECT_EQ(n, 3u);
    EXPECT_EQ(ran, (std::vector<int>{1, 1, 1}));
    for (const auto& d : done) EXPECT_EQ(d.load(), 1);
}

TEST(WorkerPool, AThrowingWorkerIsReportedAndTheOthersFinish) {
    std::vector<int> failed(2, 0), finished(2, 0);
    const unsigned n = run_on_workers(
        2,
        [&](std::size_t i) {
            if (i == 1) throw std::runtime_error("out of memory, say");
            finished[i] = 1;
        },
        [&](std::size_t i) noexcept { failed[i] = 1; });
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(failed, (std::vector<int>{0, 1}));
    EXPECT_EQ(finished, (std::vector<int>{1, 0}));
}

TEST(WorkerPool, ZeroOrOneWorkerRunsOnTheCallingThread) {
    for (std::size_t want : {0u, 1u}) {
        std::thread::id where;
        EXPECT_EQ(run_on_workers(
                      want, [&](std::size_t) { where = std::this_thread::get_id(); }, [](std::size_t) noexcept {}),
                  1u);
        EXPECT_EQ(where, std::this_thread::get_id());
    }
}
