// SPDX-License-Identifier: MIT
// The CPU ledger and its parsers, on hand-made inputs with known answers.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "parse/exit_task.hpp"
#include "parse/proc_stat_cpu.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/error.hpp"
#include "proctimes/ledger.hpp"

using namespace proctimes;
using namespace std::chrono_literals;
using std::chrono::nanoseconds;

TEST(ProcStatCpu, ParsesTheAggregateLineAndCountsCpus) {
    const auto r = parse::parse_proc_stat_cpu(
        "cpu  100 7 200 3000 10 3 5 2 1 0\ncpu0 50 0 100 1500 5 0 2 0 0 0\ncpu1 50 7 100 1500 5 3 3 2 1 0\n"
        "intr 1 2\nbtime 1795317683\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->user, 100u);
    EXPECT_EQ(r->nice, 7u);
    EXPECT_EQ(r->system, 200u);
    EXPECT_EQ(r->idle, 3000u);
    EXPECT_EQ(r->iowait, 10u);
    EXPECT_EQ(r->irq, 3u);
    EXPECT_EQ(r->softirq, 5u);
    EXPECT_EQ(r->steal, 2u);
    EXPECT_EQ(r->guest, 1u);
    EXPECT_EQ(r->fields, 10);
    EXPECT_EQ(r->cpus, 2);
}

TEST(ProcStatCpu, OldKernelsFourFieldsRestZero) {
    const auto r = parse::parse_proc_stat_cpu("cpu 1 2 3 4\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->idle, 4u);
    EXPECT_EQ(r->steal, 0u);
    EXPECT_EQ(r->fields, 4);
}

TEST(ProcStatCpu, RejectsWhatIsNotTheFormat) {
    EXPECT_FALSE(parse::parse_proc_stat_cpu(""));
    EXPECT_FALSE(parse::parse_proc_stat_cpu("cpu0 1 2 3 4\n"));  // no aggregate line
    EXPECT_FALSE(parse::parse_proc_stat_cpu("cpu 1 2 3\n"));
    EXPECT_FALSE(parse::parse_proc_stat_cpu("cpu 1 2 x 4\n"));
    EXPECT_FALSE(parse::parse_proc_stat_cpu("cpu 1 2 -3 4\n"));
    EXPECT_FALSE(parse::parse_proc_stat_cpu("cpu 1 2 3 99999999999999999999\n"));  // overflows 64 bits
    EXPECT_TRUE(parse::parse_proc_stat_cpu("cpu 1 2 3 4 5 6 7 8 9 10 11 12\n"));   // a future kernel's extra field
}

TEST(ProcStatCpu, TheCapturedFixture) {
    std::ifstream in(PROCTIMES_FIXTURES "/proc_stat.txt");
    std::stringstream ss;
    ss << in.rdbuf();
    const auto r = parse::parse_proc_stat_cpu(ss.str());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->user, 100u);
    EXPECT_EQ(r->system, 200u);
    EXPECT_EQ(r->softirq, 5u);
}

// A taskstats exit datagram as the kernel builds it: AGGR_PID { PID, STATS }.
std::string exit_datagram(std::uint16_t family, std::uint32_t tid, std::uint32_t tgid, const char* comm,
                          std::uint64_t run_ns, bool group_dead, std::uint16_t version = TASKSTATS_VERSION,
                          std::uint8_t more_flags = 0, std::uint32_t exit_code = 0) {
    taskstats ts{};
    ts.ac_exitcode = exit_code;
    ts.version = version;
    ts.ac_pid = tid;
    ts.ac_tgid = tgid;
    ts.ac_ppid = 1;
    ts.ac_uid = 1000;
    std::strncpy(ts.ac_comm, comm, sizeof ts.ac_comm - 1);
    ts.ac_flag = static_cast<std::uint8_t>((group_dead ? 0x20 : 0) | more_flags);
    ts.cpu_run_virtual_total = run_ns;
    ts.ac_utime = 3000;
    ts.ac_stime = 1000;
    ts.ac_etime = 25000;
    std::string attrs;
    auto attr = [](std::string& into, std::uint16_t type, const void* p, std::size_t n) {
        nlattr a{};
        a.nla_len = static_cast<std::uint16_t>(NLA_HDRLEN + n);
        a.nla_type = type;
        into.append(reinterpret_cast<const char*>(&a), sizeof a);
        into.append(static_cast<const char*>(p), n);
        into.append((4 - n % 4) % 4, '\0');
    };
    std::string inner;
    attr(inner, TASKSTATS_TYPE_PID, &tid, sizeof tid);
    attr(inner, TASKSTATS_TYPE_STATS, &ts, sizeof ts);
    attr(attrs, TASKSTATS_TYPE_AGGR_PID, inner.data(), inner.size());
    genlmsghdr g{};
    g.cmd = TASKSTATS_CMD_NEW;
    nlmsghdr h{};
    h.nlmsg_type = family;
    h.nlmsg_len = static_cast<std::uint32_t>(NLMSG_HDRLEN + GENL_HDRLEN + attrs.size());
    std::string d(reinterpret_cast<const char*>(&h), sizeof h);
    d.append(reinterpret_cast<const char*>(&g), sizeof g);
    d += attrs;
    return d;
}

TEST(ExitTask, KeepsWhoTheTaskWas) {
    std::vector<parse::exit_task_record> out;
    const std::string d = exit_datagram(27, 4242, 4240, "pt_short", 21'000'000, true);
    ASSERT_EQ(parse::parse_exit_tasks(d, 27, out), 1u);
    EXPECT_EQ(out[0].tid, 4242u);
    EXPECT_EQ(out[0].tgid, 4240u);
    EXPECT_EQ(out[0].uid, 1000u);
    EXPECT_STREQ(out[0].comm, "pt_short");
    EXPECT_EQ(out[0].run_ns, 21'000'000u);
    EXPECT_TRUE(out[0].group_dead);
    EXPECT_FALSE(out[0].group_record);
    EXPECT_FALSE(out[0].forked_no_exec);
    EXPECT_EQ(out[0].elapsed_us, 25000u);
    EXPECT_EQ(out[0].exit_code, 0u);
    // ac_exitcode in wait(2)'s form, as the kernel sends it.
    out.clear();
    ASSERT_EQ(parse::parse_exit_tasks(exit_datagram(27, 8, 8, "x", 1, true, TASKSTATS_VERSION, 0, 3u << 8), 27, out),
              1u);
    EXPECT_EQ(out[0].exit_code, 0x300u);
    // AFORK (0x01): forked and never exec'd; AGROUP is read apart from it.
    out.clear();
    ASSERT_EQ(parse::parse_exit_tasks(exit_datagram(27, 9, 9, "sh", 1, false, TASKSTATS_VERSION, 0x01), 27, out), 1u);
    EXPECT_TRUE(out[0].forked_no_exec);
    EXPECT_FALSE(out[0].group_dead);
    // Family 0: any generic family; another family id: nothing.
    EXPECT_EQ(parse::parse_exit_tasks(d, 0, out), 1u);
    EXPECT_EQ(parse::parse_exit_tasks(d, 28, out), 0u);
    // An old struct version has no ac_tgid: 0, not a guess.
    out.clear();
    ASSERT_EQ(parse::parse_exit_tasks(exit_datagram(27, 7, 7, "x", 1, true, 10), 27, out), 1u);
    EXPECT_EQ(out[0].tgid, 0u);
    // Every truncation is skipped, never read past.
    for (std::size_t n = 0; n < d.size(); ++n) {
        out.clear();
        (void)parse::parse_exit_tasks(std::string_view(d.data(), n), 27, out);
        EXPECT_TRUE(out.empty()) << n;
    }
}

namespace {

constexpr nanoseconds tick = 10ms;

snapshot_process proc(pid_t pid, std::uint64_t start_ticks, nanoseconds user, nanoseconds kernel, const char* name) {
    snapshot_process p;
    p.identity.id = pid;
    p.identity.start_ticks = start_ticks;
    p.uid = 0;
    p.thread_count = 1;
    p.name.assign(name);
    p.times.user = user;
    p.times.kernel = kernel;
    return p;
}

snapshot snap(nanoseconds since_boot, std::vector<snapshot_process> ps) {
    snapshot s;
    s.since_boot = since_boot;
    s.taken = instant{} + since_boot;
    s.processes = std::move(ps);
    return s;
}

ended_task record(pid_t tid, pid_t pid, nanoseconds user, nanoseconds kernel, nanoseconds received, nanoseconds elapsed,
                  bool ended, const char* name = "t") {
    ended_task e;
    e.tid = tid;
    e.pid = pid;
    e.user = user;
    e.kernel = kernel;
    e.received_since_boot = received;
    e.elapsed = elapsed;
    e.process_ended = ended;
    e.whole_process = ended;
    e.name.assign(name);
    return e;
}

system_cpu_times stat_at(nanoseconds since_boot, nanoseconds user, nanoseconds system, nanoseconds irq,
                         nanoseconds softirq) {
    system_cpu_times t;
    t.since_boot = since_boot;
    t.user = user;
    t.system = system;
    t.irq = irq;
    t.softirq = softirq;
    t.cpus = 2;
    return t;
}

}  // namespace

TEST(Ledger, AddsUpToBusyWithEndedAndUnattributed) {
    ASSERT_EQ(clock_ticks_per_second(), 100);
    const auto before =
        snap(100s, {proc(100, 5000, 1s, 0s, "a"), proc(200, 6000, 500ms, 0s, "b"), proc(600, 7000, 2s, 0s, "gone")});
    const auto after = snap(102s, {proc(100, 5000, 1300ms, 0s, "a"), proc(300, 10050, 200ms, 0s, "c")});
    const std::vector<ended_task> exits = {
        record(101, 100, 50ms, 0s, 100500ms, 20s, false),          // a thread of a live process: in live already
        record(200, 200, 700ms, 0s, 101s, 41s, true, "b"),         // b ends: 0.2 s after `before`
        record(400, 400, 30ms, 20ms, 101500ms, 300ms, true, "d"),  // born and dead in the interval
        record(500, 500, 5s, 0s, 99s, 1s, true, "early"),          // before the interval: ignored
    };
    const auto s0 = stat_at(100s, 10s, 5s, 100ms, 200ms);
    // busy grows by 0.5 live + 0.25 ended + 0.01 irq + 0.02 softirq + 0.1 unattributed
    const auto s1 = stat_at(102s, 10s + 650ms, 5s + 200ms, 110ms, 220ms);
    auto l = compute_ledger(before, after, exits, s0, s1);
    ASSERT_TRUE(l) << l.error().message();
    EXPECT_EQ(l->interval, 2s);
    EXPECT_EQ(l->live, 500ms);
    EXPECT_EQ(l->ended, 250ms);
    EXPECT_EQ(l->irq, 10ms);
    EXPECT_EQ(l->softirq, 20ms);
    EXPECT_EQ(l->busy, 880ms);
    EXPECT_EQ(l->unattributed, 100ms);
    EXPECT_EQ(l->attributed() + l->unattributed, l->busy);
    EXPECT_EQ(l->ended_without_record, 1u);  // "gone" (pid 600)
    ASSERT_EQ(l->processes.size(), 2u);
    const auto& b = l->processes[0];
    EXPECT_EQ(b.pid, 200);
    EXPECT_TRUE(b.seen_before);
    EXPECT_TRUE(b.exact);
    EXPECT_EQ(b.user, 200ms);
    EXPECT_EQ(b.final_user, 700ms);
    EXPECT_EQ(b.name, std::string_view("b"));
    const auto& d = l->processes[1];
    EXPECT_EQ(d.pid, 400);
    EXPECT_FALSE(d.seen_before);
    EXPECT_EQ(d.cpu(), 50ms);
    EXPECT_EQ(d.start_ticks, static_cast<std::uint64_t>((101500ms - 300ms) / tick));
}

TEST(Ledger, EbpfEndsGiveTheProcessItsLatestThreadsExitAndItsCreation) {
    const auto before = snap(100s, {});
    const auto after = snap(102s, {});
    const instant born = instant{} + 1000s + 123'456ns;
    // eBPF records (exact): the leader ends first, its last thread later; a
    // second process one of whose records has no exit stamp.
    auto leader = record(700, 700, 10ms, 0s, 101s, 400ms, false, "p");
    auto worker = record(701, 700, 20ms, 0s, 101100ms, 300ms, true, "p");
    auto lone = record(800, 800, 5ms, 0s, 101200ms, 100ms, false, "q");
    auto last = record(801, 800, 5ms, 0s, 101300ms, 100ms, true, "q");
    for (auto* e : {&leader, &worker, &lone, &last}) {
        e->exact = true;
        e->creation = born;
    }
    leader.exit = born + 300ms;
    worker.exit = born + 350ms;
    last.exit = born + 20ms;  // `lone` has none: the process's end is not known exactly
    const std::vector<ended_task> exits = {leader, worker, lone, last};
    const auto s = stat_at(100s, 0s, 0s, 0s, 0s);
    auto l = compute_ledger(before, after, exits, s, stat_at(102s, 40ms, 0s, 0s, 0s));
    ASSERT_TRUE(l) << l.error().message();
    ASSERT_EQ(l->processes.size(), 2u);
    EXPECT_EQ(l->processes[0].pid, 700);
    EXPECT_EQ(l->processes[0].creation, born);
    EXPECT_EQ(l->processes[0].exit, born + 350ms) << "the process ended with its last thread";
    EXPECT_EQ(l->processes[1].pid, 800);
    EXPECT_FALSE(l->processes[1].exit.has_value()) << "a thread without a stamp: no exact end";
    // taskstats records carry neither.
    const std::vector<ended_task> plain = {record(900, 900, 5ms, 0s, 101s, 100ms, true, "r")};
    auto t = compute_ledger(before, after, plain, s, stat_at(102s, 5ms, 0s, 0s, 0s));
    ASSERT_TRUE(t);
    ASSERT_EQ(t->processes.size(), 1u);
    EXPECT_FALSE(t->processes[0].exit.has_value());
    EXPECT_FALSE(t->processes[0].creation.has_value());
}

TEST(Ledger, ReusedPidInsideTheIntervalIsTwoProcesses) {
    const auto before = snap(100s, {proc(500, 5000, 1s, 0s, "old")});
    const auto after = snap(102s, {});
    const std::vector<ended_task> exits = {
        record(500, 500, 1100ms, 0s, 100200ms, 50s, true, "old"),  // the old one ends
        record(500, 500, 40ms, 0s, 101s, 500ms, true, "new"),      // the pid again, started at 100.5 s
    };
    const auto s = stat_at(100s, 0s, 0s, 0s, 0s);
    auto l = compute_ledger(before, after, exits, s, stat_at(102s, 140ms, 0s, 0s, 0s));
    ASSERT_TRUE(l);
    ASSERT_EQ(l->processes.size(), 2u);
    EXPECT_TRUE(l->processes[0].seen_before);
    EXPECT_EQ(l->processes[0].cpu(), 100ms);
    EXPECT_FALSE(l->processes[1].seen_before);
    EXPECT_EQ(l->processes[1].cpu(), 40ms);
    EXPECT_EQ(l->ended, 140ms);
    EXPECT_EQ(l->unattributed, 0ns);
    EXPECT_EQ(l->ended_without_record, 0u);
}

TEST(Ledger, RejectsReadingsOutOfOrder) {
    const auto a = snap(100s, {}), b = snap(101s, {});
    auto l = compute_ledger(a, b, {}, stat_at(101s, 0s, 0s, 0s, 0s), stat_at(100s, 0s, 0s, 0s, 0s));
    ASSERT_FALSE(l);
    EXPECT_EQ(l.error(), errc::invalid_argument);
    EXPECT_FALSE(compute_ledger(b, a, {}, stat_at(100s, 0s, 0s, 0s, 0s), stat_at(101s, 0s, 0s, 0s, 0s)));
}

TEST(Ledger, LiveSystemReadingAddsUp) {
    auto s = read_system_cpu_times();
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_GE(s->cpus, 1);
    EXPECT_GT(s->busy(), 0ns);
    EXPECT_GE(s->user, s->guest);
}

TEST(Ledger, AProcessTheWalkMissedCountsWhole) {
    // Started 5 ms before `before` was taken, yet not in it (the walk had
    // passed its pid): none of its CPU is in any reading, so all of it counts.
    const auto before = snap(100s, {}), after = snap(102s, {});
    const std::vector<ended_task> exits = {record(700, 700, 30ms, 10ms, 100100ms, 105ms, true, "missed")};
    auto l = compute_ledger(before, after, exits, stat_at(100s, 0s, 0s, 0s, 0s), stat_at(102s, 40ms, 0s, 0s, 0s));
    ASSERT_TRUE(l);
    ASSERT_EQ(l->processes.size(), 1u);
    EXPECT_FALSE(l->processes[0].seen_before);
    EXPECT_EQ(l->processes[0].cpu(), 40ms);
    EXPECT_EQ(l->unattributed, 0ns);
}
