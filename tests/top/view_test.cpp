// SPDX-License-Identifier: MIT
// The arrangement of frames made by hand (tools/proctimes/top/view.hpp):
// order by each column and direction, tree depths and subtree sums, group
// sums, the filter, the selection across frames and the scrolling.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "top/row_fields.hpp"
#include "top/view.hpp"

namespace {

using namespace std::chrono_literals;
using proctimes::cli::top::arrange;
using proctimes::cli::top::column;
using proctimes::cli::top::display_row;
using proctimes::cli::top::grouping;
using proctimes::cli::top::top_frame;
using proctimes::cli::top::top_row;
using proctimes::cli::top::view_mode;
using proctimes::cli::top::view_state;

top_row proc(int pid, int ppid, const std::string& name, std::chrono::milliseconds cpu, std::string user = "root",
             std::string cgroup = "/system.slice") {
    top_row r;
    r.pid = pid;
    r.ppid = ppid;
    r.name = name;
    r.command = "/usr/bin/" + name + " --flag";
    proctimes::cli::top::user_name_of(r) = std::move(user);
    r.cgroup = std::move(cgroup);
    r.state = 'S';
    r.interval_user = cpu;
    r.kernel = cpu * 2;
    proctimes::cli::top::user_time_of(r) = std::chrono::nanoseconds(cpu) * 3;
    r.threads = 1;
    r.rss_bytes = static_cast<std::uint64_t>(pid) * 4096;
    r.creation = proctimes::instant(std::chrono::seconds(1'700'000'000 + pid));
    return r;
}

//       1 init (10)
//       ├── 100 bash (5)
//       │   ├── 200 make (20)
//       │   │   └── 300 cc (300), ended
//       │   └── 201 vim (1)
//       └── 101 sshd (0)
//       2 kthreadd (2)
top_frame sample() {
    top_frame f;
    f.interval = 1s;
    f.rows.push_back(proc(200, 100, "make", 20ms, "ann", "/user.slice/ann"));
    f.rows.push_back(proc(1, 0, "init", 10ms));
    f.rows.push_back(proc(101, 1, "sshd", 0ms));
    f.rows.push_back(proc(100, 1, "bash", 5ms, "ann", "/user.slice/ann"));
    f.rows.push_back(proc(201, 100, "vim", 1ms, "bob", "/user.slice/bob"));
    f.rows.push_back(proc(2, 0, "kthreadd", 2ms));
    top_row cc = proc(300, 200, "cc", 250ms, "ann", "/user.slice/ann");
    cc.interval_kernel = 50ms;  // 300 ms in all
    cc.ended = true;
    cc.state = 'X';
    cc.exit_code = 0;
    f.rows.push_back(cc);
    return f;
}

std::vector<int> pids(const std::vector<display_row>& rows) {
    std::vector<int> out;
    out.reserve(rows.size());
    for (const auto& r : rows) out.push_back(r.key.tid.value_or(r.key.pid));
    return out;
}

TEST(TopView, FlatSortsByCpuDescendingThenPid) {
    const top_frame f = sample();
    view_state s;
    const auto rows = arrange(f, s);
    EXPECT_EQ(pids(rows), (std::vector<int>{300, 200, 1, 100, 2, 201, 101}));
    EXPECT_EQ(rows[0].cpu, 300ms);
}

TEST(TopView, EveryColumnSortsBothWays) {
    const top_frame f = sample();
    for (column c : proctimes::cli::top::all_columns) {
        view_state s;
        s.sort = c;
        s.descending = false;
        const auto up = pids(arrange(f, s));
        s.descending = true;
        const auto down = pids(arrange(f, s));
        ASSERT_EQ(up.size(), f.rows.size()) << proctimes::cli::top::column_title(c);
        ASSERT_EQ(down.size(), f.rows.size());
        if (c == column::state) continue;  // ties everywhere but the ended row
        // Distinct keys: one order is the other reversed.
        if (c != column::user && c != column::threads && c != column::cpu) {
            EXPECT_EQ(up, std::vector<int>(down.rbegin(), down.rend())) << proctimes::cli::top::column_title(c);
        }
    }
    view_state s;
    s.sort = column::pid;
    s.descending = false;
    EXPECT_EQ(pids(arrange(f, s)), (std::vector<int>{1, 2, 100, 101, 200, 201, 300}));
    s.sort = column::age;  // youngest (largest creation) last when ascending = youngest first
    EXPECT_EQ(pids(arrange(f, s)).front(), 300);
    s.sort = column::command;
    EXPECT_EQ(pids(arrange(f, s)).front(), 100);  // /usr/bin/bash
    s.sort = column::user;
    s.descending = true;
    EXPECT_EQ(pids(arrange(f, s)).front(), 1);  // root, ties by pid: 1, 2, 101
}

TEST(TopView, TreeDepthsBranchesAndSubtreeSums) {
    const top_frame f = sample();
    view_state s;
    s.mode = view_mode::tree;
    s.utf8 = false;
    const auto rows = arrange(f, s);
    ASSERT_EQ(pids(rows), (std::vector<int>{1, 100, 200, 300, 201, 101, 2}));
    const std::vector<int> depth{0, 1, 2, 3, 2, 1, 0};
    for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].depth, depth[i]) << i;
    EXPECT_EQ(rows[0].cpu, 336ms);  // 10 + 5 + 20 + 300 + 1 + 0
    EXPECT_EQ(rows[0].own_cpu, 10ms);
    EXPECT_EQ(rows[1].cpu, 326ms);
    EXPECT_EQ(rows[2].cpu, 320ms);
    EXPECT_EQ(rows[3].cpu, 300ms);
    EXPECT_EQ(rows[6].cpu, 2ms);
    EXPECT_EQ(rows[0].branch, "");
    EXPECT_EQ(rows[1].branch, "|- ");
    EXPECT_EQ(rows[2].branch, "|  |- ");
    EXPECT_EQ(rows[3].branch, "|  |  `- ");
    EXPECT_EQ(rows[4].branch, "|  `- ");
    EXPECT_EQ(rows[5].branch, "`- ");
    s.utf8 = true;
    EXPECT_EQ(arrange(f, s)[3].branch, "\u2502  \u2502  \u2514\u2500 ");
}

TEST(TopView, TreeFilterKeepsAncestorsOfMatches) {
    const top_frame f = sample();
    view_state s;
    s.mode = view_mode::tree;
    s.filter = "VIM";
    EXPECT_EQ(pids(arrange(f, s)), (std::vector<int>{1, 100, 201}));
}

TEST(TopView, TreeSurvivesParentCycles) {
    top_frame f;
    f.interval = 1s;
    f.rows.push_back(proc(10, 11, "a", 1ms));
    f.rows.push_back(proc(11, 10, "b", 2ms));
    f.rows.push_back(proc(12, 12, "self", 3ms));
    view_state s;
    s.mode = view_mode::tree;
    const auto rows = arrange(f, s);
    EXPECT_EQ(rows.size(), 3U);
}

TEST(TopView, DeepChainIsDrawnWithBoundedIndent) {
    top_frame f;
    f.interval = 1s;
    f.rows.reserve(5000);
    for (int i = 1; i <= 5000; ++i) f.rows.push_back(proc(i, i - 1, "p", 1ms));
    view_state s;
    s.mode = view_mode::tree;
    const auto rows = arrange(f, s);
    ASSERT_EQ(rows.size(), 5000U);
    EXPECT_EQ(rows.front().cpu, 5000ms);
    EXPECT_EQ(rows.back().depth, 4999);
    EXPECT_LT(rows.back().branch.size(), 200U);
}

TEST(TopView, GroupsSumTheirMembers) {
    const top_frame f = sample();
    view_state s;
    s.mode = view_mode::grouped;
    s.group = grouping::user;
    auto rows = arrange(f, s);
    ASSERT_EQ(rows.size(), 3U);
    EXPECT_EQ(rows[0].group_name, "ann");
    EXPECT_EQ(rows[0].members, 3U);
    EXPECT_EQ(rows[0].cpu, 325ms);
    EXPECT_EQ(rows[0].threads, 3U);
    EXPECT_EQ(rows[0].rss, (200U + 100U + 300U) * 4096U);
    EXPECT_EQ(rows[1].group_name, "root");
    EXPECT_EQ(rows[1].cpu, 12ms);
    EXPECT_EQ(rows[2].group_name, "bob");
    s.group = grouping::cgroup;
    rows = arrange(f, s);
    ASSERT_EQ(rows.size(), 3U);
    EXPECT_EQ(rows[0].group_name, "/user.slice/ann");
    s.group = grouping::program;
    s.filter = "make";
    rows = arrange(f, s);
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].group_name, "make");
    EXPECT_EQ(rows[0].cpu, 20ms);
}

TEST(TopView, FilterMatchesNameCommandUserAndPid) {
    const top_frame f = sample();
    view_state s;
    s.filter = "SSH";
    EXPECT_EQ(pids(arrange(f, s)), (std::vector<int>{101}));
    s.filter = "--flag";
    EXPECT_EQ(arrange(f, s).size(), f.rows.size());
    s.filter = "bob";
    EXPECT_EQ(pids(arrange(f, s)), (std::vector<int>{201}));
    s.filter = "30";
    EXPECT_EQ(pids(arrange(f, s)), (std::vector<int>{300}));
    s.filter = "nothing at all";
    EXPECT_TRUE(arrange(f, s).empty());
}

TEST(TopView, ThreadsOfOneProcess) {
    top_frame f = sample();
    top_row& make = f.rows[0];
    make.thread_rows.reserve(3);
    for (int t = 0; t < 3; ++t) {
        top_row th = proc(200, 100, "worker", std::chrono::milliseconds(t * 10));
        th.tid = t == 0 ? 200 : 1000 + t;
        make.thread_rows.push_back(th);
    }
    view_state s;
    s.mode = view_mode::threads;
    s.thread_of = 200;
    const auto rows = arrange(f, s);
    EXPECT_EQ(pids(rows), (std::vector<int>{1002, 1001, 200}));
    for (const auto& r : rows) EXPECT_EQ(r.what, display_row::kind::thread);
    s.thread_of = 12345;  // gone
    EXPECT_TRUE(arrange(f, s).empty());
    // Every thread under its process in the flat view.
    view_state all;
    all.all_threads = true;
    const auto flat = arrange(f, all);
    EXPECT_EQ(flat.size(), f.rows.size() + 3);
    EXPECT_EQ(flat[1].key.pid, 200);
    EXPECT_EQ(flat[2].depth, 1);
}

TEST(TopView, SelectionFollowsItsPidOrKeepsItsLine) {
    top_frame f = sample();
    view_state s;
    auto rows = arrange(f, s);
    proctimes::cli::top::select_row(s, rows, 2, 5);  // pid 1
    ASSERT_EQ(s.selected->pid, 1);
    // pid 1 becomes the busiest.
    f.rows[1].interval_user = 900ms;
    rows = arrange(f, s);
    proctimes::cli::top::place_cursor(s, rows, 5, true);
    EXPECT_EQ(s.cursor, 0U);
    EXPECT_EQ(s.selected->pid, 1);
    // Without following, the cursor keeps its line.
    proctimes::cli::top::select_row(s, rows, 2, 5);
    const int at_line = rows[2].key.pid;
    f.rows[1].interval_user = 0ms;
    rows = arrange(f, s);
    proctimes::cli::top::place_cursor(s, rows, 5, false);
    EXPECT_EQ(s.cursor, 2U);
    EXPECT_NE(s.selected->pid, at_line);
    // A followed pid that is gone: the row now on its line.
    s.selected = proctimes::cli::top::row_key{999, std::nullopt, {}};
    proctimes::cli::top::place_cursor(s, rows, 5, true);
    EXPECT_EQ(s.cursor, 2U);
    EXPECT_EQ(s.selected->pid, rows[2].key.pid);
}

TEST(TopView, ScrollingKeepsTheCursorOnThePage) {
    top_frame f;
    f.interval = 1s;
    f.rows.reserve(100);
    for (int i = 1; i <= 100; ++i) f.rows.push_back(proc(i, 0, "p", std::chrono::milliseconds(i)));
    view_state s;
    s.sort = column::pid;
    s.descending = false;
    const auto rows = arrange(f, s);
    proctimes::cli::top::move_cursor(s, rows, 30, 10);
    EXPECT_EQ(s.cursor, 30U);
    EXPECT_EQ(s.top, 21U);
    proctimes::cli::top::move_cursor(s, rows, -5, 10);
    EXPECT_EQ(s.top, 21U);
    proctimes::cli::top::move_cursor(s, rows, 1000, 10);
    EXPECT_EQ(s.cursor, 99U);
    EXPECT_EQ(s.top, 90U);
    proctimes::cli::top::move_cursor(s, rows, -1000, 10);
    EXPECT_EQ(s.cursor, 0U);
    EXPECT_EQ(s.top, 0U);
    const auto next = proctimes::cli::top::find_row(rows, "42", 0);
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(rows[*next].key.pid, 42);
    EXPECT_FALSE(proctimes::cli::top::find_row(rows, "zzz", 0).has_value());
}

TEST(TopView, ReapedChildrenCountOnTheirParentAndInItsSubtree) {
    top_frame f = sample();
    f.rows[3].interval_children_user = 40ms;  // bash reaped children: 40 ms no row shows
    view_state s;
    s.filter = "bash";
    const auto flat = arrange(f, s);
    ASSERT_EQ(flat.size(), 1U);
    EXPECT_EQ(flat[0].cpu, 45ms);
    s.filter.clear();
    s.mode = view_mode::tree;
    const auto tree = arrange(f, s);
    EXPECT_EQ(tree[0].cpu, 376ms);  // 336 + 40
    EXPECT_EQ(tree[1].cpu, 366ms);
    // A thread row carries no children of its own.
    top_row t = f.rows[3];
    t.tid = 100;
    f.rows[3].thread_rows = {t};
    s.mode = view_mode::threads;
    s.thread_of = 100;
    EXPECT_EQ(arrange(f, s).at(0).cpu, 5ms);
}

TEST(TopView, TwentyThousandProcessesInEveryView) {
    top_frame f;
    f.interval = 1s;
    f.rows.reserve(20001);
    // A wide tree: 200 parents of 99 children each, plus their parents' parent.
    f.rows.push_back(proc(1, 0, "init", 0ms));
    for (int p = 0; p < 200; ++p) {
        const int parent = 2 + p * 100;
        f.rows.push_back(proc(parent, 1, "shell", 1ms, p % 2 == 0 ? "ann" : "bob"));
        for (int c = 1; c < 100; ++c) f.rows.push_back(proc(parent + c, parent, "job" + std::to_string(c % 7), 1ms));
    }
    ASSERT_EQ(f.rows.size(), 20001U);
    view_state s;
    EXPECT_EQ(arrange(f, s).size(), 20001U);
    s.mode = view_mode::tree;
    const auto tree = arrange(f, s);
    ASSERT_EQ(tree.size(), 20001U);
    EXPECT_EQ(tree[0].key.pid, 1);
    EXPECT_EQ(tree[0].cpu, 20000ms);
    EXPECT_EQ(tree[1].depth, 1);
    EXPECT_EQ(tree[1].cpu, 100ms);
    s.mode = view_mode::grouped;
    s.group = grouping::program;
    const auto groups = arrange(f, s);
    EXPECT_EQ(groups.size(), 9U);  // init, shell, job0..job6
    std::chrono::nanoseconds sum{};
    for (const auto& g : groups) sum += g.cpu;
    EXPECT_EQ(sum, 20000ms);
}

TEST(TopView, CpuPercentOfOneCpu) {
    EXPECT_DOUBLE_EQ(proctimes::cli::top::cpu_percent(500ms, 1s), 50.0);
    EXPECT_DOUBLE_EQ(proctimes::cli::top::cpu_percent(3s, 2s), 150.0);
    EXPECT_DOUBLE_EQ(proctimes::cli::top::cpu_percent(1s, 0s), 0.0);
}

}  // namespace
