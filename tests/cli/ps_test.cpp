// SPDX-License-Identifier: MIT
// `proctimes ps`, run in-process through proctimes::cli::run (and run_ps for
// the terminal redraw): on the captured /proc tree of tests/fixtures/proc,
// whose every value is known, and on the live system.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <pwd.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/clock.hpp"
#include "proctimes/filetime.hpp"
#include "proctimes/process.hpp"
#include "run_cli.hpp"

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string fixture_root = std::string(PROCTIMES_FIXTURES) + "/proc";

using cli_testing::cli_result;
using cli_testing::run_cli;

// `ps` on the fixture tree with extra arguments.
cli_result fixture_ps(std::vector<std::string> extra) {
    std::vector<std::string> args{"ps", "--proc-root", fixture_root};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
}

std::vector<int> pids_of(const json& arr) {
    std::vector<int> v;
    for (const auto& p : arr) v.push_back(p["pid"].get<int>());
    return v;
}

const json* find_pid(const json& arr, int pid) {
    for (const auto& p : arr)
        if (p["pid"] == pid) return &p;
    return nullptr;
}

std::string name_of_uid(uid_t uid) {
    const passwd* pw = ::getpwuid(uid);
    return pw ? pw->pw_name : std::to_string(uid);
}

std::uint64_t filetime_of_start(std::uint64_t ticks) {
    return proctimes::filetime_from_time(proctimes::instant_from_start_ticks(ticks).value())->ticks;
}

}  // namespace

TEST(PsFixture, JsonHasEveryProcessWithPsFields) {
    const auto r = fixture_ps({"--format", "json"});
    EXPECT_EQ(r.code, 1) << "the malformed entries are reported";
    const json arr = json::parse(r.out);
    EXPECT_EQ(pids_of(arr), (std::vector<int>{1, 2, 57, 1200, 1977, 3100, 4100}));
    const json* p = find_pid(arr, 1200);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ((*p)["name"], "a) (b c)");
    EXPECT_EQ((*p)["ppid"], 1100);
    EXPECT_EQ((*p)["uid"], 1001);
    EXPECT_EQ((*p)["user_name"], name_of_uid(1001));
    EXPECT_EQ((*p)["proc_state"], "S");
    EXPECT_EQ((*p)["state"], "running");
    EXPECT_FALSE((*p)["sampled_at_time"].is_null());
    EXPECT_EQ((*p)["kernel_ns"], 750'000'000);
    EXPECT_EQ((*p)["user_ns"], 2'500'000'000);
    EXPECT_EQ((*p)["resolution_ns"], 10'000'000);
    EXPECT_EQ((*p)["total_resolution_ns"], 10'000'000);
    EXPECT_EQ((*p)["source"], "stat");
    EXPECT_EQ((*p)["creation_filetime"].get<std::uint64_t>(), filetime_of_start(123456));
    EXPECT_TRUE((*p)["exit_filetime"].is_null());
    EXPECT_TRUE((*p)["exit_time"].is_null());
    EXPECT_FALSE(p->contains("threads")) << "no --threads";
    EXPECT_FALSE(p->contains("cpu_percent")) << "no --interval";
    // Unknown owner (status without Uid:): null uid, "?".
    const json* q = find_pid(arr, 4100);
    ASSERT_NE(q, nullptr);
    EXPECT_TRUE((*q)["uid"].is_null());
    EXPECT_EQ((*q)["user_name"], "?");
    EXPECT_EQ((*find_pid(arr, 1977))["proc_state"], "Z");
    EXPECT_EQ((*find_pid(arr, 1977))["state"], "exited") << "a zombie's times are final";
    // One timestamp for the whole snapshot.
    for (const auto& e : arr) EXPECT_EQ(e["sampled_at_time"], (*p)["sampled_at_time"]);
    EXPECT_EQ((*find_pid(arr, 57))["name"], "kworker/u4:2-events_unbound");
    EXPECT_EQ((*find_pid(arr, 57))["ppid"], 2);
    // Failures on stderr, one line each, in the show command's wording.
    EXPECT_NE(r.err.find("proctimes: pid 4000: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("proctimes: pid 4100: cannot read its owner: "), std::string::npos) << r.err;
}

TEST(PsFixture, ThreadsNestedInTidOrder) {
    const auto r = fixture_ps({"--format", "json", "--threads"});
    EXPECT_EQ(r.code, 1);
    const json arr = json::parse(r.out);
    const json* p = find_pid(arr, 1200);
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->contains("threads"));
    const json& th = (*p)["threads"];
    ASSERT_EQ(th.size(), 3u);
    EXPECT_EQ(th[0]["tid"], 1200);
    EXPECT_EQ(th[1]["tid"], 1203);
    EXPECT_EQ(th[2]["tid"], 1204);
    EXPECT_EQ(th[1]["name"], "worker (1)");
    EXPECT_EQ(th[1]["proc_state"], "R");
    EXPECT_EQ(th[1]["state"], "running");
    EXPECT_EQ(th[2]["name"], "x) R 1 2 (");
    EXPECT_EQ(th[1]["user_ns"], 1'200'000'000);
    EXPECT_EQ(th[1]["pid"], 1200);
    EXPECT_EQ(th[1]["user_name"], name_of_uid(1001));
    EXPECT_EQ(th[1]["creation_filetime"].get<std::uint64_t>(), filetime_of_start(123500));
    EXPECT_NE(r.err.find("proctimes: pid 4100: thread 4101: "), std::string::npos) << r.err;
    // With --precise, schedstat totals for threads.
    const auto precise = fixture_ps({"--format", "json", "--threads", "--precise"});
    const json precise_arr = json::parse(precise.out);
    const json& pt = (*find_pid(precise_arr, 1200))["threads"];
    EXPECT_EQ(pt[1]["source"], "schedstat+stat");
    EXPECT_EQ(pt[1]["kernel_ns"].get<std::int64_t>() + pt[1]["user_ns"].get<std::int64_t>(), 1'500'000'011);
    EXPECT_EQ(pt[1]["total_resolution_ns"], 1);
}

TEST(PsFixture, SortTopAndUser) {
    auto order = [](std::vector<std::string> extra) {
        extra.insert(extra.end(), {"--format", "json"});
        return pids_of(json::parse(fixture_ps(extra).out));
    };
    // Total CPU: 1 8.16 s, 1200 3.25 s, 1977 0.14 s, 57 0.12 s, 4100 0.1 s, 2 0.03 s, 3100 0.02 s.
    EXPECT_EQ(order({"--sort", "cpu"}), (std::vector<int>{1, 1200, 1977, 57, 4100, 2, 3100}));
    // Kernel: 1 6.49 s, 1200 0.75 s, 57 0.12 s, 4100 0.05 s, 2 0.03 s, 3100 0.01 s, 1977 0.
    EXPECT_EQ(order({"--sort", "kernel"}), (std::vector<int>{1, 1200, 57, 4100, 2, 3100, 1977}));
    // User: 1200 2.5 s, 1 1.67 s, 1977 0.14 s, 4100 0.05 s, 3100 0.01 s, then 2 and 57 (0) by pid.
    EXPECT_EQ(order({"--sort", "user"}), (std::vector<int>{1200, 1, 1977, 4100, 3100, 2, 57}));
    // Start ticks: 57 15, 1 25, 2 25, 1977 20104, 3100 30000, 4100 40000, 1200 123456.
    EXPECT_EQ(order({"--sort", "start"}), (std::vector<int>{57, 1, 2, 1977, 3100, 4100, 1200}));
    EXPECT_EQ(order({"--sort", "name"}), (std::vector<int>{1200, 4100, 1, 2, 57, 1977, 3100}));
    EXPECT_EQ(order({"--sort", "pid", "--top", "3"}), (std::vector<int>{1, 2, 57}));
    EXPECT_EQ(order({"--sort", "cpu", "-n", "2"}), (std::vector<int>{1, 1200}));
    EXPECT_EQ(order({"--user", "0"}), (std::vector<int>{1, 2, 57, 3100}));
    EXPECT_EQ(order({"--user", name_of_uid(0)}), (std::vector<int>{1, 2, 57, 3100}));
    EXPECT_EQ(order({"--user", "1000"}), (std::vector<int>{1977}));
    EXPECT_EQ(order({"--user", "1001", "--threads"}), (std::vector<int>{1200}));
}

TEST(PsFixture, TableAndCsv) {
    const auto t = fixture_ps({"--threads"});
    EXPECT_EQ(t.code, 1);
    std::istringstream lines(t.out);
    std::string header;
    std::getline(lines, header);
    for (const char* col : {"PID", "TID", "PPID", "OWNER", "S", "CREATED", "KERNEL", "USER", "RES", "NAME"})
        EXPECT_NE(header.find(col), std::string::npos) << col;
    EXPECT_NE(t.out.find("a) (b c)"), std::string::npos);
    EXPECT_NE(t.out.find("    x) R 1 2 ("), std::string::npos) << "thread names indented under their process";
    EXPECT_NE(t.out.find("kworker/u4:2-events_unbound"), std::string::npos);
    EXPECT_NE(t.out.find("2.5 s"), std::string::npos);
    EXPECT_EQ(t.out.find('\x1b'), std::string::npos);

    const auto c = fixture_ps({"--format", "csv", "--threads"});
    std::istringstream csv(c.out);
    std::string first;
    std::getline(csv, first);
    EXPECT_EQ(first,
              "pid,tid,name,creation_filetime,exit_filetime,creation_time,exit_time,kernel_ns,user_ns,resolution_ns,"
              "total_resolution_ns,source,state,sampled_at_time,ppid,uid,user_name,proc_state");
    std::vector<std::string> rows;
    for (std::string line; std::getline(csv, line);) rows.push_back(line);
    // 7 processes, 3 + 1 + 1 + 1 + 1 + 2 + 1 threads.
    EXPECT_EQ(rows.size(), 7u + 10u);
    bool found = false;
    for (const auto& row : rows)
        if (row.rfind("1200,1203,worker (1),", 0) == 0) {
            found = true;
            EXPECT_NE(row.find(",stat,running,"), std::string::npos) << row;
            EXPECT_NE(row.find("Z,1100,1001,"), std::string::npos) << row;
            EXPECT_EQ(row.back(), 'R');
        }
    EXPECT_TRUE(found);
}

TEST(PsFixture, IntervalFramesWithoutATerminal) {
    const auto r = fixture_ps({"--format", "json", "--interval", "0.05", "--count", "3"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "no escape sequences when not on a terminal";
    // Three JSON arrays separated by blank lines.
    std::vector<json> frames;
    std::size_t pos = 0;
    while (pos < r.out.size()) {
        const auto end = r.out.find("\n\n", pos);
        frames.push_back(json::parse(r.out.substr(pos, end == std::string::npos ? std::string::npos : end - pos)));
        if (end == std::string::npos) break;
        pos = end + 2;
    }
    ASSERT_EQ(frames.size(), 3u);
    for (const auto& f : frames) {
        ASSERT_EQ(f.size(), 7u);
        for (const auto& p : f) {
            EXPECT_EQ(p["basis"], "both");
            EXPECT_EQ(p["cpu_percent"], 0.0) << "a captured tree does not move";
            EXPECT_EQ(p["interval_kernel_ns"], 0);
            EXPECT_GE(p["interval_ns"].get<std::int64_t>(), 50'000'000) << "frames never come early";
        }
    }
    const auto table = fixture_ps({"--interval", "0.05", "--count", "2"});
    EXPECT_EQ(table.out.find('\x1b'), std::string::npos);
    EXPECT_NE(table.out.find("CPU%"), std::string::npos);
    EXPECT_NE(table.out.find("\n\nproctimes ps  "), std::string::npos) << "frames separated by a blank line";
    const auto csv = fixture_ps({"--format", "csv", "--interval", "0.05", "--count", "1"});
    EXPECT_NE(csv.out.find(",source,state,sampled_at_time,ppid,uid,user_name,proc_state,interval_ns,interval_kernel_ns,"
                           "interval_user_ns,cpu_percent,basis,exit_source\n"),
              std::string::npos);
}

TEST(PsFixture, RedrawInPlaceOnATerminal) {
    proctimes::cli::ps_options o;
    o.proc_root = fixture_root;
    o.interval = 0.02;
    o.count = 2;
    o.redraw = proctimes::cli::redraw_mode::always;
    std::ostringstream out, err;
    EXPECT_EQ(proctimes::cli::run_ps(o, out, err), 1);
    const std::string s = out.str();
    // Each frame: cursor home, lines cleared to their end, the rest cleared.
    EXPECT_EQ(s.rfind("\x1b[H", 0), 0u);
    std::size_t homes = 0, ends = 0;
    for (std::size_t p = s.find("\x1b[H"); p != std::string::npos; p = s.find("\x1b[H", p + 1)) ++homes;
    for (std::size_t p = s.find("\x1b[J"); p != std::string::npos; p = s.find("\x1b[J", p + 1)) ++ends;
    EXPECT_EQ(homes, 2u);
    EXPECT_EQ(ends, 2u);
    EXPECT_NE(s.find("a) (b c)\x1b[K\n"), std::string::npos);
    EXPECT_EQ(s.find("\x1b[2J"), std::string::npos) << "no full-screen erase: no flicker";
}

TEST(PsUsage, BadArguments) {
    for (const auto& args : std::vector<std::vector<std::string>>{{"ps", "--count", "2"},
                                                                  {"ps", "--sort", "memory"},
                                                                  {"ps", "--top", "0"},
                                                                  {"ps", "--interval", "0"},
                                                                  {"ps", "--format", "xml"},
                                                                  {"ps", "--user", "no-such-user-here"},
                                                                  {"ps", "--reuse-idle", "5"},
                                                                  {"ps", "--threads", "--reuse-idle", "5"},
                                                                  {"ps", "--interval", "1", "--reuse-idle", "5"},
                                                                  {"ps", "-t", "-i", "1", "--reuse-idle", "0"}}) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.code, proctimes::cli::exit_usage) << args[1];
        EXPECT_TRUE(r.out.empty()) << args[1];
        EXPECT_FALSE(r.err.empty()) << args[1];
    }
    const auto missing = run_cli({"ps", "--proc-root", fixture_root + "/nope"});
    EXPECT_EQ(missing.code, proctimes::cli::exit_failure);
    EXPECT_NE(missing.err.find("cannot take a snapshot"), std::string::npos);
}

TEST(PsLive, OwnProcessAndThreads) {
    std::atomic<bool> stop{false};
    std::atomic<pid_t> tid{0};
    std::thread t([&] {
        ::pthread_setname_np(::pthread_self(), "ps-test (x)");
        tid = static_cast<pid_t>(::gettid());
        while (!stop) std::this_thread::sleep_for(1ms);
    });
    while (tid == 0) std::this_thread::sleep_for(1ms);
    const auto r = run_cli({"ps", "--threads", "--format", "json"});
    stop = true;
    t.join();
    const json arr = json::parse(r.out);
    const json* me = find_pid(arr, ::getpid());
    ASSERT_NE(me, nullptr);
    auto self = proctimes::process::open_self().value();
    EXPECT_EQ((*me)["creation_filetime"].get<std::uint64_t>(), proctimes::filetime_from_time(self.creation())->ticks);
    EXPECT_EQ((*me)["ppid"], ::getppid());
    EXPECT_EQ((*me)["uid"], ::geteuid());
    EXPECT_EQ((*me)["proc_state"], "R");
    EXPECT_EQ((*me)["state"], "running");
    EXPECT_EQ((*me)["source"], "cpu_clock+stat");
    bool found = false;
    for (const auto& th : (*me)["threads"])
        if (th["tid"] == tid.load()) {
            found = true;
            EXPECT_EQ(th["name"], "ps-test (x)");
        }
    EXPECT_TRUE(found);
    EXPECT_GE(arr.size(), 2u);
}

TEST(PsLive, IntervalSeesABusyThread) {
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        volatile unsigned long sink = 0;
        while (!stop)
            for (int i = 0; i < 100'000; ++i) sink = sink + static_cast<unsigned long>(i);
    });
    const auto cpu0 = proctimes::process_cpu_clock::now();
    const auto r = run_cli({"ps", "--interval", "0.3", "--count", "1", "--format", "json", "--sort", "cpu"});
    const auto cpu1 = proctimes::process_cpu_clock::now();
    stop = true;
    busy.join();
    const json arr = json::parse(r.out);
    const json* me = find_pid(arr, ::getpid());
    ASSERT_NE(me, nullptr);
    const std::int64_t used =
        (*me)["interval_kernel_ns"].get<std::int64_t>() + (*me)["interval_user_ns"].get<std::int64_t>();
    EXPECT_GT(used, 0);
    // Within what this process used during the whole command (10 ms slack for the split).
    EXPECT_LE(used, std::chrono::nanoseconds(cpu1 - cpu0).count() + 10'000'000);
    EXPECT_EQ((*me)["basis"], "both");
    EXPECT_GE((*me)["interval_ns"].get<std::int64_t>(), 300'000'000);
    EXPECT_NEAR((*me)["cpu_percent"].get<double>(),
                100.0 * static_cast<double>(used) / (*me)["interval_ns"].get<double>(), 1e-6);
}

TEST(PsLive, IntervalWithThreadsCopiedFromTheLastFrame) {
    // Frames that copy the threads of idle processes still list every
    // thread, this process's own (which runs) read afresh.
    std::atomic<bool> stop{false};
    std::atomic<pid_t> tid{0};
    std::thread t([&] {
        ::pthread_setname_np(::pthread_self(), "ps-reuse");
        tid = static_cast<pid_t>(::gettid());
        while (!stop) std::this_thread::sleep_for(1ms);
    });
    while (tid == 0) std::this_thread::sleep_for(1ms);
    const auto r = run_cli({"ps", "--threads", "--interval", "0.05", "--count", "2", "--reuse-idle", "10", "--format",
                            "json", "--sort", "pid"});
    stop = true;
    t.join();
    ASSERT_NE(r.code, proctimes::cli::exit_usage) << r.err;
    // One JSON array per frame, frames separated by a blank line.
    int frames = 0;
    for (std::size_t pos = 0; pos < r.out.size();) {
        const auto end = r.out.find("\n\n", pos);
        const json arr = json::parse(r.out.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
        ++frames;
        const json* me = find_pid(arr, ::getpid());
        ASSERT_NE(me, nullptr);
        bool found = false;
        for (const auto& th : (*me)["threads"]) found = found || (th["tid"] == tid.load() && th["name"] == "ps-reuse");
        EXPECT_TRUE(found) << "frame " << frames;
        EXPECT_GE(arr.size(), 2u);
        if (end == std::string::npos) break;
        pos = end + 2;
    }
    EXPECT_EQ(frames, 2);
}

TEST(PsFixture, TopWithoutSortMeansTheBusiest) {
    // One snapshot: the most total CPU (1 8.16 s, 1200 3.25 s, 1977 0.14 s),
    // not the lowest pids.
    const auto r = fixture_ps({"--top", "3", "--format", "json"});
    EXPECT_EQ(pids_of(json::parse(r.out)), (std::vector<int>{1, 1200, 1977}));
    // With --interval the CPU over the interval decides (ties by pid), as before.
    const auto i = fixture_ps({"--top", "2", "--format", "json", "--interval", "0.01", "--count", "1"});
    EXPECT_EQ(json::parse(i.out).size(), 2u);
}
