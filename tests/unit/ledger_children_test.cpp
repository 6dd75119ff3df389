// SPDX-License-Identifier: MIT
// The ledger's reaped children (compute_ledger with children_from_snapshots):
// the growth of a parent's cutime/cstime, counted once beside exit records,
// and the ledger still closing (every term + unattributed == busy).
#include <gtest/gtest.h>

#include <vector>

#include "proctimes/ledger.hpp"

using namespace proctimes;
using namespace std::chrono_literals;
using std::chrono::nanoseconds;

namespace {

snapshot_process proc(pid_t pid, pid_t ppid, std::uint64_t start, nanoseconds cpu, std::optional<nanoseconds> ck,
                      std::optional<nanoseconds> cu) {
    snapshot_process p;
    p.identity.id = pid;
    p.identity.start_ticks = start;
    p.parent_pid = ppid;
    p.uid = 1000;
    p.thread_count = 1;
    p.name.assign("p" + std::to_string(pid));
    p.times.user = cpu;
    p.children_kernel = ck;
    p.children_user = cu;
    return p;
}

snapshot snap(nanoseconds since_boot, std::vector<snapshot_process> ps) {
    snapshot s;
    s.since_boot = since_boot;
    s.taken = instant{} + since_boot;
    s.processes = std::move(ps);
    return s;
}

ended_task record(pid_t pid, pid_t ppid, nanoseconds cpu, nanoseconds received, nanoseconds elapsed) {
    ended_task e;
    e.tid = e.pid = pid;
    e.parent_pid = ppid;
    e.user = cpu;
    e.received_since_boot = received;
    e.elapsed = elapsed;
    e.process_ended = e.whole_process = true;
    e.name.assign("job");
    return e;
}

system_cpu_times stat_at(nanoseconds since_boot, nanoseconds user) {
    system_cpu_times t;
    t.since_boot = since_boot;
    t.user = user;
    t.cpus = 2;
    return t;
}

// A shell (pid 10) that runs jobs. `before` saw one job, pid 20, at 30 ms;
// in the interval it ended at 50 ms and the shell reaped it, and three more
// jobs (350 ms between them) were born, ended and were reaped. The shell's
// children times grew by the final CPU of all four: 400 ms.
const snapshot before = snap(100s, {proc(10, 1, 1000, 2s, 500ms, 1s), proc(20, 10, 9000, 30ms, 0s, 0s)});
const snapshot after = snap(105s, {proc(10, 1, 1000, 2s + 100ms, 600ms, 1300ms)});

void expect_closes(const cpu_ledger& l) {
    EXPECT_EQ(l.live + l.ended + l.reaped_children + l.irq + l.softirq + l.steal + l.unattributed, l.busy);
    EXPECT_EQ(l.attributed() + l.unattributed, l.busy);
}

}  // namespace

TEST(LedgerChildren, UnprivilegedGrowthLessWhatWasUsedBeforeTheInterval) {
    // busy: the shell's own 100 ms + the jobs' 20 + 350 ms + 30 ms nobody names.
    auto l = compute_ledger(before, after, {}, stat_at(100s, 0s), stat_at(105s, 500ms), children_from_snapshots);
    ASSERT_TRUE(l) << l.error().message();
    ASSERT_EQ(l->children.size(), 1u);
    EXPECT_EQ(l->children[0].pid, 10);
    EXPECT_EQ(l->children[0].kernel, 100ms);
    EXPECT_EQ(l->children[0].user, 300ms);
    // Job 20's 30 ms before the interval were counted then (as live).
    EXPECT_EQ(l->children[0].counted, 370ms);
    EXPECT_EQ(l->reaped_children, 370ms);
    EXPECT_EQ(l->live, 100ms);
    EXPECT_EQ(l->ended, 0ns);
    EXPECT_EQ(l->unattributed, 30ms);
    EXPECT_EQ(l->children_unknown, 0u);
    expect_closes(*l);
}

TEST(LedgerChildren, ChildrenWithExitRecordsCountOnce) {
    // The same interval, with every job's exit record: they are `ended`, and
    // the shell's growth holds nothing more.
    const std::vector<ended_task> exits = {
        record(20, 10, 50ms, 101s, 3s),      // seen before: 20 ms in the interval
        record(21, 10, 100ms, 102s, 200ms),  // born and reaped in the interval
        record(22, 10, 120ms, 103s, 200ms),
        record(23, 10, 130ms, 104s, 200ms),
    };
    auto l = compute_ledger(before, after, exits, stat_at(100s, 0s), stat_at(105s, 500ms), children_from_snapshots);
    ASSERT_TRUE(l) << l.error().message();
    EXPECT_EQ(l->ended, 370ms);
    ASSERT_EQ(l->children.size(), 1u);
    EXPECT_EQ(l->children[0].cpu(), 400ms) << "the kernel's account, as the row shows it";
    EXPECT_EQ(l->children[0].counted, 0ns);
    EXPECT_EQ(l->reaped_children, 0ns);
    EXPECT_EQ(l->unattributed, 30ms);
    expect_closes(*l);
    for (const auto& p : l->processes) EXPECT_EQ(p.parent_pid, 10);
}

TEST(LedgerChildren, AnEndedProcessKeepsTheNameBeforeSawAndTheNameItEndedWith) {
    // Job 20 was "p20" when `before` read it; it ran another program (its
    // record's name, "job") before it ended.
    const std::vector<ended_task> exits = {record(20, 10, 50ms, 101s, 3s), record(21, 10, 100ms, 102s, 200ms)};
    auto l = compute_ledger(before, after, exits, stat_at(100s, 0s), stat_at(105s, 500ms), children_from_snapshots);
    ASSERT_TRUE(l) << l.error().message();
    ASSERT_EQ(l->processes.size(), 2u);
    for (const auto& p : l->processes) {
        EXPECT_EQ(p.end_name.str(), "job") << p.pid;
        EXPECT_EQ(p.name.str(), p.pid == 20 ? "p20" : "job") << "as `before` saw it, else its record's";
    }
}

TEST(LedgerChildren, SomeRecordsMissingCountTheRestFromTheGrowth) {
    // Records for two of the new jobs only (the socket overflowed): the third
    // job's 130 ms stays in the shell's counted growth.
    const std::vector<ended_task> exits = {record(21, 10, 100ms, 102s, 200ms), record(22, 10, 120ms, 103s, 200ms)};
    auto l = compute_ledger(before, after, exits, stat_at(100s, 0s), stat_at(105s, 500ms), children_from_snapshots);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->ended, 220ms);
    // 400 − 30 (job 20 before) − 220 (records) = 150: job 20's last 20 ms and job 23's 130.
    EXPECT_EQ(l->reaped_children, 150ms);
    EXPECT_EQ(l->unattributed, 30ms);
    expect_closes(*l);
}

TEST(LedgerChildren, GrandchildrenReachTheNearestLiveAncestor) {
    // make (10) ran a sub-make (30) that ran cc (31); cc and the sub-make
    // ended and were reaped in the interval. make's growth holds both; their
    // records are both in `ended`: counted once.
    const auto b = snap(100s, {proc(10, 1, 1000, 1s, 0s, 0s)});
    const auto a = snap(102s, {proc(10, 1, 1000, 1s, 0s, 300ms)});
    const std::vector<ended_task> exits = {record(31, 30, 250ms, 101s, 500ms), record(30, 10, 50ms, 101500ms, 1s)};
    auto l = compute_ledger(b, a, exits, stat_at(100s, 0s), stat_at(102s, 300ms), children_from_snapshots);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->ended, 300ms);
    ASSERT_EQ(l->children.size(), 1u);
    EXPECT_EQ(l->children[0].counted, 0ns);
    EXPECT_EQ(l->unattributed, 0ns);
    expect_closes(*l);
}

TEST(LedgerChildren, AnOrphanIsChargedToItsReaperNotItsFormerParent) {
    // make (10) ran sh (30), which ran cc (31) and ended without waiting for
    // it: cc, an orphan, was reaped by init (1). make's growth holds sh only;
    // init's holds cc whole, of which `before` had read 40 ms (counted then)
    // and its record the rest. Nothing is counted twice, nothing dropped.
    const auto b = snap(100s, {proc(1, 0, 10, 1s, 0s, 0s), proc(10, 1, 1000, 1s, 0s, 0s),
                               proc(30, 10, 2000, 5ms, 0s, 0s), proc(31, 30, 2001, 40ms, 0s, 0s)});
    const auto a = snap(102s, {proc(1, 0, 10, 1s, 0s, 100ms), proc(10, 1, 1000, 1s, 0s, 10ms)});
    const std::vector<ended_task> exits = {record(30, 10, 10ms, 100500ms, 2s), record(31, 1, 100ms, 101s, 2s)};
    auto l = compute_ledger(b, a, exits, stat_at(100s, 0s), stat_at(102s, 65ms), children_from_snapshots);
    ASSERT_TRUE(l) << l.error().message();
    EXPECT_EQ(l->ended, 65ms) << "sh's last 5 ms, cc's last 60 ms";
    ASSERT_EQ(l->children.size(), 2u);
    for (const auto& c : l->children) EXPECT_EQ(c.counted, 0ns) << "pid " << c.pid;
    EXPECT_EQ(l->reaped_children, 0ns);
    EXPECT_EQ(l->unattributed, 0ns);
    expect_closes(*l);
}

TEST(LedgerChildren, AParentBornInTheIntervalCountsAllItsChildren) {
    const auto b = snap(100s, {});
    const auto a = snap(102s, {proc(40, 1, 10050, 10ms, 20ms, 180ms)});
    auto l = compute_ledger(b, a, {}, stat_at(100s, 0s), stat_at(102s, 210ms), children_from_snapshots);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->live, 10ms);
    EXPECT_EQ(l->reaped_children, 200ms);
    EXPECT_EQ(l->unattributed, 0ns);
    expect_closes(*l);
}

TEST(LedgerChildren, NeverNegativeAndUnknownWhereTheSourceHasNoChildrenTimes) {
    // A parent whose growth (10 ms) is less than what its gone child had used
    // before (80 ms: the child was reaped by someone else) counts 0, not −70.
    const auto b = snap(100s, {proc(10, 1, 1000, 0s, 0s, 0s), proc(11, 10, 2000, 80ms, 0s, 0s),
                               proc(12, 1, 3000, 0s, std::nullopt, std::nullopt)});
    const auto a = snap(101s, {proc(10, 1, 1000, 0s, 0s, 10ms), proc(12, 1, 3000, 0s, std::nullopt, std::nullopt)});
    auto l = compute_ledger(b, a, {}, stat_at(100s, 0s), stat_at(101s, 10ms), children_from_snapshots);
    ASSERT_TRUE(l);
    ASSERT_EQ(l->children.size(), 1u);
    EXPECT_EQ(l->children[0].counted, 0ns);
    EXPECT_EQ(l->reaped_children, 0ns);
    EXPECT_EQ(l->children_unknown, 1u);
    expect_closes(*l);
    // The caller-given form is unchanged: no children accounts.
    auto given = compute_ledger(b, a, {}, stat_at(100s, 0s), stat_at(101s, 10ms), 5ms);
    ASSERT_TRUE(given);
    EXPECT_TRUE(given->children.empty());
    EXPECT_EQ(given->reaped_children, 5ms);
    expect_closes(*given);
}

// eBPF's end of a process carries the whole process's totals: a process of
// three threads that `before` saw without its threads (at 100 ms), one of
// whose threads ended in an earlier interval (its 40 ms inside `before`'s
// reading, its record in that interval's frame), used final - 100 ms in the
// interval, exactly; from its threads' records alone only a lower bound.
TEST(LedgerChildren, AnEndedProcessFromEbpfCountsItsWholeProcessTotals) {
    const snapshot b = snap(100s, {proc(10, 1, 1000, 2s, 0s, 0s), proc(30, 10, 5000, 100ms, 0s, 0s)});
    const snapshot a = snap(101s, {proc(10, 1, 1000, 2s, 0s, 250ms)});
    ended_task worker = record(30, 10, 70ms, 100s + 400ms, 50s);
    worker.tid = 31;
    worker.process_ended = worker.whole_process = false;
    worker.exact = true;
    ended_task leader = record(30, 10, 40ms, 100s + 500ms, 50s);
    leader.exact = true;
    leader.whole_process = false;
    leader.process_kernel = 30ms;
    leader.process_user = 220ms;  // 40 (the thread of the earlier interval) + 70 + 40 + 100 before it
    const std::vector<ended_task> exits{worker, leader};
    auto l = compute_ledger(b, a, exits, stat_at(100s, 0s), stat_at(101s, 300ms), children_from_snapshots);
    ASSERT_TRUE(l) << l.error().message();
    ASSERT_EQ(l->processes.size(), 1u);
    const auto& e = l->processes[0];
    EXPECT_TRUE(e.exact);
    EXPECT_EQ(e.cpu(), 150ms);
    EXPECT_EQ(e.kernel, 30ms);
    EXPECT_EQ(e.final_kernel + e.final_user, 250ms);
    // Its parent's children grew by its final 250 ms: counted once.
    EXPECT_EQ(l->reaped_children, 0ms);
    expect_closes(*l);

    // Not seen by `before`: its whole totals.
    const snapshot b2 = snap(100s, {proc(10, 1, 1000, 2s, 0s, 0s)});
    leader.process_user = 180ms;
    const std::vector<ended_task> exits2{worker, leader};
    auto l2 = compute_ledger(b2, a, exits2, stat_at(100s, 0s), stat_at(101s, 300ms), children_from_snapshots);
    ASSERT_TRUE(l2);
    ASSERT_EQ(l2->processes.size(), 1u);
    EXPECT_EQ(l2->processes[0].cpu(), 210ms);
}

// From taskstats, a process of threads (no totals in its end) that `before`
// read at 30 ms kernel + 60 ms user: its leader's and its last thread's
// records give 50 + 20 and 0 + 25 ms, split by each thread's ticks, not as
// the reading split the process. What it used after `before` is at least
// 95 − 90 = 5 ms, never more than that from one mode's excess alone (the 20
// ms of kernel time the records hold above the reading).
TEST(LedgerChildren, ALowerBoundFromRecordsIsOfTheTotalNotOfEachMode) {
    snapshot_process p = proc(30, 10, 5000, 60ms, 0s, 0s);
    p.times.kernel = 30ms;
    p.thread_count = 3;
    const snapshot b = snap(100s, {proc(10, 1, 1000, 2s, 0s, 0s), p});
    const snapshot a = snap(101s, {proc(10, 1, 1000, 2s, 0s, 95ms)});
    ended_task leader = record(30, 10, 20ms, 100s + 400ms, 50s);
    leader.kernel = 50ms;
    leader.process_ended = leader.whole_process = false;
    ended_task last = record(30, 10, 25ms, 100s + 401ms, 49s);
    last.tid = 32;
    last.whole_process = false;
    auto l = compute_ledger(b, a, std::vector<ended_task>{leader, last}, stat_at(100s, 0s), stat_at(101s, 5ms),
                            children_from_snapshots);
    ASSERT_TRUE(l) << l.error().message();
    ASSERT_EQ(l->processes.size(), 1u);
    const auto& e = l->processes[0];
    EXPECT_FALSE(e.exact);
    EXPECT_TRUE(e.seen_before);
    EXPECT_EQ(e.cpu(), 5ms);
    EXPECT_EQ(e.kernel, 5ms);
    EXPECT_EQ(e.final_kernel + e.final_user, 95ms);
    EXPECT_EQ(l->reaped_children, 0ms) << "its parent's growth is its final 95 ms, counted once";
    expect_closes(*l);
}
