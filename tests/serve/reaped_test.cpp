// SPDX-License-Identifier: MIT
// What taskstats records miss of reaped children, recovered from the reaping
// parent's children times (serve/reaped.hpp), on hand-made inputs.
#include <gtest/gtest.h>

#include <map>

#include "serve/collect/late_records.hpp"
#include "serve/collect/reaped.hpp"

using namespace proctimes;
using namespace std::chrono_literals;
using proctimes::cli::serve::destination;
using proctimes::cli::serve::reaped_inputs;
using proctimes::cli::serve::reaped_rest;
using proctimes::cli::serve::reaped_share;
using std::chrono::nanoseconds;

namespace {

snapshot_process proc(pid_t pid, pid_t parent, nanoseconds cpu, nanoseconds children_kernel,
                      nanoseconds children_user) {
    snapshot_process p;
    p.identity.id = pid;
    p.identity.start_ticks = 1000 + static_cast<std::uint64_t>(pid);
    p.parent_pid = parent;
    p.thread_count = 1;
    p.times.kernel = cpu;
    p.children_kernel = children_kernel;
    p.children_user = children_user;
    return p;
}

snapshot snap(nanoseconds since_boot, std::vector<snapshot_process> ps) {
    snapshot s;
    s.since_boot = since_boot;
    s.processes = std::move(ps);
    return s;
}

ended_process ended(pid_t pid, pid_t parent, nanoseconds cpu, bool seen_before = false) {
    ended_process e;
    e.pid = pid;
    e.parent_pid = parent;
    e.kernel = cpu;
    e.seen_before = seen_before;
    return e;
}

// Runs reaped_rest with the destinations given by pid, and the carries of
// `carries` (a parent without one is not tracked). Returns the shares by
// destination ("?" for unattributed), kernel + user.
std::map<std::string, nanoseconds> run(const snapshot& before, const snapshot& after,
                                       const std::vector<ended_process>& ends, const std::map<pid_t, destination>& to,
                                       std::map<pid_t, nanoseconds>& carries, nanoseconds* kernel_of_g = nullptr) {
    reaped_inputs in{before, after, ends, nullptr, nullptr, nullptr};
    const auto where = [&](pid_t pid) {
        const auto it = to.find(pid);
        return it != to.end() ? it->second : destination{};
    };
    in.gone_to = [&](const snapshot_process& b) { return where(b.pid()); };
    in.unseen_to = [&](const ended_process& e) { return where(e.pid); };
    in.carry_of = [&](const snapshot_process& a) -> nanoseconds* {
        const auto it = carries.find(a.pid());
        return it != carries.end() ? &it->second : nullptr;
    };
    std::map<std::string, nanoseconds> out;
    for (const reaped_share& s : reaped_rest(in)) {
        EXPECT_GE(s.kernel, 0ns);
        EXPECT_GE(s.user, 0ns);
        out[s.to ? *s.to : "?"] += s.kernel + s.user;
        if (kernel_of_g && s.to == destination("G")) *kernel_of_g += s.kernel;
    }
    return out;
}

}  // namespace

// A shell (100) reaped three subshells whose records hold 10 ms each; its
// children times grew by 100 ms: the 70 ms the records lack go to their
// group, split kernel:user as the growth (40:60).
TEST(ReapedRest, WhatTheRecordsLackGoesWhereTheChildrenWent) {
    const auto before = snap(100s, {proc(100, 1, 5ms, 0ms, 0ms)});
    const auto after = snap(101s, {proc(100, 1, 6ms, 40ms, 60ms)});
    const std::vector<ended_process> ends = {ended(201, 100, 10ms), ended(202, 100, 10ms), ended(203, 100, 10ms)};
    std::map<pid_t, nanoseconds> carries{{100, 0ns}};
    nanoseconds k{};
    const auto got = run(before, after, ends, {{201, "G"}, {202, "G"}, {203, "G"}}, carries, &k);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got.at("G"), 70ms);
    EXPECT_EQ(k, 28ms);
    EXPECT_EQ(carries[100], 0ns);
}

// Children that went to several places share the rest equally; one no group
// could be given takes its share to the unattributed counters, one left out
// ("") takes it nowhere.
TEST(ReapedRest, SeveralDestinationsShareEqually) {
    const auto before = snap(100s, {proc(100, 1, 0ms, 0ms, 0ms)});
    const auto after = snap(101s, {proc(100, 1, 0ms, 0ms, 130ms)});
    const std::vector<ended_process> ends = {ended(201, 100, 10ms), ended(202, 100, 10ms), ended(203, 100, 10ms),
                                             ended(204, 100, 10ms)};
    std::map<pid_t, nanoseconds> carries{{100, 0ns}};
    const auto got = run(before, after, ends, {{201, "G"}, {202, "G"}, {203, std::nullopt}, {204, ""}}, carries);
    EXPECT_EQ(got.at("G"), 45ms);
    EXPECT_EQ(got.at("?"), 22500us);
    EXPECT_EQ(got.at(""), 22500us);
}

// The children times are read in ticks: records can hold more than they grew
// by in one interval. Nothing is taken back; the excess is carried to the
// next interval, so that over time the total is the kernel's.
TEST(ReapedRest, AnExcessIsCarriedNotCredited) {
    std::map<pid_t, nanoseconds> carries{{100, 0ns}};
    const auto s0 = snap(100s, {proc(100, 1, 0ms, 0ms, 0ms)});
    const auto s1 = snap(101s, {proc(100, 1, 0ms, 0ms, 10ms)});
    EXPECT_TRUE(run(s0, s1, {ended(201, 100, 30ms)}, {{201, "G"}}, carries).empty());
    EXPECT_EQ(carries[100], -20ms);
    const auto s2 = snap(102s, {proc(100, 1, 0ms, 0ms, 60ms)});
    const auto got = run(s1, s2, {ended(202, 100, 10ms)}, {{202, "G"}}, carries);
    EXPECT_EQ(got.at("G"), 20ms);  // 50 grown - 10 recorded - 20 carried
    EXPECT_EQ(carries[100], 0ns);
}

// A child `before` saw (its reading and its children's count as held), and a
// grandchild whose parent is gone too (its parent reaped it, and the
// shell reaped the parent: the shell's children times hold both).
TEST(ReapedRest, SeenChildrenAndGrandchildrenAreHeldByTheLiveAncestor) {
    const auto before = snap(100s, {proc(100, 1, 0ms, 0ms, 0ms), proc(150, 100, 5ms, 2ms, 1ms)});
    const auto after = snap(101s, {proc(100, 1, 0ms, 0ms, 50ms)});
    const std::vector<ended_process> ends = {
        ended(150, 100, 4ms, true),  // seen: 5 + 3 read before, 4 in the interval by its record
        ended(300, 301, 6ms),        // reaped by 301...
        ended(301, 100, 7ms),        // ...which the shell reaped
    };
    std::map<pid_t, nanoseconds> carries{{100, 0ns}};
    const auto got = run(before, after, ends, {{150, "G"}, {300, "G"}, {301, "G"}}, carries);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got.at("G"), 50ms - 8ms - 4ms - 6ms - 7ms);
}

// Growth with no ended process to place it (their records were lost): counted
// as unattributed, never guessed. A parent that is not tracked, or whose
// children times `before` could not read, gives nothing.
TEST(ReapedRest, WhatCannotBePlacedIsUnattributed) {
    const auto before = snap(100s, {proc(100, 1, 0ms, 0ms, 0ms), proc(110, 1, 0ms, 0ms, 0ms)});
    auto unread = proc(120, 1, 0ms, 0ms, 0ms);
    unread.children_kernel.reset();
    auto before2 = before;
    before2.processes.push_back(unread);
    const auto after =
        snap(101s, {proc(100, 1, 0ms, 0ms, 30ms), proc(110, 1, 0ms, 0ms, 30ms), proc(120, 1, 0ms, 0ms, 30ms)});
    std::map<pid_t, nanoseconds> carries{{100, 0ns}, {120, 0ns}};  // 110 untracked
    const auto got = run(before2, after, {}, {}, carries);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got.at("?"), 30ms);
}

// A record read before the previous snapshot was stamped but handed to the
// collection after it (the drain thread was between the two): the ledger of
// the next interval would drop it unseen. Dated just after that snapshot,
// with its start unchanged, it counts there, as a process the snapshot did
// not list (or, had it listed it, as that process).
TEST(LateRecords, ArePlacedInTheNextIntervalWithTheirStartKept) {
    ended_task late;
    late.tid = late.pid = 700;
    late.parent_pid = 100;
    late.kernel = 3ms;
    late.received_since_boot = 99'990ms;  // read 10 ms before `before`
    late.elapsed = 5ms;
    late.process_ended = late.whole_process = true;
    ended_task on_time = late;
    on_time.tid = on_time.pid = 701;
    on_time.received_since_boot = 100'500ms;
    std::vector<ended_task> exits = {late, on_time};
    const auto before = snap(100s, {}), after = snap(101s, {});
    system_cpu_times s0, s1;
    s0.since_boot = 100s;
    s1.since_boot = 101s;
    s1.system = 6ms;
    auto dropped = compute_ledger(before, after, exits, s0, s1);
    ASSERT_TRUE(dropped);
    EXPECT_EQ(dropped->processes.size(), 1u) << "the ledger counts (before, after] only";

    EXPECT_EQ(proctimes::cli::serve::date_late_records(exits, before.since_boot), 1u);
    EXPECT_EQ(exits[0].received_since_boot, 100s + 1ns);
    EXPECT_EQ(exits[0].received_since_boot - exits[0].elapsed, 99'985ms) << "its start is kept";
    EXPECT_EQ(exits[1].received_since_boot, 100'500ms);
    auto l = compute_ledger(before, after, exits, s0, s1);
    ASSERT_TRUE(l);
    ASSERT_EQ(l->processes.size(), 2u);
    EXPECT_EQ(l->ended, 6ms);
    EXPECT_EQ(l->processes[0].start_ticks, 9998u);
}
