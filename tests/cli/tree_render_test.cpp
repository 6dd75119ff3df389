// SPDX-License-Identifier: MIT
// The renderers of `run --tree` on synthetic trees (tree_fixture.hpp): the
// Chrome trace's structure and nesting, the SVG icicle's XML and geometry
// (checked by check_tree_svg.py with Python's XML parser), JSON and CSV
// round trips of hostile argv, the table's content, and the shape of a tree
// whose parent indexes are wrong.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "output/output.hpp"
#include "run/tree/render.hpp"
#include "tree_fixture.hpp"

namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using proctimes::cli::to_valid_utf8;
using namespace proctimes::cli::tree;
using tree_testing::build_report;

// Runs check_tree_svg.py on `svg`; its output, and whether it passed.
bool svg_checks(const std::string& svg, std::string& output) {
    char path[] = "/tmp/proctimes-tree-svg-XXXXXX";
    const int fd = ::mkstemp(path);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, svg.data(), svg.size()), static_cast<ssize_t>(svg.size()));
    ::close(fd);
    const std::string cmd = std::string("/usr/bin/python3 ") + PROCTIMES_TESTS_DIR + "/cli/check_tree_svg.py " + path;
    FILE* p = ::popen(cmd.c_str(), "r");
    output.clear();
    char buf[512];
    while (p && std::fgets(buf, sizeof buf, p)) output += buf;
    const int st = p ? ::pclose(p) : -1;
    ::unlink(path);
    return st == 0;
}

TEST(TreeTrace, EveryProcessIsATrackWithNestedEvents) {
    const auto r = build_report();
    const json doc = json::parse(render_trace(r));
    ASSERT_TRUE(doc.at("traceEvents").is_array());
    EXPECT_EQ(doc.at("displayTimeUnit"), "ms");
    std::map<int, json> life;  // pid → its process "X" event
    std::map<int, std::vector<json>> programs;
    std::map<int, int> names, sort_index, execs;
    for (const auto& e : doc["traceEvents"]) {
        ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid") && e.contains("name")) << e;
        EXPECT_EQ(e["pid"], e["tid"]);
        const std::string ph = e["ph"];
        const int pid = e["pid"];
        if (ph == "M") {
            if (e["name"] == "process_name") ++names[pid];
            if (e["name"] == "process_sort_index") sort_index[pid] = e["args"]["sort_index"];
            continue;
        }
        ASSERT_TRUE(e["ts"].is_number()) << e;
        EXPECT_GE(e["ts"].get<double>(), 0.0);
        if (ph == "X") {
            ASSERT_TRUE(e["dur"].is_number()) << e;
            EXPECT_GE(e["dur"].get<double>(), 0.0);
            if (e["cat"] == "process")
                life[pid] = e;
            else
                programs[pid].push_back(e);
        } else {
            EXPECT_EQ(ph, "i");
            EXPECT_EQ(e["s"], "t");
            ++execs[pid];
        }
    }
    const auto& procs = r.tree.processes;
    ASSERT_EQ(life.size(), procs.size());
    const auto inside = [](const json& in, const json& out) {
        const double a = in["ts"], b = a + in["dur"].get<double>(), c = out["ts"], d = c + out["dur"].get<double>();
        return a >= c - 1e-6 && b <= d + 1e-6;
    };
    for (const auto& p : procs) {
        EXPECT_EQ(names[p.pid], 1) << p.pid;
        EXPECT_EQ(execs[p.pid], static_cast<int>(p.programs.size()) - 1) << p.pid;
        ASSERT_EQ(programs[p.pid].size(), p.programs.size());
        for (const auto& x : programs[p.pid]) EXPECT_TRUE(inside(x, life[p.pid])) << x << " in " << life[p.pid];
        if (p.parent_pid != 0) {
            EXPECT_TRUE(inside(life[p.pid], life[p.parent_pid])) << p.pid;
            EXPECT_GT(sort_index[p.pid], sort_index[p.parent_pid]) << p.pid;
        }
    }
    // Microseconds from the command's creation: cc1 of a.c ran from 6 ms to 30 ms.
    const auto& cc1 = programs[103][1];
    EXPECT_DOUBLE_EQ(cc1["ts"].get<double>(), 6000.0);
    EXPECT_DOUBLE_EQ(cc1["dur"].get<double>(), 24000.0);
    EXPECT_EQ(cc1["name"], "cc1");
    EXPECT_EQ(life[103]["args"]["user_ns"], 20'000'000);
    EXPECT_EQ(life[110]["args"]["exit"], "SIGSEGV (core)");
    EXPECT_EQ(life[110]["args"]["argv"][6], to_valid_utf8(tree_testing::hostile_argv[6]));
}

TEST(TreeSvg, WellFormedAndWidthsAreCpu) {
    auto r = build_report();
    const std::string svg = render_svg(r);
    std::string out;
    EXPECT_TRUE(svg_checks(svg, out)) << out;
    EXPECT_EQ(out, "ok 11\n");
    // Hostile argv reaches the title escaped; no raw control byte anywhere.
    EXPECT_NE(svg.find("&lt;tag attr=&apos;x&apos;&gt;&amp;amp;"), std::string::npos);
    EXPECT_NE(svg.find("ctl \\x01\\x1b end"), std::string::npos);
    EXPECT_NE(svg.find("\\uFFFF"), std::string::npos);
    for (const char c : svg) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n') << int(c);
    // Widths: the command is the whole 1200 px; cc1 of b.c (34 ms of 117 ms) its share.
    const double total = static_cast<double>(shape_of(r.tree).total.count());
    const auto pos = svg.find("data-pid=\"106\"");
    ASSERT_NE(pos, std::string::npos);
    const auto w = svg.find("width=\"", svg.find("class=\"box\"", pos)) + 7;
    EXPECT_NEAR(std::stod(svg.substr(w)), 1200.0 * 34e6 / total, 0.001);
}

TEST(TreeSvg, NoCpuDeepAndEmptyTrees) {
    // No CPU at all: one unit per process, still an icicle.
    auto r = build_report();
    for (auto& p : r.tree.processes) p.user = p.kernel = 0ns;
    std::string out;
    EXPECT_TRUE(svg_checks(render_svg(r), out)) << out;
    // A chain 2000 deep (no recursion in the renderers).
    proctimes::cli::tree::tree_report deep;
    deep.command = {"deep"};
    for (int i = 0; i < 2000; ++i)
        deep.tree.processes.push_back(tree_testing::process(1000 + i, i ? 999 + i : 0, i - 1,
                                                            {tree_testing::program("/bin/sh", {"sh"}, 1ms * i)},
                                                            1ms * i, 4000ms - 1ms * i, 1ms, 0ms));
    EXPECT_TRUE(svg_checks(render_svg(deep), out)) << out;
    EXPECT_EQ(out, "ok 2000\n");
    EXPECT_EQ(json::parse(render_trace(deep))["traceEvents"].size(), 2000u * 5);
    // Nothing recorded: still a document.
    proctimes::cli::tree::tree_report none;
    none.command = {"x"};
    EXPECT_TRUE(svg_checks(render_svg(none), out)) << out;
    EXPECT_EQ(out, "ok 0\n");
    EXPECT_EQ(json::parse(render_trace(none))["traceEvents"].size(), 0u);
    EXPECT_EQ(json::parse(render_json(none))["processes"].size(), 0u);
    EXPECT_NE(render_table(none, {}).find("cpu (tree)"), std::string::npos);
}

TEST(TreeJson, EveryProcessWithHostileArgvRoundTrips) {
    const auto r = build_report();
    const json doc = json::parse(render_json(r));
    EXPECT_EQ(doc["source"], "ptrace");
    EXPECT_EQ(doc["process_count"], 11);
    EXPECT_EQ(doc["unaccounted_cpu_ns"], 3'000'000);
    EXPECT_EQ(doc["rusage_cpu_ns"].get<std::int64_t>() - doc["unaccounted_cpu_ns"].get<std::int64_t>() +
                  doc["not_final_cpu_ns"].get<std::int64_t>(),
              doc["tree_cpu_ns"].get<std::int64_t>());
    EXPECT_EQ(doc["not_final_cpu_ns"], 10'000'000);
    ASSERT_EQ(doc["processes"].size(), r.tree.processes.size());
    for (std::size_t i = 0; i < r.tree.processes.size(); ++i) {
        const auto& p = r.tree.processes[i];
        const auto& o = doc["processes"][i];
        EXPECT_EQ(o["pid"], p.pid);
        EXPECT_EQ(o["parent_pid"], p.parent_pid);
        EXPECT_EQ(o["parent_index"], p.parent_index);
        EXPECT_EQ(o["user_ns"], p.user.count());
        EXPECT_EQ(o["kernel_ns"], p.kernel.count());
        EXPECT_EQ(o["final_times"], p.final_times);
        EXPECT_EQ(o["exit_filetime"].get<std::uint64_t>() - o["creation_filetime"].get<std::uint64_t>(),
                  static_cast<std::uint64_t>((*p.exited - p.created).count() / 100));
        ASSERT_EQ(o["programs"].size(), p.programs.size());
        for (std::size_t j = 0; j < p.programs.size(); ++j) {
            const auto& argv = p.programs[j].argv;
            ASSERT_EQ(o["programs"][j]["argv"].size(), argv.size());
            for (std::size_t k = 0; k < argv.size(); ++k)
                EXPECT_EQ(o["programs"][j]["argv"][k].get<std::string>(), to_valid_utf8(argv[k]));
        }
    }
    const auto& weird = doc["processes"][10];
    EXPECT_EQ(weird["signal"], 11);
    EXPECT_EQ(weird["exit_code"], nullptr);
    EXPECT_EQ(weird["core_dumped"], true);
    EXPECT_EQ(weird["programs"][1]["argv_truncated"], true);
    EXPECT_EQ(weird["programs"][1]["argv"][3], "line\nbreak");
    EXPECT_EQ(weird["programs"][1]["argv"][6], "bad \u00ff\u00fe utf8");  // invalid bytes as U+00HH
    EXPECT_EQ(doc["processes"][0]["subtree_cpu_ns"], doc["tree_cpu_ns"]);
}

// RFC 4180 records of `text` from `pos`, up to an empty line or the end.
std::vector<std::vector<std::string>> csv_records(const std::string& text, std::size_t& pos) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false, any = false;
    for (; pos < text.size(); ++pos) {
        const char c = text[pos];
        if (quoted) {
            if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"')
                field += '"', ++pos;
            else if (c == '"')
                quoted = false;
            else
                field += c;
        } else if (c == '"') {
            quoted = any = true;
        } else if (c == ',') {
            row.push_back(field), field.clear(), any = true;
        } else if (c == '\n') {
            if (!any && row.empty() && field.empty()) {
                ++pos;
                break;  // the empty line between the sections
            }
            row.push_back(field), field.clear();
            rows.push_back(row), row.clear(), any = false;
        } else {
            field += c, any = true;
        }
    }
    return rows;
}

TEST(TreeCsv, EveryProcessWithHostileArgvRoundTrips) {
    const auto r = build_report();
    const std::string text = render_csv(r);
    std::size_t pos = 0;
    const auto rows = csv_records(text, pos);
    const auto tree_rows = csv_records(text, pos);
    EXPECT_EQ(pos, text.size());
    ASSERT_EQ(rows.size(), r.tree.processes.size() + 1);
    const auto& head = rows[0];
    const auto col = [&head](const std::string& name) {
        const auto it = std::find(head.begin(), head.end(), name);
        EXPECT_NE(it, head.end()) << name;
        return static_cast<std::size_t>(it - head.begin());
    };
    for (std::size_t i = 0; i < r.tree.processes.size(); ++i) {
        const auto& p = r.tree.processes[i];
        const auto& row = rows[i + 1];
        ASSERT_EQ(row.size(), head.size()) << i;
        EXPECT_EQ(row[col("pid")], std::to_string(p.pid));
        EXPECT_EQ(row[col("user_ns")], std::to_string(p.user.count()));
        EXPECT_EQ(row[col("programs")], std::to_string(p.programs.size()));
        EXPECT_EQ(row[col("final_times")], p.final_times ? "true" : "false");
        const json argv = json::parse(row[col("argv")]);
        const auto& want = p.programs.back().argv;
        ASSERT_EQ(argv.size(), want.size());
        for (std::size_t k = 0; k < want.size(); ++k) EXPECT_EQ(argv[k].get<std::string>(), to_valid_utf8(want[k]));
        EXPECT_EQ(row[col("executable")], p.programs.back().executable);
    }
    EXPECT_EQ(rows[11][col("signal")], "11");
    EXPECT_EQ(rows[11][col("exit_code")], "");
    ASSERT_EQ(tree_rows.size(), 2u);
    ASSERT_EQ(tree_rows[0].size(), tree_rows[1].size());
    const auto tcol = [&](const std::string& name) {
        return tree_rows[1][std::find(tree_rows[0].begin(), tree_rows[0].end(), name) - tree_rows[0].begin()];
    };
    EXPECT_EQ(tcol("source"), "ptrace");
    EXPECT_EQ(tcol("unaccounted_cpu_ns"), "3000000");
    EXPECT_EQ(tcol("process_count"), "11");
    EXPECT_EQ(json::parse(tcol("command")), json({"make", "-j2"}));
}

// The line of `t` that starts with `prefix`, or "".
std::string line_of(const std::string& t, const std::string& prefix) {
    for (std::size_t pos = 0; pos < t.size();) {
        const auto end = t.find('\n', pos);
        std::string line = t.substr(pos, end - pos);
        if (line.rfind(prefix, 0) == 0) return line;
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    return "";
}

TEST(TreeTable, HeaderBusiestAndPrograms) {
    const auto r = build_report();
    const std::string t = render_table(r, {3, false});
    EXPECT_EQ(line_of(t, "command"), "command          make -j2") << t;
    EXPECT_EQ(line_of(t, "exit status"), "exit status      0") << t;
    EXPECT_NE(line_of(t, "wall").find("wall             100 ms"), std::string::npos) << t;
    EXPECT_NE(line_of(t, "cpu (rusage)").find(" 83 ms"), std::string::npos) << t;
    EXPECT_NE(line_of(t, "cpu (tree)").find("cpu (tree)       90 ms"), std::string::npos) << t;
    EXPECT_NE(line_of(t, "cpu (tree)").find("11 processes; 10 ms not final"), std::string::npos) << t;
    EXPECT_NE(line_of(t, "unaccounted").find("unaccounted      3 ms (3.6 %)"), std::string::npos) << t;
    EXPECT_NE(line_of(t, "unaccounted").find("not attributed to a recorded process"), std::string::npos) << t;
    // A difference within the rusage's µs rounding is called so, not a gap
    // (here -777 ns over 11 processes); beyond it, a negative one is more seen.
    auto rounded = r;
    rounded.tree.unaccounted_cpu = -777ns;
    EXPECT_NE(render_table(rounded, {}).find("within the rusage's 1 µs a process"), std::string::npos);
    rounded.tree.unaccounted_cpu = -13us;
    EXPECT_NE(render_table(rounded, {}).find("the tree saw more"), std::string::npos);
    EXPECT_NE(line_of(t, "source").find("source           ptrace"), std::string::npos) << t;
    EXPECT_NE(t.find("busiest processes by own CPU (3 of 11):"), std::string::npos) << t;
    // The three busiest: cc1 (b.c, 34 ms), cc1 (a.c, 23 ms), ld (10 ms, not final).
    const auto b = t.find("\n106 "), a = t.find("\n103 "), l = t.find("\n109 ");
    ASSERT_NE(b, std::string::npos) << t;
    ASSERT_NE(a, std::string::npos) << t;
    ASSERT_NE(l, std::string::npos) << t;
    EXPECT_LT(b, a);
    EXPECT_LT(a, l);
    EXPECT_EQ(t.find("\n110 "), std::string::npos) << t;
    const std::string ld = line_of(t, "109 ");
    EXPECT_NE(ld.find("5 ms *"), std::string::npos) << ld;
    EXPECT_NE(ld.find("ld -o prog"), std::string::npos) << ld;
    EXPECT_NE(t.find("* not final"), std::string::npos) << t;
    EXPECT_NE(t.find("by program (3 of 7):"), std::string::npos) << t;
    const std::string cc1 = line_of(t, "cc1 ");
    EXPECT_NE(cc1.find(" 2  "), std::string::npos) << cc1;
    EXPECT_NE(cc1.find("57 ms"), std::string::npos) << cc1;
    EXPECT_NE(cc1.find("63.3 %"), std::string::npos) << cc1;
    EXPECT_NE(line_of(t, "ld ").find("10 ms *"), std::string::npos) << t;
    EXPECT_NE(t.find("... 4 more programs: 6 processes, 16 ms CPU"), std::string::npos) << t;
    // Hostile argv on one line, escaped.
    const std::string all = render_table(r, {15, false});
    EXPECT_NE(all.find("SIGSEGV (core)"), std::string::npos) << all;
    EXPECT_NE(all.find("'line\\x0abreak'"), std::string::npos) << all;
    for (const char c : all) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << int(c);
}

TEST(TreeShape, ParentIndexesThatNameNoEarlierProcessGoUnderTheCommand) {
    auto r = build_report();
    r.tree.processes[4].parent_index = 4;   // itself
    r.tree.processes[5].parent_index = 99;  // out of range
    r.tree.processes[6].parent_index = -7;  // negative
    const auto s = shape_of(r.tree);
    EXPECT_EQ(s.parent[4], 0u);
    EXPECT_EQ(s.parent[5], 0u);
    EXPECT_EQ(s.parent[6], 0u);
    EXPECT_EQ(s.subtree[0], s.total);
    EXPECT_EQ(s.preorder.size(), r.tree.processes.size());
    std::set<std::size_t> seen(s.preorder.begin(), s.preorder.end());
    EXPECT_EQ(seen.size(), r.tree.processes.size());
    std::string out;
    EXPECT_TRUE(svg_checks(render_svg(r), out)) << out;
}

}  // namespace
