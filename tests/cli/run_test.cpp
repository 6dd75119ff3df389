// SPDX-License-Identifier: MIT
// `proctimes run`, in-process through proctimes::cli::run: exit statuses
// passed through, the report's fields and their consistency, -o, a missing
// program, and --threads on a program with named threads.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>
#include <csignal>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/filetime.hpp"
#include "proctimes/linux.hpp"
#include "run_cli.hpp"

namespace {

using nlohmann::json;

using cli_testing::cli_result;
using cli_testing::run_cli;

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
}

const std::vector<std::string> burn_cpu = {"sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"};

// The FILETIME ticks of an RFC 3339 "YYYY-MM-DDTHH:MM:SS.fffffffZ" string.
std::uint64_t ticks_of(const std::string& s) {
    using namespace std::chrono;
    int y = 0;
    unsigned mo = 0, d = 0, h = 0, mi = 0, sec = 0;
    unsigned long long frac = 0;
    EXPECT_EQ(std::sscanf(s.c_str(), "%d-%u-%uT%u:%u:%u.%7lluZ", &y, &mo, &d, &h, &mi, &sec, &frac), 7) << s;
    const sys_days date{year{y} / month{mo} / day{d}};
    const auto t = date + hours{h} + minutes{mi} + seconds{sec};
    auto ft = proctimes::filetime_from_time(time_point_cast<nanoseconds>(t) + nanoseconds{frac * 100});
    EXPECT_TRUE(ft.has_value());
    return ft ? ft->ticks : 0;
}

TEST(Run, PassesThroughExitCodes) {
    EXPECT_EQ(run_cli({"run", "--", "true"}).code, 0);
    EXPECT_EQ(run_cli({"run", "--", "false"}).code, 1);
    EXPECT_EQ(run_cli({"run", "--", "sh", "-c", "exit 42"}).code, 42);
}

TEST(Run, KilledBySignalGives128PlusSignal) {
    const auto r = run_cli({"run", "--format", "json", "--", "sh", "-c", "kill -TERM $$"});
    EXPECT_EQ(r.code, 143);
    const json j = json::parse(r.err);
    EXPECT_TRUE(j["exit_code"].is_null());
    EXPECT_EQ(j["signal"], 15);
    const auto t = run_cli({"run", "--", "sh", "-c", "kill -TERM $$"});
    EXPECT_NE(t.err.find("killed by SIGTERM"), std::string::npos) << t.err;
}

TEST(Run, IgnoresSigintAndSigquitWhileTheCommandRuns) {
    struct sigaction before {};
    ASSERT_EQ(::sigaction(SIGINT, nullptr, &before), 0);
    // The command signals proctimes (this test process) as Ctrl-C and Ctrl-\ would.
    const auto r = run_cli({"run", "--", "sh", "-c", "kill -INT $PPID; kill -QUIT $PPID; sleep 0.1; exit 3"});
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("exit status      3"), std::string::npos) << r.err;
    struct sigaction after {};
    ASSERT_EQ(::sigaction(SIGINT, nullptr, &after), 0);
    EXPECT_EQ(after.sa_handler, before.sa_handler);  // restored
}

TEST(Run, ReportGoesToErrAndOutStaysClean) {
    const auto r = run_cli({"run", "--", "true"});
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.out, "");
    for (const char* key : {"created", "exited", "elapsed", "wall", "kernel", "user", "cpu", "children kernel",
                            "children user", "max rss", "exit status"})
        EXPECT_NE(r.err.find(key), std::string::npos) << key << "\n" << r.err;
}

TEST(Run, CpuBurnerJsonFieldsValidate) {
    const auto before = std::chrono::system_clock::now();
    const auto r = run_cli(with({"run", "--format", "json", "--"}, burn_cpu));
    const auto after = std::chrono::system_clock::now();
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    const json j = json::parse(r.err);
    ASSERT_TRUE(j.is_object());

    for (const char* f :
         {"pid", "creation_filetime", "exit_filetime", "kernel_ns", "user_ns", "resolution_ns", "total_resolution_ns",
          "wall_ns", "elapsed_ns", "children_kernel_ns", "children_user_ns", "max_rss_kib", "exit_code"})
        EXPECT_TRUE(j[f].is_number_integer()) << f;
    for (const char* f : {"name", "creation_time", "exit_time", "source", "state", "sampled_at_time"})
        EXPECT_TRUE(j[f].is_string()) << f;
    EXPECT_TRUE(j["cpu_percent"].is_number());
    EXPECT_TRUE(j["signal"].is_null());
    EXPECT_TRUE(j["command"].is_array());
    EXPECT_FALSE(j.contains("threads"));
    EXPECT_EQ(j["name"], "sh");
    EXPECT_EQ(j["state"], "exited");
    EXPECT_EQ(j["exit_code"], 0);

    const auto creation = j["creation_filetime"].get<std::uint64_t>();
    const auto exit = j["exit_filetime"].get<std::uint64_t>();
    EXPECT_GE(exit, creation);
    EXPECT_EQ(ticks_of(j["creation_time"].get<std::string>()), creation);
    EXPECT_EQ(ticks_of(j["exit_time"].get<std::string>()), exit);
    // Both instants inside the run (creation floored to its 10 ms tick).
    const auto lo = proctimes::filetime_from_time(before - std::chrono::milliseconds{20})->ticks;
    const auto hi = proctimes::filetime_from_time(after)->ticks;
    EXPECT_GE(creation, lo);
    EXPECT_LE(exit, hi);
    // What the exit instant promises: observed (no later than) or recorded.
    ASSERT_TRUE(j["exit_source"].is_string());
    EXPECT_TRUE(j["exit_source"] == "observed" || j["exit_source"] == "exit_record") << j["exit_source"];
    const auto earliest = j["exit_earliest_filetime"].get<std::uint64_t>();
    EXPECT_GE(earliest, creation);
    EXPECT_LE(earliest, exit);
    EXPECT_GE(j["exit_resolution_ns"].get<std::int64_t>(), 0);

    const auto cpu = j["kernel_ns"].get<std::int64_t>() + j["user_ns"].get<std::int64_t>();
    const auto wall = j["wall_ns"].get<std::int64_t>();
    EXPECT_GT(cpu, 0);
    EXPECT_GT(wall, 0);
    EXPECT_LE(cpu, wall * 2);
    // elapsed_ns is exact; the FILETIME values are floored to 100 ns each.
    EXPECT_NEAR(static_cast<double>(j["elapsed_ns"].get<std::int64_t>()), static_cast<double>(exit - creation) * 100.0,
                100.0);
    EXPECT_NEAR(j["cpu_percent"].get<double>(), 100.0 * static_cast<double>(cpu) / static_cast<double>(wall), 0.01);
    EXPECT_GT(j["max_rss_kib"].get<long>(), 0);
}

TEST(Run, CsvHasOneRowWithTheRunColumns) {
    const auto r = run_cli({"run", "--format", "csv", "--", "sh", "-c", "exit 3"});
    EXPECT_EQ(r.code, 3);
    std::istringstream in(r.err);
    std::string header, row, extra;
    ASSERT_TRUE(std::getline(in, header));
    ASSERT_TRUE(std::getline(in, row));
    EXPECT_FALSE(std::getline(in, extra));
    EXPECT_EQ(header,
              "pid,tid,name,creation_filetime,exit_filetime,creation_time,exit_time,kernel_ns,user_ns,resolution_ns,"
              "total_resolution_ns,source,exit_source,exit_earliest_filetime,exit_earliest_time,exit_resolution_ns,"
              "state,sampled_at_time,elapsed_ns,wall_ns,cpu_percent,children_kernel_ns,"
              "children_user_ns,max_rss_kib,exit_code,signal");
    EXPECT_EQ(row.substr(row.size() - 3), ",3,");
}

TEST(Run, OutputFileGetsTheReport) {
    char path[] = "/tmp/proctimes-run-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    const auto r = run_cli({"run", "-o", path, "--format", "json", "--", "sh", "-c", "exit 5"});
    EXPECT_EQ(r.code, 5);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, "");
    std::ifstream in(path);
    std::stringstream content;
    content << in.rdbuf();
    ::unlink(path);
    const json j = json::parse(content.str());
    EXPECT_EQ(j["exit_code"], 5);
}

TEST(Run, OutputFileThatCannotBeOpened) {
    const auto r = run_cli({"run", "-o", "/nonexistent-dir/report", "--", "true"});
    EXPECT_EQ(r.code, 125);
    EXPECT_NE(r.err.find("cannot open"), std::string::npos);
}

TEST(Run, MissingProgramGives127AndAMessage) {
    const auto r = run_cli({"run", "--", "nosuch-proctimes-program"});
    EXPECT_EQ(r.code, 127);
    EXPECT_EQ(r.err, "proctimes: run: cannot execute 'nosuch-proctimes-program': No such file or directory\n");
    EXPECT_EQ(r.out, "");
}

TEST(Run, NoCommandIsAUsageError) {
    const auto r = run_cli({"run"});
    EXPECT_EQ(r.code, proctimes::cli::exit_usage);
}

TEST(Run, ThreadsEndWithTheirExitRecordsWherePermitted) {
    // As root, run --threads uses the kernel's exit records: every burner ends
    // with its final run time (it burned 100 ms of its own CPU clock), not a
    // last sample.
    proctimes::set_exit_records_enabled(true);
    if (auto why = proctimes::exit_records_status()) GTEST_SKIP() << "no exit records here: " << why.message();
    const auto r = run_cli({"run", "--threads", "--format", "json", "--", PROCTIMES_TEST_THREAD_BURNER, "2", "100"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.err);
    int burners = 0;
    for (const auto& t : j["threads"]) {
        if (t["name"].get<std::string>().rfind("burn-", 0) != 0) continue;
        ++burners;
        EXPECT_EQ(t["state"], "exited") << t;
        EXPECT_EQ(t["source"], "exit_record") << t;
        EXPECT_GE(t["kernel_ns"].get<std::int64_t>() + t["user_ns"].get<std::int64_t>(), 100'000'000) << t;
    }
    EXPECT_EQ(burners, 2) << r.err;
    const auto table = run_cli({"run", "--threads", "--", PROCTIMES_TEST_THREAD_BURNER, "1", "10"});
    EXPECT_NE(table.err.find("Exit records: in use."), std::string::npos) << table.err;
}

// The command as a program, with `assignment` in its environment: its
// standard error and output together.
std::string run_program_with(const std::string& assignment, const std::string& args) {
    const std::string cmd = assignment + " " + PROCTIMES_BIN + " " + args + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return "popen failed";
    std::string out;
    char buf[512];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ::pclose(p);
    return out;
}

// PROCTIMES_EXIT_RECORDS takes the same words as every on/off setting: with
// =yes, run --threads uses exit records (before, the command left them to the
// library, which read "yes" as unset and kept them off), with =no it does not.
TEST(Run, ExitRecordsVariableTakesYesAndNo) {
    proctimes::set_exit_records_enabled(true);
    if (auto why = proctimes::exit_records_status()) GTEST_SKIP() << "no exit records here: " << why.message();
    const std::string args = std::string("run --threads -- ") + PROCTIMES_TEST_THREAD_BURNER + " 1 10";
    for (const char* on : {"PROCTIMES_EXIT_RECORDS=yes", "PROCTIMES_EXIT_RECORDS=On"}) {
        const std::string out = run_program_with(on, args);
        EXPECT_NE(out.find("Exit records: in use."), std::string::npos) << on << "\n" << out;
    }
    const std::string off = run_program_with("PROCTIMES_EXIT_RECORDS=no", args);
    EXPECT_NE(off.find("Exit records: not in use ("), std::string::npos) << off;
}

TEST(Run, ThreadsAreListed) {
    const auto r = run_cli({"run", "--threads", "--format", "json", "--", PROCTIMES_TEST_THREAD_BURNER, "3", "150"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.err);
    ASSERT_TRUE(j["threads"].is_array());
    EXPECT_TRUE(j["thread_poll_interval_ns"].is_number_integer());
    EXPECT_GE(j["threads_unattributed_cpu_ns"].get<std::int64_t>(), 0);
    std::set<std::string> names;
    bool main_seen = false;
    for (const auto& t : j["threads"]) {
        EXPECT_EQ(t["pid"], j["pid"]);
        EXPECT_TRUE(t["tid"].is_number_integer());
        const std::string state = t["state"];
        EXPECT_TRUE(state == "exited" || state == "exited_partial") << state;
        EXPECT_GE(t["kernel_ns"].get<std::int64_t>(), 0);
        if (t["tid"] == j["pid"]) main_seen = true;
        names.insert(t["name"].get<std::string>());
        if (t["name"].get<std::string>().rfind("burn-", 0) == 0) {
            // Each burner used 150 ms; its last sample is normally at most one poll old.
            EXPECT_GT(t["kernel_ns"].get<std::int64_t>() + t["user_ns"].get<std::int64_t>(), 30'000'000) << t;
            EXPECT_FALSE(t["exit_time"].is_null());
        }
    }
    EXPECT_TRUE(main_seen);
    for (const char* n : {"burn-0", "burn-1", "burn-2"}) EXPECT_TRUE(names.count(n)) << n << "\n" << r.err;

    const auto table = run_cli({"run", "--threads", "--", PROCTIMES_TEST_THREAD_BURNER, "2", "30"});
    ASSERT_EQ(table.code, 0);
    EXPECT_NE(table.err.find("TID"), std::string::npos);
    EXPECT_NE(table.err.find("burn-1"), std::string::npos) << table.err;
    EXPECT_NE(table.err.find("not listed"), std::string::npos);
}

}  // namespace
