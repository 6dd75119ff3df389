// SPDX-License-Identifier: MIT
// How `proctimes run` (with and without --tree) meets the ends of the
// command's processes, run as a user runs it (the proctimes binary in a
// session of its own): a Ctrl-C to the whole process group, what each exit
// instant promises, a command that makes itself a tracee (PTRACE_TRACEME),
// an executable removed while it runs.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

struct temp_dir {
    fs::path path;
    temp_dir() {
        char t[] = "/tmp/proctimes-tree-end-XXXXXX";
        path = ::mkdtemp(t);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    [[nodiscard]] std::string operator/(const std::string& name) const { return (path / name).string(); }
};

json read_json(const std::string& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return json::parse(s.str(), nullptr, false);
}

// proctimes ARGS in a new session (so its own process group, as a shell
// with job control starts a command); its pid. Standard output and error
// go to /dev/null.
pid_t start_in_session(const std::vector<std::string>& args) {
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    ::setsid();
    // As a shell starts a foreground job: Ctrl-C and Ctrl-\ with their
    // default action, even when this test runs with them ignored (a
    // background job of a non-interactive shell).
    (void)std::signal(SIGINT, SIG_DFL);
    (void)std::signal(SIGQUIT, SIG_DFL);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> argv;
    std::string bin = PROCTIMES_BIN;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
}

// Its exit status as a shell gives it, or -1 when it had not ended by
// `limit` (then killed: a hang).
int wait_bounded(pid_t pid, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::this_thread::sleep_for(10ms);
    }
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    (void)::waitpid(pid, &status, 0);
    return -1;
}

// How many processes of session `sid` run a program called `comm`.
int count_in_session(pid_t sid, const std::string& comm) {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        std::ifstream f(e.path() / "stat");
        std::string text;
        if (!std::getline(f, text)) continue;
        const auto open = text.find('('), close = text.rfind(')');
        if (open == std::string::npos || close == std::string::npos) continue;
        std::istringstream rest(text.substr(close + 2));
        char state = 0;
        long ppid = 0, pgrp = 0, session = 0;
        rest >> state >> ppid >> pgrp >> session;
        n += session == sid && text.substr(open + 1, close - open - 1) == comm;
    }
    return n;
}

// Whether the bpf source loads here (root, kernel BTF, a build with eBPF):
// asked of proctimes once.
bool bpf_usable() {
    static const bool usable = [] {
        if (::geteuid() != 0) return false;
        temp_dir d;
        const std::string out = d / "probe.json";
        const pid_t pid =
            start_in_session({"run", "--tree", "--tree-source", "bpf", "-f", "json", "-o", out, "--", "true"});
        if (pid <= 0 || wait_bounded(pid, std::chrono::seconds{20}) != 0) return false;
        const json r = read_json(out);
        return r.is_object() && r["source"] == "bpf";
    }();
    return usable;
}

std::vector<std::string> sources() {
    std::vector<std::string> s{"ptrace"};
    if (bpf_usable()) s.emplace_back("bpf");
    return s;
}

// What docs/TREE.md promises of every process: one that outlived the command
// has no end; one seen ending has an exit with its source.
void expect_consistent(const json& p, const std::string& where) {
    if (p["outlived_command"].get<bool>()) {
        EXPECT_TRUE(p["exit_time"].is_null()) << where << p.dump();
        EXPECT_TRUE(p["signal"].is_null() && p["exit_code"].is_null()) << where << p.dump();
        EXPECT_FALSE(p["final_times"].get<bool>()) << where << p.dump();
    }
    if (!p["exit_time"].is_null()) {
        EXPECT_NE(p["exit_source"], "none") << where << p.dump();
    }
}

// A terminal's Ctrl-C reaches the whole foreground process group: the command
// and the children it forked all die of SIGINT, and each of those children
// ended (with the command, not after it): exit, status, final CPU.
TEST(TreeEnd, CtrlCToTheProcessGroupEndsEveryProcessNoneOutlived) {
    temp_dir d;
    for (const auto& source : sources()) {
        const int rounds = source == "bpf" ? 5 : 3;
        for (int round = 0; round < rounds; ++round) {
            const std::string where = source + " round " + std::to_string(round) + ": ";
            const std::string out = d / ("ctrl-c-" + source + std::to_string(round) + ".json");
            const pid_t pid = start_in_session({"run", "--tree", "--tree-source", source, "-f", "json", "-o", out, "--",
                                                "perl", "-e", "fork; fork; sleep 5"});
            ASSERT_GT(pid, 0);
            // Once the command and its three children run (at most 10 s on a loaded machine).
            for (int i = 0; i < 1000 && count_in_session(pid, "perl") < 4; ++i) std::this_thread::sleep_for(10ms);
            std::this_thread::sleep_for(100ms);
            ASSERT_EQ(::kill(-pid, SIGINT), 0);  // the process group: proctimes, perl and its children
            const int code = wait_bounded(pid, 20s);
            ASSERT_EQ(code, 130) << where << "proctimes' exit status (-1: it hung)";
            const json r = read_json(out);
            ASSERT_TRUE(r.is_object()) << where;
            ASSERT_EQ(r["source"], source) << where << r["source_note"];
            const auto& procs = r["processes"];
            ASSERT_EQ(procs.size(), 4u) << where << r.dump(1);
            EXPECT_EQ(procs[0]["signal"], SIGINT) << where;
            for (std::size_t i = 1; i < procs.size(); ++i) {
                const auto& p = procs[i];
                const std::string at = where + "process " + std::to_string(i) + ": ";
                expect_consistent(p, at);
                EXPECT_FALSE(p["outlived_command"].get<bool>()) << at << p.dump();
                EXPECT_FALSE(p["exit_time"].is_null()) << at << p.dump();
                EXPECT_EQ(p["signal"], SIGINT) << at << p.dump();
                // bpf: about one process in 700 gets no free event (docs/BPF.md).
                if (source == "ptrace") {
                    EXPECT_TRUE(p["final_times"].get<bool>()) << at << p.dump();
                }
            }
        }
    }
}

// Each exit instant says where it came from and how far the real end can be.
TEST(TreeEnd, EveryExitSaysWhatItPromises) {
    temp_dir d;
    for (const auto& source : sources()) {
        const std::string out = d / ("exits-" + source + ".json");
        const pid_t pid = start_in_session({"run", "--tree", "--tree-source", source, "-f", "json", "-o", out, "--",
                                            "sh", "-c", "sleep 0.1 & sleep 0.2 & wait"});
        ASSERT_EQ(wait_bounded(pid, 20s), 0) << source;
        const json r = read_json(out);
        ASSERT_TRUE(r.is_object()) << source;
        ASSERT_EQ(r["source"], source) << r["source_note"];
        const auto& procs = r["processes"];
        ASSERT_GE(procs.size(), 3u) << r.dump(1);
        for (std::size_t i = 1; i < procs.size(); ++i) {
            const auto& p = procs[i];
            const std::string at = source + " process " + std::to_string(i) + ": ";
            ASSERT_FALSE(p["exit_time"].is_null()) << at << p.dump();
            const auto wall = p["wall_ns"].get<std::int64_t>();
            const auto resolution = p["exit_resolution_ns"].get<std::int64_t>();
            if (source == "bpf") {
                // The kernel's own instants, to the ns.
                EXPECT_EQ(p["exit_source"], "bpf_exit") << at;
                EXPECT_EQ(resolution, 1) << at;
                EXPECT_EQ(p["creation_resolution_ns"], 1) << at;
            } else {
                // Stamped when the recorder found it ended: no later than the
                // end, and not exact.
                EXPECT_EQ(p["exit_source"], "observed") << at;
                EXPECT_GT(resolution, 0) << at;
                EXPECT_LE(resolution, wall) << at;
            }
        }
    }
}

// A program that expects a debugger makes itself the tracee of its parent
// (PTRACE_TRACEME), then execs: it stops at once in a SIGTRAP trace-stop
// that only its tracer, proctimes, can end.
TEST(TreeEnd, ACommandThatCallsPtraceTracemeDoesNotHangRun) {
    const std::vector<std::string> command{
        "/usr/bin/python3", "-c",
        "import ctypes, os; ctypes.CDLL(None).ptrace(0, 0, 0, 0); os.execv('/bin/sh', ['sh', '-c', 'exit 7'])"};
    std::vector<std::vector<std::string>> runs{
        {"run"}, {"run", "--threads"}, {"run", "--tree", "--tree-source", "ptrace"}};
    if (bpf_usable()) runs.push_back({"run", "--tree", "--tree-source", "bpf"});
    for (auto args : runs) {
        args.emplace_back("--");
        args.insert(args.end(), command.begin(), command.end());
        const pid_t pid = start_in_session(args);
        ASSERT_GT(pid, 0);
        EXPECT_EQ(wait_bounded(pid, 15s), 7)
            << args[1] << (args.size() > 2 ? " " + args[2] : "") << ": the command's status (-1: proctimes hung)";
    }
}

// An executable removed while it runs is still named by its path (the
// kernel's " (deleted)" is not part of it).
TEST(TreeEnd, ARemovedExecutableIsNamedByItsPath) {
    temp_dir d;
    const std::string victim = fs::canonical(d.path).string() + "/victim-sh";
    for (const auto& source : sources()) {
        fs::copy_file("/bin/sh", victim, fs::copy_options::overwrite_existing);
        fs::permissions(victim, fs::perms::owner_all);
        const std::string out = d / ("deleted-" + source + ".json");
        // It removes its own file at once, before the recorder looks at it.
        const pid_t pid = start_in_session({"run", "--tree", "--tree-source", source, "-f", "json", "-o", out, "--",
                                            victim, "-c", "rm -f \"$0\"; sleep 0.3", victim});
        ASSERT_EQ(wait_bounded(pid, 20s), 0) << source;
        EXPECT_FALSE(fs::exists(victim));
        const json r = read_json(out);
        ASSERT_TRUE(r.is_object()) << source;
        ASSERT_EQ(r["source"], source) << r["source_note"];
        const auto& programs = r["processes"][0]["programs"];
        ASSERT_FALSE(programs.empty()) << r.dump(1);
        EXPECT_EQ(programs[0]["executable"], victim) << source << ": " << programs.dump();
    }
}

// An orphan of the tree is reparented to proctimes (a child subreaper while it
// records), not to the command that still runs, nor to init.
TEST(TreeEnd, OrphansAreReparentedToProctimes) {
    temp_dir d;
    for (const auto& source : sources()) {
        const std::string parent = d / ("parent-" + source);
        // A subshell starts the orphan and exits at once; the command lives
        // on until the orphan has written its parent (10 s at most).
        std::string script = "( sh -c 'sleep 0.1; cut -d\" \" -f4 /proc/$$/stat > \"$0.new\"; mv \"$0.new\" \"$0\"' ";
        script += parent;
        script += " & ); i=0; while [ ! -s ";
        script += parent;
        script += " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done";
        const pid_t pid =
            start_in_session({"run", "--tree", "--tree-source", source, "-o", d / "report", "--", "sh", "-c", script});
        ASSERT_EQ(wait_bounded(pid, 20s), 0) << source;
        std::ifstream f(parent);
        long ppid = 0;
        f >> ppid;
        EXPECT_EQ(ppid, pid) << source << ": the orphan's parent";
    }
}

}  // namespace
