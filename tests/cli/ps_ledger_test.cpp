// SPDX-License-Identifier: MIT
// `proctimes ps --interval` and the CPU ledger: the ledger record in JSON and
// CSV (it closes: the terms add up to busy), --group-by sums, and 200 short
// processes born and reaped inside one interval — named in the frame as root
// (exit records), on their parent's children columns as an unprivileged user.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "burn.hpp"
#include "proctimes/ledger.hpp"
#include "run_cli.hpp"

namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using cli_testing::run_cli;

const std::string fixture_root = std::string(PROCTIMES_FIXTURES) + "/proc";

// The blocks of a frame: separated by blank lines.
std::vector<std::string> blocks(const std::string& out) {
    std::vector<std::string> v;
    for (std::size_t pos = 0; pos < out.size();) {
        const auto end = out.find("\n\n", pos);
        v.push_back(out.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
        if (end == std::string::npos) break;
        pos = end + 2;
    }
    return v;
}

void expect_closes(const json& l) {
    const std::int64_t sum = l["live_ns"].get<std::int64_t>() + l["ended_ns"].get<std::int64_t>() +
                             l["reaped_children_ns"].get<std::int64_t>() + l["irq_ns"].get<std::int64_t>() +
                             l["softirq_ns"].get<std::int64_t>() + l["steal_ns"].get<std::int64_t>() +
                             l["unattributed_ns"].get<std::int64_t>();
    EXPECT_EQ(sum, l["busy_ns"].get<std::int64_t>()) << l.dump();
}

// A parent ("pt_ledger_par") that runs `n` children ("pt_ledger_job", 20 ms
// of CPU each, eight at a time: on a loaded machine more of them
// share the CPUs), reaps them all, says so on `done`, and stays
// alive until `hold` is closed, so that the frame's second walk sees it.
pid_t start_jobs(int n, int done_fd, int hold_fd, int close_a, int close_b) {
    const pid_t parent = ::fork();
    if (parent != 0) return parent;
    // Only the test keeps `hold` open for writing: its close is the signal.
    ::close(close_a);
    ::close(close_b);
    ::prctl(PR_SET_NAME, "pt_ledger_par");
    int running = 0;
    for (int i = 0; i < n; ++i) {
        if (running == 8) {
            ::wait(nullptr);
            --running;
        }
        const pid_t c = ::fork();
        if (c == 0) {
            ::prctl(PR_SET_NAME, "pt_ledger_job");
            testing_helpers::burn_process_cpu(20ms);
            ::_exit(0);
        }
        if (c > 0) ++running;
    }
    while (running > 0 && ::wait(nullptr) > 0) --running;
    const char ok = 'd';
    (void)!::write(done_fd, &ok, 1);
    char c;
    while (::read(hold_fd, &c, 1) > 0) {
    }
    ::_exit(0);
}

struct child_run {
    int code = -1;
    std::string out;
};

// Starts `argv` with standard output on a pipe; returns its pid and the pipe.
pid_t spawn_out(const std::vector<std::string>& argv, int& out_fd) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(p[1], STDOUT_FILENO);
        std::vector<char*> a;
        a.reserve(argv.size() + 1);
        for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
        a.push_back(nullptr);
        ::execvp(a[0], a.data());
        ::_exit(127);
    }
    ::close(p[1]);
    out_fd = p[0];
    return pid;
}

child_run finish(pid_t pid, int out_fd) {
    child_run r;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(out_fd, buf, sizeof buf)) > 0) r.out.append(buf, static_cast<std::size_t>(n));
    ::close(out_fd);
    int st = 0;
    ::waitpid(pid, &st, 0);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

// 200 jobs inside one 40 s interval of `command`; returns the frame's records
// and ledger, and the parent's pid.
// nlohmann::json's destructor allocates (it flattens nested values onto a
// vector), which clang-tidy reports on this struct's implicit destructor.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct frame {
    json records, ledger;
    pid_t parent = 0;
    bool jobs_done_in_time = false;
};
frame jobs_in_one_interval(const std::vector<std::string>& command) {
    frame f;
    int out_fd = -1;
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t cli = spawn_out(command, out_fd);
    if (cli < 0) return f;
    // The first walk is done well within 2 s, even on a loaded machine.
    std::this_thread::sleep_for(2s);
    int done[2], hold[2];
    if (::pipe2(done, O_CLOEXEC) != 0 || ::pipe2(hold, O_CLOEXEC) != 0) return f;
    f.parent = start_jobs(200, done[1], hold[0], done[0], hold[1]);
    ::close(done[1]);
    ::close(hold[0]);
    char c;
    const bool done_ok = ::read(done[0], &c, 1) == 1;
    // The interval (40 s from the first walk) must still be running.
    f.jobs_done_in_time = done_ok && std::chrono::steady_clock::now() - t0 < 39s;
    const auto r = finish(cli, out_fd);
    ::close(hold[1]);
    ::close(done[0]);
    ::waitpid(f.parent, nullptr, 0);
    const auto b = blocks(r.out);
    if (b.size() >= 2) {
        f.records = json::parse(b[0], nullptr, false);
        f.ledger = json::parse(b.back(), nullptr, false);
    }
    return f;
}

}  // namespace

TEST(PsLedger, JsonAndCsvRecordsCloseOnTheLiveSystem) {
    // busy comes from /proc/stat, which counts in ticks: an idle machine can
    // pass 0.3 s without one busy tick. A thread here keeps one CPU busy.
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        while (!stop.load()) testing_helpers::burn_process_cpu(5ms);
    });
    const auto j = run_cli({"ps", "--interval", "0.3", "--count", "1", "--format", "json", "--ledger"});
    stop = true;
    busy.join();
    ASSERT_NE(j.code, proctimes::cli::exit_usage) << j.err;
    const auto b = blocks(j.out);
    ASSERT_EQ(b.size(), 2u) << j.out.substr(0, 300);
    const json arr = json::parse(b[0]);
    ASSERT_TRUE(arr.is_array());
    for (const auto& p : arr) ASSERT_TRUE(p.contains("interval_children_user_ns"));
    const json l = json::parse(b[1]);
    EXPECT_EQ(l["record"], "ledger");
    EXPECT_GE(l["interval_ns"].get<std::int64_t>(), 300'000'000);
    EXPECT_GE(l["cpus"].get<int>(), 1);
    // At least a third of the burner's CPU, even sharing two CPUs with two other busy loops.
    EXPECT_GE(l["busy_ns"].get<std::int64_t>(), 100'000'000) << l.dump();
    expect_closes(l);
    EXPECT_NEAR(l["busy_percent"].get<double>(), 100.0 * l["busy_ns"].get<double>() / l["capacity_ns"].get<double>(),
                1e-6);

    const auto c = run_cli({"ps", "--interval", "0.2", "--count", "1", "--format", "csv", "--ledger"});
    const auto cb = blocks(c.out);
    ASSERT_EQ(cb.size(), 2u);
    EXPECT_NE(cb[0].find(",basis,exit_source,interval_children_kernel_ns,interval_children_user_ns\n"),
              std::string::npos);
    std::istringstream lines(cb[1]);
    std::string head, row;
    std::getline(lines, head);
    std::getline(lines, row);
    EXPECT_EQ(head.rfind("record,interval_ns,", 0), 0u) << head;
    EXPECT_EQ(row.rfind("ledger,", 0), 0u) << row;
}

TEST(PsLedger, WithoutLedgerFramesAreAsBeforeAndTheTableAlwaysHasIt) {
    const auto j = run_cli({"ps", "--interval", "0.1", "--count", "1", "--format", "json"});
    const json arr = json::parse(j.out);  // one JSON value: the frame alone
    ASSERT_TRUE(arr.is_array());
    for (const auto& p : arr) EXPECT_FALSE(p.contains("interval_children_user_ns"));
    const auto t = run_cli({"ps", "--interval", "0.1", "--count", "1"});
    EXPECT_NE(t.out.find("CHILD"), std::string::npos);
    const auto at = t.out.find("\nledger: busy ");
    ASSERT_NE(at, std::string::npos) << t.out;
    std::istringstream rest(t.out.substr(at + 1));
    std::string line;
    while (std::getline(rest, line)) EXPECT_LE(line.size(), 80u) << line;
}

TEST(PsLedger, FixtureTreeHasNoLedgerAndSaysWhy) {
    // A captured tree: no exit records can match it, and it has no stat file.
    const auto r = run_cli(
        {"ps", "--proc-root", fixture_root, "--interval", "0.02", "--count", "1", "--format", "json", "--ledger"});
    const auto b = blocks(r.out);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(json::parse(b[0]).size(), 7u);
    const json l = json::parse(b[1]);
    EXPECT_EQ(l["record"], "ledger");
    EXPECT_TRUE(l.contains("error"));
    EXPECT_EQ(l["ended_source"], "none");
    EXPECT_EQ(l["ended_source_note"], "the snapshots are not of the live /proc");
}

TEST(PsLedger, GroupByNameAndUserSumTheRows) {
    const auto r = run_cli({"ps", "--proc-root", fixture_root, "--interval", "0.02", "--count", "1", "--format", "json",
                            "--group-by", "user"});
    const json groups = json::parse(blocks(r.out)[0]);
    std::size_t processes = 0;
    for (const auto& g : groups) {
        EXPECT_EQ(g["record"], "group");
        EXPECT_EQ(g["group_by"], "user");
        processes += g["processes"].get<std::size_t>();
        EXPECT_EQ(g["cpu_ns"].get<std::int64_t>(), g["interval_kernel_ns"].get<std::int64_t>() +
                                                       g["interval_user_ns"].get<std::int64_t>() +
                                                       g["interval_children_ns"].get<std::int64_t>());
    }
    EXPECT_EQ(processes, 7u) << "every process of the tree in one group";

    // On the live system: this process's busy thread lands in its name's group,
    // and the group holds at least what the process used.
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        volatile unsigned long sink = 0;
        while (!stop)
            for (int i = 0; i < 100'000; ++i) sink = sink + static_cast<unsigned long>(i);
    });
    const auto n = run_cli({"ps", "--interval", "0.3", "--count", "1", "--format", "json", "--group-by", "name"});
    stop = true;
    busy.join();
    char comm[17] = {};
    ::prctl(PR_GET_NAME, comm);
    bool found = false;
    for (const auto& g : json::parse(blocks(n.out)[0]))
        if (g["group"] == comm) {
            found = true;
            EXPECT_GE(g["processes"].get<int>(), 1);
            EXPECT_GT(g["cpu_ns"].get<std::int64_t>(), 0) << "a busy thread for 0.3 s";
        }
    EXPECT_TRUE(found) << comm;
}

TEST(PsLedger, GroupByCgroupComparesTheCgroupsOwnCounter) {
    const auto r =
        run_cli({"ps", "--interval", "0.5", "--count", "1", "--format", "json", "--group-by", "cgroup", "--ledger"});
    const auto b = blocks(r.out);
    ASSERT_GE(b.size(), 1u);
    const json groups = json::parse(b[0]);
    ASSERT_FALSE(groups.empty());
    bool any_counter = false;
    for (const auto& g : groups) {
        ASSERT_TRUE(g.contains("cgroup_usage_ns"));
        if (g["cgroup_usage_ns"].is_null()) continue;
        any_counter = true;
        EXPECT_GE(g["cgroup_usage_ns"].get<std::int64_t>(), 0);
        EXPECT_EQ(g["cgroup_minus_subtree_ns"].get<std::int64_t>(),
                  g["cgroup_usage_ns"].get<std::int64_t>() - g["subtree_cpu_ns"].get<std::int64_t>());
    }
    if (!any_counter) GTEST_SKIP() << "no cgroup counter is readable here";
}

TEST(PsLedger, TwoHundredShortProcessesAsRootAreNamedInTheFrame) {
    if (::geteuid() != 0) GTEST_SKIP() << "exit records need root";
    if (auto s = proctimes::exit_stream::open(); !s)
        GTEST_SKIP() << "the exit stream cannot open here: " << s.error().message();
    const auto f =
        jobs_in_one_interval({PROCTIMES_BIN, "ps", "--interval", "40", "--count", "1", "--format", "json", "--ledger"});
    ASSERT_TRUE(f.jobs_done_in_time) << "the 200 jobs did not end within the interval";
    ASSERT_TRUE(f.records.is_array()) << "no frame";
    int named = 0;
    for (const auto& p : f.records) {
        // (Another test may run its own jobs at the same time: ours are the parent's.)
        if (p["name"] != "pt_ledger_job" || p["state"] != "exited" || p["ppid"] != f.parent) continue;
        ++named;
        EXPECT_GE(p["kernel_ns"].get<std::int64_t>() + p["user_ns"].get<std::int64_t>(), 20'000'000) << p.dump();
        EXPECT_EQ(p["basis"], "ended");
        EXPECT_FALSE(p["exit_time"].is_null());
    }
    // Every end is named, or counted as lost by a source that counts its
    // losses exactly (eBPF: the kernel skips its free program for a few tasks
    // of a storm; docs/BPF.md).
    const auto& lost = f.ledger["records_lost_count"];
    const std::int64_t lost_n = lost.is_number() ? lost.get<std::int64_t>() : 0;
    EXPECT_LE(named, 200);
    EXPECT_GE(named + lost_n, 200) << named << " named, " << lost_n << " lost";
    if (!lost.is_number()) {
        EXPECT_EQ(named, 200) << "a source without a loss count must name every end";
    }
    EXPECT_EQ(f.ledger["ended_source"], "exit_stream");
    expect_closes(f.ledger);
}

TEST(PsLedger, TwoHundredShortProcessesUnprivilegedOnTheirParentsChildrenColumns) {
    if (::geteuid() != 0) GTEST_SKIP() << "the unprivileged run is started through setpriv, which needs root";
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0) GTEST_SKIP() << "setpriv (util-linux) is missing";
    if (std::system(("setpriv --reuid=nobody --regid=nogroup --clear-groups " + std::string(PROCTIMES_BIN) +
                     " --version >/dev/null 2>&1")
                        .c_str()) != 0)
        GTEST_SKIP() << "user nobody cannot run " << PROCTIMES_BIN << " (a directory on its path is closed to it)";
    const auto f =
        jobs_in_one_interval({"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", PROCTIMES_BIN, "ps",
                              "--interval", "40", "--count", "1", "--format", "json", "--ledger"});
    ASSERT_TRUE(f.jobs_done_in_time) << "the 200 jobs did not end within the interval";
    ASSERT_TRUE(f.records.is_array()) << "no frame";
    const json* parent = nullptr;
    for (const auto& p : f.records)
        if (p["pid"] == f.parent && p["state"] == "running") parent = &p;
    ASSERT_NE(parent, nullptr) << "the parent is alive in the second walk";
    EXPECT_EQ((*parent)["name"], "pt_ledger_par");
    const std::int64_t children = (*parent)["interval_children_kernel_ns"].get<std::int64_t>() +
                                  (*parent)["interval_children_user_ns"].get<std::int64_t>();
    // 200 × 20 ms = 4 s; at least 90 % of it, in 10 ms ticks.
    EXPECT_GE(children, 3'600'000'000LL);
    EXPECT_EQ(f.ledger["ended_source"], "none");
    EXPECT_GE(f.ledger["reaped_children_ns"].get<std::int64_t>(), 3'600'000'000LL);
    expect_closes(f.ledger);
}

// A thread that began and ended between the two walks of an interval is
// listed under its (running) process. Whether its life did fall inside the
// interval is known from clock samples: it began after the first walk when
// it began after (end of the command - interval), and ended before the
// second walk when it ended before (start of the command + interval). On a
// machine so loaded that the first walk comes late (the exit stream's eBPF
// programs load before it), an interval twice as long is tried, up to 16 s.
TEST(PsLedger, AThreadThatEndedIsListedUnderItsRunningProcess) {
    if (::geteuid() != 0) GTEST_SKIP() << "exit records need root";
    if (auto s = proctimes::exit_stream::open(); !s)
        GTEST_SKIP() << "the exit stream cannot open here: " << s.error().message();
    // FILETIME ticks of the system clock.
    const auto ft_now = [] {
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count() /
                                          100) +
               116'444'736'000'000'000ULL;
    };
    bool inside = false, done = false;
    for (int attempt = 0; attempt < 3 && !done; ++attempt) {
        const auto interval = std::chrono::seconds(4 << attempt);
        std::atomic<pid_t> tid{0};
        std::atomic<std::uint64_t> before_start{0}, after_end{0};
        std::thread later([&] {
            std::this_thread::sleep_for(interval / 2);  // after the first walk, normally
            before_start = ft_now();
            std::thread t([&] {
                ::pthread_setname_np(::pthread_self(), "pt-ended-thr");
                tid = static_cast<pid_t>(::gettid());
                timespec t0{}, t1{};
                ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
                volatile unsigned long sink = 0;
                do {
                    for (int i = 0; i < 10'000; ++i) sink = sink + static_cast<unsigned long>(i);
                    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
                } while ((t1.tv_sec - t0.tv_sec) * 1'000'000'000LL + (t1.tv_nsec - t0.tv_nsec) < 10'000'000);
            });
            t.join();
            after_end = ft_now();
        });
        const std::uint64_t launched = ft_now();
        const auto r = run_cli({"ps", "--interval", std::to_string(interval.count()), "--count", "1", "--threads",
                                "--format", "json", "--sort", "pid", "--ledger"});
        const std::uint64_t returned = ft_now();
        later.join();
        const auto b = blocks(r.out);
        ASSERT_EQ(b.size(), 2u) << r.err << r.out.substr(0, 300);
        const auto interval_ticks =
            static_cast<std::uint64_t>(json::parse(b[1])["interval_ns"].get<std::int64_t>() / 100);
        inside = before_start.load() > returned - interval_ticks && after_end.load() < launched + interval_ticks;
        if (!inside) {
            std::cout << "attempt " << attempt << ": the thread's life was not known to lie inside the "
                      << interval.count() << " s interval; trying a longer one\n";
            continue;
        }
        const json ledger = json::parse(b[1]);
        const json arr = json::parse(b[0]);
        const json* me = nullptr;
        for (const auto& p : arr)
            if (p["pid"] == ::getpid() && p["state"] == "running") me = &p;
        ASSERT_NE(me, nullptr);
        bool found = false;
        for (const auto& t : (*me)["threads"])
            if (t["tid"] == tid.load()) {
                found = true;
                EXPECT_EQ(t["name"], "pt-ended-thr");
                EXPECT_EQ(t["state"], "exited");
                EXPECT_GE(t["kernel_ns"].get<std::int64_t>() + t["user_ns"].get<std::int64_t>(), 10'000'000);
                if (t["source"] == "bpf_exit") {
                    // The eBPF stream: its exact creation and do_exit() instants,
                    // between clock samples taken around the thread's life (each
                    // floored to 100 ns).
                    const auto created = t["creation_filetime"].get<std::uint64_t>();
                    const auto ended = t["exit_filetime"].get<std::uint64_t>();
                    EXPECT_GE(created, before_start.load()) << t;
                    EXPECT_LE(created, ended) << t;
                    EXPECT_LE(ended, after_end.load()) << t;
                } else {
                    EXPECT_EQ(t["source"], "exit_record") << t;
                }
            }
        // The kernel skips its free program for about one end in 200-500
        // under load (docs/BPF.md, Losses); the stream counts such an end as
        // lost, and that try is repeated.
        const auto& lost = ledger["records_lost_count"];
        if (!found && lost.is_number() && lost.get<std::int64_t>() > 0) {
            std::cout << "attempt " << attempt << ": the thread is not listed and " << lost
                      << " ends were counted lost; trying again\n";
            continue;
        }
        EXPECT_TRUE(found) << "thread " << tid.load() << " that ended in the interval";
        done = true;
    }
    EXPECT_TRUE(inside) << "in none of three intervals (4, 8, 16 s) did the thread's life lie inside the interval";
    EXPECT_TRUE(done) << "in none of three tries was the thread's end delivered: each was counted lost";
}
