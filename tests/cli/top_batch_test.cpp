// SPDX-License-Identifier: MIT
// `proctimes top -b`: JSON frames (one object a line, the field names of
// `ps --interval --ledger --format json`), the table, -n, the options it
// refuses, and processes that start and end inside one interval — named with
// their exit status as root, on their parent's children columns as nobody.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "burn.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"
#include "run_cli.hpp"
#include "top/live_feed.hpp"

namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using cli_testing::run_cli;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) v.push_back(line);
    return v;
}

std::vector<std::string> keys(const nlohmann::ordered_json& o) {
    std::vector<std::string> k;
    for (auto it = o.begin(); it != o.end(); ++it) k.push_back(it.key());
    return k;
}

// This process's cgroup v2 path, from its "0::" line.
std::optional<std::string> own_cgroup_v2() {
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("0::", 0) == 0) return line.substr(3);
    return std::nullopt;
}

std::int64_t ns(const json& v) { return v.is_number() ? v.get<std::int64_t>() : 0; }

void expect_closes(const json& l) {
    EXPECT_EQ(ns(l["live_ns"]) + ns(l["ended_ns"]) + ns(l["reaped_children_ns"]) + ns(l["irq_ns"]) +
                  ns(l["softirq_ns"]) + ns(l["steal_ns"]) + ns(l["unattributed_ns"]),
              ns(l["busy_ns"]))
        << l.dump();
}

// Starts `argv` with standard output on a pipe.
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

struct child_run {
    int code = -1;
    std::string out;
};

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

// A child that burns CPU until killed, named `name`.
pid_t start_burner(const char* name) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_NAME, name);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;) testing_helpers::burn_process_cpu(100ms);
    }
    return pid;
}

// Under ThreadSanitizer (scripts/sanitize.sh sets PROCTIMES_SANITIZER), a
// child forked from this test carries the runtime's own thread beside its
// own: the thread counts below are exact only without it.
bool tsan_children() {
    const char* s = std::getenv("PROCTIMES_SANITIZER");
    return s != nullptr && std::string_view(s) == "tsan";
}

}  // namespace

TEST(TopBatch, JsonFramesOneALineAndAsManyAsAsked) {
    const auto r = run_cli({"top", "-b", "-n", "3", "-d", "0.2", "--format", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 3u) << r.out.substr(0, 500);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const json f = json::parse(lines[i]);
        EXPECT_EQ(f["record"], "frame");
        EXPECT_EQ(f["frame"].get<std::size_t>(), i + 1);
        EXPECT_GE(ns(f["interval_ns"]), 200'000'000);
        const auto cpus = f["cpus"].get<std::size_t>();
        EXPECT_GE(cpus, 1u);
        EXPECT_EQ(f["cpu_busy_percent"].size(), cpus);
        for (const auto& b : f["cpu_busy_percent"]) {
            EXPECT_GE(b.get<double>(), 0.0);
            EXPECT_LE(b.get<double>(), 100.0);
        }
        EXPECT_GE(f["busy_percent"].get<double>(), 0.0);
        EXPECT_LE(f["busy_percent"].get<double>(), 100.0);
        ASSERT_EQ(f["load"].size(), 3u);
        EXPECT_GT(f["memory_total_bytes"].get<std::uint64_t>(), 0u);
        EXPECT_LE(f["memory_available_bytes"].get<std::uint64_t>(), f["memory_total_bytes"].get<std::uint64_t>());
        EXPECT_GT(f["tasks"].get<std::size_t>(), 0u);
        EXPECT_FALSE(f["ended_source"].get<std::string>().empty());
        ASSERT_TRUE(f["ledger"].is_object());
        EXPECT_EQ(f["ledger"]["record"], "ledger");
        expect_closes(f["ledger"]);
        ASSERT_TRUE(f["processes"].is_array());
        EXPECT_FALSE(f["processes"].empty());
        // The rows show each attributed CPU-second once: their own CPU and
        // their children's add up to the ledger's live + ended + reaped
        // children.
        std::int64_t shown = 0;
        for (const auto& p : f["processes"])
            shown += ns(p["interval_kernel_ns"]) + ns(p["interval_user_ns"]) + ns(p["interval_children_kernel_ns"]) +
                     ns(p["interval_children_user_ns"]);
        const json& l = f["ledger"];
        EXPECT_EQ(shown, ns(l["live_ns"]) + ns(l["ended_ns"]) + ns(l["reaped_children_ns"])) << l.dump();
        bool self = false;
        for (const auto& p : f["processes"]) {
            if (p["pid"] != ::getpid()) continue;
            self = true;
            EXPECT_FALSE(p["ended"].get<bool>());
            if (const auto v2 = own_cgroup_v2()) {
                EXPECT_EQ(p["cgroup"], *v2);
            }
        }
        EXPECT_TRUE(self) << "this process is one of the rows";
    }
}

TEST(TopBatch, FieldNamesAreThoseOfPsIntervalRowsAndLedger) {
    const auto ps = run_cli({"ps", "--interval", "0.2", "--count", "1", "--format", "json", "--ledger"});
    ASSERT_EQ(ps.code, 0) << ps.err;
    const auto split = ps.out.find("\n\n");
    ASSERT_NE(split, std::string::npos);
    using ordered = nlohmann::ordered_json;  // the fields in the order written
    const ordered rows = ordered::parse(ps.out.substr(0, split));
    const ordered ledger = ordered::parse(ps.out.substr(split + 2));
    ASSERT_FALSE(rows.empty());
    const auto ps_row = keys(rows[0]);

    const auto top = run_cli({"top", "-b", "-n", "1", "-d", "0.2", "--format", "json"});
    ASSERT_EQ(top.code, 0) << top.err;
    const ordered f = ordered::parse(top.out);
    EXPECT_EQ(keys(f["ledger"]), keys(ledger));
    ASSERT_FALSE(f["processes"].empty());
    for (const auto& p : f["processes"]) {
        const auto k = keys(p);
        ASSERT_GE(k.size(), ps_row.size());
        EXPECT_EQ(std::vector<std::string>(k.begin(), k.begin() + static_cast<std::ptrdiff_t>(ps_row.size())), ps_row)
            << "the ps fields first, in ps's order";
        const std::vector<std::string> own(k.begin() + static_cast<std::ptrdiff_t>(ps_row.size()), k.end());
        EXPECT_EQ(
            own, (std::vector<std::string>{"ended", "exit_code", "exit_signal", "thread_count", "rss_bytes",
                                           "interval_read_bytes", "interval_write_bytes", "interval_voluntary_switches",
                                           "interval_involuntary_switches", "command", "cgroup"}));
    }
}

TEST(TopBatch, ABurningChildShowsItsIntervalCpu) {
    const pid_t child = start_burner("pt_top_burn");
    ASSERT_GT(child, 0);
    const auto r = run_cli({"top", "-b", "-n", "2", "-d", "0.5", "--format", "json", "-p", std::to_string(child)});
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 2u);
    std::int64_t shown = 0;
    for (const auto& line : lines) {
        const json f = json::parse(line);
        ASSERT_EQ(f["processes"].size(), 1u) << "-p keeps only the child";
        const json& p = f["processes"][0];
        EXPECT_EQ(p["pid"], child);
        EXPECT_EQ(p["name"], "pt_top_burn");
        EXPECT_FALSE(p["ended"].get<bool>());
        EXPECT_EQ(p["thread_count"], tsan_children() ? 2 : 1);
        EXPECT_GT(p["rss_bytes"].get<std::uint64_t>(), 0u);
        // Read since the frame before (the first walk's read), as I/O.
        EXPECT_TRUE(p["interval_voluntary_switches"].is_number()) << p.dump();
        EXPECT_TRUE(p["interval_involuntary_switches"].is_number());
        EXPECT_TRUE(p["interval_write_bytes"].is_number());
        EXPECT_EQ(p["cgroup"].get<std::string>().empty(), !own_cgroup_v2().has_value());
        const std::int64_t interval = ns(p["interval_ns"]);
        const std::int64_t cpu = ns(p["interval_kernel_ns"]) + ns(p["interval_user_ns"]);
        // One thread: at most the interval (and a tick of the totals' split);
        // on a 2-CPU machine with a load of 40, at least a fortieth of it.
        EXPECT_LE(cpu, interval + 10'000'000) << p.dump();
        EXPECT_GE(cpu, interval / 40) << p.dump();
        EXPECT_NEAR(p["cpu_percent"].get<double>(), 100.0 * static_cast<double>(cpu) / static_cast<double>(interval),
                    1e-6);
        shown += cpu;
        EXPECT_LE(shown, ns(p["kernel_ns"]) + ns(p["user_ns"])) << "the intervals add up to no more than its total";
    }
}

TEST(TopBatch, WithThreadsEachRowListsItsThreadsAsPsDoes) {
    std::atomic<bool> stop{false};
    std::thread worker([&] {
        while (!stop) testing_helpers::burn_thread_cpu(5ms);
    });
    const auto r =
        run_cli({"top", "-b", "-n", "1", "-d", "0.3", "-H", "--format", "json", "-p", std::to_string(::getpid())});
    stop = true;
    worker.join();
    ASSERT_EQ(r.code, 0) << r.err;
    const json f = json::parse(r.out);
    ASSERT_EQ(f["processes"].size(), 1u);
    const json& p = f["processes"][0];
    ASSERT_TRUE(p["threads"].is_array());
    EXPECT_GE(p["threads"].size(), 2u) << "the main thread and the worker";
    EXPECT_GE(p["thread_count"].get<std::size_t>(), 2u);
    std::int64_t threads_cpu = 0;
    for (const auto& t : p["threads"]) {
        EXPECT_EQ(t["pid"], ::getpid());
        EXPECT_TRUE(t["tid"].is_number());
        threads_cpu += ns(t["interval_kernel_ns"]) + ns(t["interval_user_ns"]);
    }
    EXPECT_GT(threads_cpu, 0) << "the worker burned CPU in the interval";
    // One "threads" key: the count has a name of its own.
    std::size_t keys_named_threads = 0;
    for (std::size_t at = r.out.find("\"threads\":"); at != std::string::npos; at = r.out.find("\"threads\":", at + 1))
        ++keys_named_threads;
    EXPECT_EQ(keys_named_threads, 1u);
}

TEST(TopBatch, TableHasTheHeaderTheLedgerLineAndAtMostTopRows) {
    const auto r = run_cli({"top", "-b", "-n", "2", "-d", "0.2", "--top", "4"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto lines = lines_of(r.out);
    int frames = 0, rows = 0;
    bool in_rows = false;
    for (const auto& l : lines) {
        if (l.rfind("proctimes top - ", 0) == 0) {
            ++frames;
            in_rows = false;
        } else if (l.find("PID") != std::string::npos && l.find("COMMAND") != std::string::npos) {
            in_rows = true;
        } else if (in_rows && !l.empty()) {
            ++rows;
        }
    }
    EXPECT_EQ(frames, 2);
    EXPECT_LE(rows, 8);
    EXPECT_GE(rows, 2);
    EXPECT_NE(r.out.find("Ledger: attributed "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("% (ended "), std::string::npos);
    EXPECT_NE(r.out.find("), unattributed "), std::string::npos);
    EXPECT_NE(r.out.find("\n\nproctimes top - "), std::string::npos) << "a blank line between frames";
}

TEST(TopBatch, NamesWithEscapeSequencesAndInvalidUtf8AreShownSafely) {
    // A name (comm) and a command line (argv[0] of sleep) full of bytes a
    // terminal would act on.
    const pid_t named = start_burner("ev\x1b[2Jil\xff");
    const pid_t argv0 = ::fork();
    if (argv0 == 0) {
        ::execl("/bin/sleep",
                "\x1b]0;title\x07"
                "ev\x9bil\xc3",
                "30", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ASSERT_GT(named, 0);
    ASSERT_GT(argv0, 0);
    // Until sleep has exec'd (its comm says so).
    for (int i = 0; i < 500; ++i) {
        std::ifstream comm("/proc/" + std::to_string(argv0) + "/comm");
        std::string name;
        std::getline(comm, name);
        if (name == "sleep") break;
        std::this_thread::sleep_for(10ms);
    }
    const std::string pids = std::to_string(named) + "," + std::to_string(argv0);
    const auto t = run_cli({"top", "-b", "-n", "1", "-d", "0.2", "-p", pids});
    const auto j = run_cli({"top", "-b", "-n", "1", "-d", "0.2", "-p", pids, "--format", "json"});
    ::kill(named, SIGKILL);
    ::kill(argv0, SIGKILL);
    ::waitpid(named, nullptr, 0);
    ::waitpid(argv0, nullptr, 0);
    ASSERT_EQ(t.code, 0) << t.err;
    for (const char bad : {'\x1b', '\x07', '\x9b', '\xff', '\xc3'}) {
        EXPECT_EQ(t.out.find(bad), std::string::npos)
            << "byte " << int(static_cast<unsigned char>(bad)) << ": " << t.out;
        EXPECT_EQ(j.out.find(bad), std::string::npos) << "JSON is pure ASCII";
    }
    EXPECT_NE(t.out.find("\\x1b]0;title\\x07ev\\x9bil\\xc3 30"), std::string::npos) << t.out;
    const json f = json::parse(j.out);
    ASSERT_EQ(f["processes"].size(), 2u);
    bool saw_name = false, saw_command = false;
    for (const auto& p : f["processes"]) {
        const auto name = p["name"].get<std::string>();
        const auto command = p["command"].get<std::string>();
        saw_name = saw_name || name.rfind("ev\x1b[2Jil", 0) == 0;
        saw_command = saw_command || command.rfind(
                                         "\x1b]0;title\x07"
                                         "ev",
                                         0) == 0;
    }
    EXPECT_TRUE(saw_name) << j.out;
    EXPECT_TRUE(saw_command) << j.out;
}

TEST(TopBatch, RefusesTheScreenWithoutATerminal) {
    const auto r = run_cli({"top"});
    EXPECT_EQ(r.code, proctimes::cli::exit_usage);
    EXPECT_EQ(r.err, "proctimes top: standard output is not a terminal; use -b for batch frames\n");
    EXPECT_TRUE(r.out.empty());
    int fd = -1;
    const pid_t pid = spawn_out({PROCTIMES_BIN, "top", "-d", "1"}, fd);
    ASSERT_GT(pid, 0);
    const auto c = finish(pid, fd);
    EXPECT_EQ(c.code, 2);
    EXPECT_TRUE(c.out.empty());
}

TEST(TopBatch, RefusesBadOptionsClearly) {
    for (const char* d : {"0", "0.05", "-1", "abc", "1e9", "nan", ""}) {
        const auto r = run_cli({"top", "-b", "-n", "1", "-d", d});
        EXPECT_EQ(r.code, proctimes::cli::exit_usage) << d;
        EXPECT_NE(r.err.find("--delay"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("0.1 s to 1 day"), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty());
    }
    const auto n0 = run_cli({"top", "-b", "-n", "0"});
    EXPECT_EQ(n0.code, proctimes::cli::exit_usage);
    const auto csv = run_cli({"top", "-b", "-n", "1", "--format", "csv"});
    EXPECT_EQ(csv.code, proctimes::cli::exit_usage);
    EXPECT_NE(csv.err.find("{table,json}"), std::string::npos) << csv.err;
    const auto pid = run_cli({"top", "-b", "-n", "1", "-p", "x1"});
    EXPECT_EQ(pid.code, proctimes::cli::exit_usage);
    EXPECT_NE(pid.err.find("'x1': not a process id"), std::string::npos) << pid.err;
    const auto user = run_cli({"top", "-b", "-n", "1", "-u", "no-such-user-pt"});
    EXPECT_EQ(user.code, proctimes::cli::exit_usage);
    EXPECT_NE(user.err.find("no such user"), std::string::npos);
    const auto n_alone = run_cli({"top", "-n", "2"});
    EXPECT_EQ(n_alone.code, proctimes::cli::exit_usage) << "-n needs -b";
}

namespace {

// A parent ("pt_top_par") that, once `go` is readable, runs a child
// ("pt_top_job": 60 ms of CPU, exit status 7) and one that SIGTERM ends
// ("pt_top_killed"), reaps them, says so on `done`
// and stays alive until `hold` is closed. `top` runs one interval of 6 s
// around it (its first walk is done within 2.5 s, even loading the eBPF
// programs on a loaded machine); returns the frame and the parent's pid.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ended_frame {
    json frame;
    pid_t parent = 0;
    bool in_time = false;
};
ended_frame job_inside_one_interval(const std::vector<std::string>& command) {
    ended_frame f;
    int out_fd = -1;
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t cli = spawn_out(command, out_fd);
    if (cli < 0) return f;
    std::this_thread::sleep_for(2500ms);  // its first walk
    int done[2], hold[2];
    if (::pipe2(done, O_CLOEXEC) != 0 || ::pipe2(hold, O_CLOEXEC) != 0) return f;
    f.parent = ::fork();
    if (f.parent == 0) {
        ::close(done[0]);
        ::close(hold[1]);
        ::prctl(PR_SET_NAME, "pt_top_par");
        const pid_t c = ::fork();
        if (c == 0) {
            ::prctl(PR_SET_NAME, "pt_top_job");
            testing_helpers::burn_process_cpu(60ms);
            ::_exit(7);
        }
        const pid_t killed = ::fork();
        if (killed == 0) {
            ::prctl(PR_SET_NAME, "pt_top_killed");
            testing_helpers::burn_process_cpu(10ms);
            ::raise(SIGTERM);
            ::_exit(0);
        }
        ::waitpid(c, nullptr, 0);
        ::waitpid(killed, nullptr, 0);
        const char ok = 'd';
        (void)!::write(done[1], &ok, 1);
        char ch;
        while (::read(hold[0], &ch, 1) > 0) {
        }
        ::_exit(0);
    }
    ::close(done[1]);
    ::close(hold[0]);
    char ch;
    f.in_time = ::read(done[0], &ch, 1) == 1 && std::chrono::steady_clock::now() - t0 < 5500ms;
    const auto r = finish(cli, out_fd);
    ::close(hold[1]);
    ::close(done[0]);
    ::waitpid(f.parent, nullptr, 0);
    f.frame = json::parse(r.out, nullptr, false);
    return f;
}

}  // namespace

TEST(TopBatch, AProcessThatEndedInsideTheIntervalIsARowWithItsExitStatusAsRoot) {
    if (::geteuid() != 0) GTEST_SKIP() << "exit records need root";
    if (auto s = proctimes::exit_stream::open(); !s)
        GTEST_SKIP() << "the exit stream cannot open here: " << s.error().message();
    const auto f = job_inside_one_interval({PROCTIMES_BIN, "top", "-b", "-n", "1", "-d", "6", "--format", "json"});
    ASSERT_TRUE(f.in_time) << "the job did not end within the interval";
    ASSERT_TRUE(f.frame.is_object()) << "no frame";
    EXPECT_EQ(f.frame["ledger"]["ended_source"], "exit_stream");
    const json* job = nullptr;
    for (const auto& p : f.frame["processes"])
        if (p["name"] == "pt_top_job" && p["ppid"] == f.parent) job = &p;
    ASSERT_NE(job, nullptr) << "the ended job is a row";
    EXPECT_TRUE((*job)["ended"].get<bool>());
    EXPECT_EQ((*job)["proc_state"], "X");
    EXPECT_EQ((*job)["basis"], "ended");
    EXPECT_EQ((*job)["exit_code"], 7);
    EXPECT_TRUE((*job)["exit_signal"].is_null());
    EXPECT_GE(ns((*job)["interval_kernel_ns"]) + ns((*job)["interval_user_ns"]), 60'000'000) << job->dump();
    const json* killed = nullptr;
    for (const auto& p : f.frame["processes"])
        if (p["name"] == "pt_top_killed" && p["ppid"] == f.parent) killed = &p;
    ASSERT_NE(killed, nullptr);
    EXPECT_TRUE((*killed)["ended"].get<bool>());
    EXPECT_EQ((*killed)["exit_signal"], SIGTERM);
    EXPECT_TRUE((*killed)["exit_code"].is_null());
    expect_closes(f.frame["ledger"]);
}

TEST(TopBatch, AProcessThatEndedInsideTheIntervalIsOnItsParentsChildrenColumnsUnprivileged) {
    if (::geteuid() != 0) GTEST_SKIP() << "the unprivileged run is started through setpriv, which needs root";
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0) GTEST_SKIP() << "setpriv (util-linux) is missing";
    const std::vector<std::string> nobody = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    if (std::system(("setpriv --reuid=65534 --regid=65534 --clear-groups " + std::string(PROCTIMES_BIN) +
                     " --version >/dev/null 2>&1")
                        .c_str()) != 0)
        GTEST_SKIP() << "user 65534 cannot run " << PROCTIMES_BIN;
    std::vector<std::string> cmd = nobody;
    for (const char* a : {PROCTIMES_BIN, "top", "-b", "-n", "1", "-d", "6", "--format", "json"}) cmd.emplace_back(a);
    const auto f = job_inside_one_interval(cmd);
    ASSERT_TRUE(f.in_time) << "the job did not end within the interval";
    ASSERT_TRUE(f.frame.is_object()) << "no frame";
    EXPECT_EQ(f.frame["ledger"]["ended_source"], "none");
    EXPECT_EQ(f.frame["ended_source"], "children accounting (unprivileged)");
    const json* parent = nullptr;
    for (const auto& p : f.frame["processes"]) {
        EXPECT_FALSE((p["name"] == "pt_top_job" || p["name"] == "pt_top_killed") && p["ppid"] == f.parent)
            << "no exit stream: the jobs are not named";
        if (p["pid"] == f.parent) parent = &p;
    }
    ASSERT_NE(parent, nullptr) << "the parent is alive in the second walk";
    EXPECT_EQ((*parent)["name"], "pt_top_par");
    EXPECT_FALSE((*parent)["ended"].get<bool>());
    // 60 ms in 10 ms ticks: at least 50 ms.
    EXPECT_GE(ns((*parent)["interval_children_kernel_ns"]) + ns((*parent)["interval_children_user_ns"]), 50'000'000)
        << parent->dump();
    EXPECT_GE(ns(f.frame["ledger"]["reaped_children_ns"]), 50'000'000);
    expect_closes(f.frame["ledger"]);
}

// A caller that waits on its own (the screen): it polls wait_handle(), calls
// pump() when records come, and then asks next() for a frame whose interval
// is over; the process that ended while it waited is in that frame.
TEST(TopLiveFeed, AnEventLoopPumpsExitRecordsAndTakesTheFrameItself) {
    if (::geteuid() != 0) GTEST_SKIP() << "exit records need root";
    if (auto s = proctimes::exit_stream::open(); !s)
        GTEST_SKIP() << "the exit stream cannot open here: " << s.error().message();
    auto feed = proctimes::cli::top::open_live_feed({});
    ASSERT_TRUE(feed) << feed.error().message();
    auto first = (*feed)->next(0ms);
    ASSERT_TRUE(first) << first.error().message();
    EXPECT_EQ(first->number, 1u);
    EXPECT_EQ(first->interval.count(), 0);
    EXPECT_FALSE(first->ledger);
    const int handle = (*feed)->wait_handle();
    ASSERT_GE(handle, 0) << "the exit stream's descriptor";

    const pid_t child = ::fork();
    if (child == 0) {
        ::prctl(PR_SET_NAME, "pt_top_pumped");
        ::_exit(3);
    }
    ASSERT_GT(child, 0);
    ::waitpid(child, nullptr, 0);
    bool readable = false;
    for (int i = 0; i < 50 && !readable; ++i) {
        pollfd p{handle, POLLIN, 0};
        readable = ::poll(&p, 1, 100) == 1;
        (*feed)->pump();
    }
    EXPECT_TRUE(readable) << "records came within 5 s";
    std::this_thread::sleep_for(200ms);
    auto f = (*feed)->next(100ms);  // over already: no wait
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->number, 2u);
    EXPECT_GE(f->interval, 200ms);
    ASSERT_TRUE(f->ledger);
    const proctimes::cli::top::top_row* row = nullptr;
    for (const auto& r : f->rows)
        if (r.pid == child) row = &r;
    ASSERT_NE(row, nullptr) << "the child that ended while the loop waited";
    EXPECT_TRUE(row->ended);
    EXPECT_EQ(row->name, "pt_top_pumped");
    EXPECT_EQ(row->exit_code, 3);
    EXPECT_EQ(row->state, 'X');
}

// A process first listed between its fork and its exec shows its parent's
// command line then; once it runs its own program (a new name), its row
// carries that program's command line, read again.
TEST(TopLiveFeed, ACommandLineReadBeforeAnExecIsReadAgainAfterIt) {
    int go[2];
    ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(go[1]);
        char ch;
        (void)!::read(go[0], &ch, 1);
        ::execl("/bin/sleep", "sleep", "30.5", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ASSERT_GT(child, 0);
    ::close(go[0]);
    struct reap {
        pid_t pid;
        ~reap() {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    } guard{child};
    auto feed = proctimes::cli::top::open_live_feed({});
    ASSERT_TRUE(feed) << feed.error().message();
    auto row_of = [&](const proctimes::cli::top::top_frame& f) -> const proctimes::cli::top::top_row* {
        for (const auto& r : f.rows)
            if (r.pid == child) return &r;
        return nullptr;
    };
    auto first = (*feed)->next(0ms);
    ASSERT_TRUE(first) << first.error().message();
    auto second = (*feed)->next(100ms);  // the first frame with rows' resources
    ASSERT_TRUE(second) << second.error().message();
    const auto* before = row_of(*second);
    ASSERT_NE(before, nullptr);
    EXPECT_EQ(before->command.find("sleep 30.5"), std::string::npos) << "not exec'd yet: " << before->command;
    (void)!::write(go[1], "g", 1);
    ::close(go[1]);
    bool execd = false;
    for (int i = 0; i < 100 && !execd; ++i) {
        std::this_thread::sleep_for(20ms);
        std::ifstream comm("/proc/" + std::to_string(child) + "/comm");
        std::string name;
        execd = std::getline(comm, name) && name == "sleep";
    }
    ASSERT_TRUE(execd) << "the child ran sleep within 2 s";
    auto third = (*feed)->next(100ms);
    ASSERT_TRUE(third) << third.error().message();
    const auto* after = row_of(*third);
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->name, "sleep");
    EXPECT_EQ(after->command, "sleep 30.5");
}

// A process that gave itself another name after it was listed, then ended in
// the interval: its ended row names it as it was at its end.
TEST(TopLiveFeed, AnEndedRowCarriesTheNameTheProcessEndedWith) {
    if (::geteuid() != 0) GTEST_SKIP() << "exit records need root";
    if (auto s = proctimes::exit_stream::open(); !s)
        GTEST_SKIP() << "the exit stream cannot open here: " << s.error().message();
    int go[2];
    ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(go[1]);
        ::prctl(PR_SET_NAME, "pt_old_name");
        char ch;
        (void)!::read(go[0], &ch, 1);
        ::prctl(PR_SET_NAME, "pt_new_name");
        ::_exit(4);
    }
    ASSERT_GT(child, 0);
    ::close(go[0]);
    auto feed = proctimes::cli::top::open_live_feed({});
    ASSERT_TRUE(feed) << feed.error().message();
    auto first = (*feed)->next(0ms);
    ASSERT_TRUE(first) << first.error().message();
    auto second = (*feed)->next(100ms);
    ASSERT_TRUE(second) << second.error().message();
    bool listed = false;
    for (const auto& r : second->rows) listed = listed || (r.pid == child && r.name == "pt_old_name");
    (void)!::write(go[1], "g", 1);
    ::close(go[1]);
    ::waitpid(child, nullptr, 0);
    ASSERT_TRUE(listed) << "the child was listed under its first name";
    std::this_thread::sleep_for(200ms);
    auto third = (*feed)->next(100ms);
    ASSERT_TRUE(third) << third.error().message();
    const proctimes::cli::top::top_row* row = nullptr;
    for (const auto& r : third->rows)
        if (r.pid == child) row = &r;
    ASSERT_NE(row, nullptr);
    EXPECT_TRUE(row->ended);
    EXPECT_EQ(row->name, "pt_new_name");
    EXPECT_EQ(row->exit_code, 4);
}

// With threads, the view reads every task through the eBPF walk where it can
// be used: one pass, 1 ns totals for threads too; the /proc walk's copy of
// idle threads would keep it on /proc at more than twice the cost.
TEST(TopLiveFeed, ThreadsComeFromTheEbpfWalkWhereItCanBeUsed) {
    if (const auto st = proctimes::bpf_snapshot_status(); !st.usable)
        GTEST_SKIP() << "the eBPF walk cannot be used here: " << st.reason;
    std::atomic<bool> stop{false};
    std::thread worker([&] {
        while (!stop) std::this_thread::sleep_for(1ms);
    });
    proctimes::cli::top::live_options lo;
    lo.threads = true;
    lo.pids = {::getpid()};
    auto feed = proctimes::cli::top::open_live_feed(lo);
    ASSERT_TRUE(feed) << feed.error().message();
    for (int n = 0; n < 3; ++n) {
        auto f = (*feed)->next(n == 0 ? 0ms : 50ms);
        ASSERT_TRUE(f) << f.error().message();
        ASSERT_EQ(f->rows.size(), 1u) << "frame " << f->number;
        const auto& me = f->rows[0];
        EXPECT_EQ(me.source, proctimes::cpu_source::bpf_task) << "frame " << f->number;
        EXPECT_GE(me.thread_rows.size(), 2u) << "frame " << f->number;
        for (const auto& t : me.thread_rows)
            EXPECT_EQ(t.source, proctimes::cpu_source::bpf_task)
                << "thread " << t.tid.value_or(0) << ", frame " << f->number;
    }
    stop = true;
    worker.join();
}
