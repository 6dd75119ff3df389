// SPDX-License-Identifier: MIT
// proctimes::run_tree (tree.hpp): every process of a command's tree, at any
// depth, with its programs, its end and its own final CPU; signals passed on
// as untraced; and the fallback when ptrace is refused. The tree tests run
// as root and as nobody, each in a forked child (the recorder makes the
// process a child subreaper while it runs).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "in_child.hpp"
#include "proctimes/tree.hpp"
#include "tree_check.hpp"

namespace {

using namespace std::chrono;
using proctimes::process_tree;
using proctimes::tree_process;

const std::string burner = PROCTIMES_CPU_BURNER;
const std::string threads_helper = PROCTIMES_TREE_THREADS;

// The processes whose last program is `argv` exactly.
std::vector<const tree_process*> running(const process_tree& t, const std::vector<std::string>& argv) {
    std::vector<const tree_process*> out;
    for (const auto& p : t.processes)
        if (p.programs.back().argv == argv) out.push_back(&p);
    return out;
}

// Shell text that waits (at most 20 s) until process PID runs the burner,
// not the shell it was forked as: a signal sent before its exec would find
// the shell, and on a busy machine the exec can come long after the fork.
std::string wait_for_exec(const std::string& pid) {
    return "b=$(readlink -f " + burner + "); i=0; while [ \"$(readlink /proc/" + pid +
           "/exe)\" != \"$b\" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; ";
}

const tree_process& parent_of(const process_tree& t, const tree_process& p) {
    return t.processes.at(static_cast<std::size_t>(p.parent_index));
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The threads a helper program has beyond its own: ThreadSanitizer starts one
// of its own in every program built with it (scripts/sanitize.sh).
std::uint32_t sanitizer_threads() {
    const char* san = std::getenv("PROCTIMES_SANITIZER");
    return san && std::string_view(san) == "tsan" ? 1 : 0;
}

// The body, as root or (as_nobody) as user nobody, in a forked child.
void in_child_as(bool as_nobody, const std::function<std::string()>& body) {
    auto o = test_in_child::run([&]() -> std::string {
        // A process that changed its user ids is not dumpable, so not
        // traceable, until it execs: as nobody's own login shell would be.
        if (as_nobody && (::setgid(65534) != 0 || ::setuid(65534) != 0 || ::prctl(PR_SET_DUMPABLE, 1) != 0))
            return "cannot become nobody";
        // The helper programs are built with the sanitizers too
        // (scripts/sanitize.sh), and LeakSanitizer cannot stop the world of a
        // traced process: it ends them with an error instead of their own
        // status. Their leaks are checked where they run untraced.
        if (const char* san = std::getenv("PROCTIMES_SANITIZER"); san && *san) {
            const char* asan = std::getenv("ASAN_OPTIONS");
            const std::string opts = std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "detect_leaks=0";
            ::setenv("ASAN_OPTIONS", opts.c_str(), 1);
        }
        return body();
    });
    EXPECT_TRUE(o.ok()) << o.why();
}

// A command three shells deep with an exec chain at the bottom, a child of
// four threads, two double-forked orphans (one ends before the command, one
// outlives it) and a child killed by SIGKILL.
std::string shell_tree(proctimes::tree_source prefer) {
    const std::string d = tree_check::scratch_dir();
    if (d.empty()) return "no scratch directory";
    write_file(d + "/level3.sh", "exec " + burner + " 30 3\n");
    write_file(d + "/level2.sh", "/bin/sh " + d + "/level3.sh\nexit 0\n");
    write_file(d + "/level1.sh", burner + " 20 0\n/bin/sh " + d + "/level2.sh\n" + threads_helper + " 3 30\n( " +
                                     burner + " 0 0 0 100 & )\n( " + burner + " 0 0 0 4000 & )\n" + burner +
                                     " 0 0 0 20000 & " + burner + " 0 0 0 200; " + wait_for_exec("$!") +
                                     "kill -9 $!; wait $! 2>/dev/null\n" + burner + " 0 0 0 700\nexit 4\n");
    const auto before = steady_clock::now();
    auto r = proctimes::run_tree({.argv = {"/bin/sh", d + "/level1.sh"}}, {.prefer = prefer});
    if (!r) return "run_tree: " + r.error().message();
    const auto& t = r->tree;
    const std::string dump = "\n" + tree_check::describe(t);
    if (steady_clock::now() - before > seconds{15}) return "waited for the outliving orphan" + dump;
    if (auto s = tree_check::source(t, prefer); !s.empty()) return s + dump;
    if (auto s = tree_check::structure(t, t.processes[0].pid); !s.empty()) return s + dump;
    if (auto s = tree_check::accounting(t, milliseconds{5}); !s.empty()) return s + dump;

    const auto& cmd = t.processes[0];
    if (!r->command.status || r->command.status->code != 4 || cmd.status != r->command.status)
        return "command status" + dump;
    if (cmd.programs.size() != 1 || cmd.programs[0].argv != std::vector<std::string>{"/bin/sh", d + "/level1.sh"})
        return "command program" + dump;

    auto b20 = running(t, {burner, "20", "0"});
    if (b20.size() != 1 || b20[0]->parent_index != 0 || !b20[0]->final_times || b20[0]->cpu() < milliseconds{20} ||
        !b20[0]->status || b20[0]->status->code != 0)
        return "burner 20" + dump;

    // The exec chain: forked as level2's shell, then the shell of level3, then the burner.
    auto deep = running(t, {burner, "30", "3"});
    if (deep.size() != 1) return "level 3" + dump;
    const auto& l3 = *deep[0];
    if (l3.programs.size() != 3 || l3.programs[0].argv != std::vector<std::string>{"/bin/sh", d + "/level2.sh"} ||
        l3.programs[1].argv != std::vector<std::string>{"/bin/sh", d + "/level3.sh"} ||
        l3.programs[2].executable != burner || !l3.status || l3.status->code != 3 || l3.cpu() < milliseconds{30})
        return "level 3's programs or status" + dump;
    const auto& l2 = parent_of(t, l3);
    if (l2.programs.back().argv != std::vector<std::string>{"/bin/sh", d + "/level2.sh"} || l2.parent_index != 0 ||
        !l2.status || l2.status->code != 0)
        return "level 2" + dump;

    auto th = running(t, {threads_helper, "3", "30"});
    if (th.size() != 1 || th[0]->threads != 4 + sanitizer_threads() || th[0]->cpu() < milliseconds{90} ||
        th[0]->parent_index != 0)
        return "the threaded child" + dump;

    auto early = running(t, {burner, "0", "0", "0", "100"});
    if (early.size() != 1 || !early[0]->exited || !early[0]->status || early[0]->status->code != 0 ||
        !early[0]->final_times || early[0]->outlived_command || parent_of(t, *early[0]).parent_index != 0)
        return "the orphan that ended first" + dump;
    auto late = running(t, {burner, "0", "0", "0", "4000"});
    if (late.size() != 1 || !late[0]->outlived_command || late[0]->exited || late[0]->status || late[0]->final_times ||
        parent_of(t, *late[0]).parent_index != 0)
        return "the orphan that outlived the command" + dump;
    ::kill(late[0]->pid, SIGKILL);

    auto killed = running(t, {burner, "0", "0", "0", "20000"});
    if (killed.size() != 1 || !killed[0]->status || killed[0]->status->signal != SIGKILL)
        return "the killed child" + dump;

    // Every child its parent waited for ended before its parent did.
    for (const auto& p : t.processes) {
        if (p.parent_index < 0 || &p == early[0] || &p == late[0]) continue;
        const auto& up = parent_of(t, p);
        if (!p.exited || !up.exited || *p.exited > *up.exited) return "a child outlives its parent" + dump;
    }
    return "";
}

using proctimes::tree_source;

TEST(Tree, ShellTreeAsRoot) {
    in_child_as(false, [] { return shell_tree(tree_source::ptrace); });
}
TEST(Tree, ShellTreeAsNobody) {
    in_child_as(true, [] { return shell_tree(tree_source::ptrace); });
}
TEST(Tree, ShellTreeBpfAsRoot) {
    in_child_as(false, [] { return shell_tree(tree_source::bpf); });
}
// Not permitted: ptrace stands in, and the note says why.
TEST(Tree, ShellTreeBpfAsNobody) {
    in_child_as(true, [] { return shell_tree(tree_source::bpf); });
}

// Signals reach the command as untraced: a handled signal runs its handler,
// a stopped child stays stopped until continued, and an exec from a thread
// other than the main one keeps the process.
std::string signals_and_exec(proctimes::tree_source prefer) {
    auto r = proctimes::run_tree({.argv = {"/bin/sh", "-c", "trap 'exit 5' USR1; kill -USR1 $$; sleep 5; exit 1"}},
                                 {.prefer = prefer});
    if (!r) return "run_tree: " + r.error().message();
    if (!r->command.status || r->command.status->code != 5) return "handled signal\n" + tree_check::describe(r->tree);
    if (auto s = tree_check::source(r->tree, prefer); !s.empty()) return s + "\n" + tree_check::describe(r->tree);

    // A child stopped by SIGSTOP stays stopped (a group-stop, not resumed by
    // the recorder) until SIGCONT: it sleeps 300 ms, and is still stopped
    // 500 ms after it was first seen stopped.
    const std::string state = "$(cut -d' ' -f3 /proc/$p/stat)";
    const std::string stop = burner + " 0 0 0 300 & p=$!; " + wait_for_exec("$p") + "kill -STOP $p; i=0; " +
                             "while [ $i -lt 400 ]; do case " + state + " in [Tt]) break;; esac; " +
                             "sleep 0.05; i=$((i+1)); done; sleep 0.5; s=" + state +
                             "; kill -CONT $p; wait $p; r=$?; case $s in [Tt]) exit $r;; *) exit 9;; esac";
    r = proctimes::run_tree({.argv = {"/bin/sh", "-c", stop}}, {.prefer = prefer});
    if (!r) return "run_tree: " + r.error().message();
    if (!r->command.status || r->command.status->code != 0) return "group-stop\n" + tree_check::describe(r->tree);

    r = proctimes::run_tree({.argv = {threads_helper, "exec", "/bin/sh", "-c", "exit 6"}}, {.prefer = prefer});
    if (!r) return "run_tree: " + r.error().message();
    const auto& t = r->tree;
    const auto& cmd = t.processes[0];
    if (!r->command.status || r->command.status->code != 6 || t.processes.size() != 1 ||
        cmd.threads != 2 + sanitizer_threads() || cmd.programs.size() != 2 ||
        cmd.programs[1].argv != std::vector<std::string>{"/bin/sh", "-c", "exit 6"})
        return "exec from a thread\n" + tree_check::describe(t);
    return "";
}

TEST(Tree, SignalsAndExecFromAThreadAsRoot) {
    in_child_as(false, [] { return signals_and_exec(tree_source::ptrace); });
}
TEST(Tree, SignalsAndExecFromAThreadAsNobody) {
    in_child_as(true, [] { return signals_and_exec(tree_source::ptrace); });
}
TEST(Tree, SignalsAndExecFromAThreadBpfAsRoot) {
    in_child_as(false, [] { return signals_and_exec(tree_source::bpf); });
}

// A double-forked orphan stopped by SIGSTOP when the command ends is let go
// still stopped (its group-stop kept through the detach), in bounded time.
std::string stopped_orphan(proctimes::tree_source prefer) {
    const std::string d = tree_check::scratch_dir();
    if (d.empty()) return "no scratch directory";
    // Stopped once it runs the burner: a child stopped between its fork and
    // its exec (a busy machine) would never become the burner.
    const std::string script = "( " + burner + " 0 0 0 20000 & echo $! > " + d + "/pid ); p=$(cat " + d + "/pid); " +
                               wait_for_exec("$p") + "kill -STOP $p; i=0; while [ $i -lt 400 ]; do " +
                               "case $(cut -d' ' -f3 /proc/$p/stat) in [Tt]) exit 0;; esac; sleep 0.05; " +
                               "i=$((i+1)); done; exit 9";
    // However the check ends, the stopped orphan does not outlive it: it
    // would hold the test's output open, and the test runner would wait.
    struct killer {
        std::string file;
        ~killer() {
            std::ifstream in(file);
            pid_t pid = 0;
            if (in >> pid && pid > 1) ::kill(pid, SIGKILL);
        }
    } const kill_orphan{d + "/pid"};
    const auto before = steady_clock::now();
    auto r = proctimes::run_tree({.argv = {"/bin/sh", "-c", script}}, {.prefer = prefer});
    if (!r) return "run_tree: " + r.error().message();
    const std::string dump = "\n" + tree_check::describe(r->tree);
    if (auto s = tree_check::source(r->tree, prefer); !s.empty()) return s + dump;
    auto orphan = running(r->tree, {burner, "0", "0", "0", "20000"});
    if (orphan.size() != 1) return "the orphan" + dump;
    const pid_t pid = orphan[0]->pid;
    // Let go, it wakes to enter its group-stop again by itself (briefly R):
    // stopped within a bound, and still stopped a while later.
    auto state = [pid] {
        std::string s;
        std::ifstream("/proc/" + std::to_string(pid) + "/stat") >> s >> s >> s;  // pid (comm) state
        return s;
    };
    std::string stat = state();
    for (int i = 0; i < 100 && stat != "T"; ++i) {
        ::usleep(50'000);
        stat = state();
    }
    ::usleep(300'000);
    if (stat == "T") stat = state();
    ::kill(pid, SIGKILL);
    if (steady_clock::now() - before > seconds{15}) return "too slow" + dump;
    if (!r->command.status || r->command.status->code != 0) return "the command" + dump;
    if (!orphan[0]->outlived_command || orphan[0]->exited) return "not outlived" + dump;
    if (stat != "T") return "the orphan's state after the recording: " + stat + dump;
    return "";
}

TEST(Tree, AStoppedOrphanIsLetGoStoppedAsRoot) {
    in_child_as(false, [] { return stopped_orphan(tree_source::ptrace); });
}
TEST(Tree, AStoppedOrphanIsLetGoStoppedAsNobody) {
    in_child_as(true, [] { return stopped_orphan(tree_source::ptrace); });
}
TEST(Tree, AStoppedOrphanIsLeftStoppedBpfAsRoot) {
    in_child_as(false, [] { return stopped_orphan(tree_source::bpf); });
}

// ptrace refused (a seccomp filter answers EPERM): source none, the reason,
// the command alone with its wait rusage, no hang, subreaper untouched.
std::string refused() {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(std::size(filter)), filter};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return "cannot install the seccomp filter";
    const auto before = steady_clock::now();
    auto r = proctimes::run_tree({.argv = {"/bin/sh", "-c", burner + " 30 0; ( " + burner + " 0 0 0 50 & ); exit 7"}},
                                 {.prefer = tree_source::ptrace});
    if (!r) return "run_tree: " + r.error().message();
    const auto& t = r->tree;
    const std::string dump = "\n" + tree_check::describe(t);
    if (steady_clock::now() - before > seconds{20}) return "too slow" + dump;
    if (t.source != proctimes::tree_source::none) return "not source none" + dump;
    if (t.source_note.find("ptrace: Operation not permitted") == std::string::npos) return "note" + dump;
    if (t.processes.size() != 1 || !t.processes[0].status || t.processes[0].status->code != 7) return "command" + dump;
    if (t.processes[0].programs.empty() || t.processes[0].programs[0].argv.at(0) != "/bin/sh") return "program" + dump;
    const auto& e = r->command;
    if (t.rusage_cpu != e.times.cpu() + e.children_kernel + e.children_user || t.rusage_cpu < milliseconds{30})
        return "rusage" + dump;
    if (t.unaccounted_cpu != e.children_kernel + e.children_user) return "unaccounted" + dump;
    int reaper = -1;
    if (::prctl(PR_GET_CHILD_SUBREAPER, &reaper) != 0 || reaper != 0) return "subreaper set";
    return "";
}

TEST(Tree, PtraceRefusedFallsBackAsRoot) { in_child_as(false, refused); }
TEST(Tree, PtraceRefusedFallsBackAsNobody) { in_child_as(true, refused); }

TEST(Tree, SubreaperSettingIsRestored) {
    auto o = test_in_child::run([]() -> std::string {
        for (int round = 0; round < 4; ++round) {
            // ptrace, then bpf (or ptrace standing in for it).
            const auto prefer = round < 2 ? tree_source::ptrace : tree_source::bpf;
            const int before = round % 2;
            if (::prctl(PR_SET_CHILD_SUBREAPER, before) != 0) return "prctl";
            auto r = proctimes::run_tree({.argv = {"/bin/sh", "-c", "(sleep 0.1 &); exit 0"}}, {.prefer = prefer});
            if (!r) return "run_tree";
            if (auto s = tree_check::source(r->tree, prefer); !s.empty()) return s;
            int after = -1;
            if (::prctl(PR_GET_CHILD_SUBREAPER, &after) != 0 || after != before)
                return "subreaper " + std::to_string(before) + " became " + std::to_string(after);
        }
        return "";
    });
    EXPECT_TRUE(o.ok()) << o.why();
}

TEST(Tree, BadCommandsAreErrors) {
    EXPECT_EQ(proctimes::run_tree({}).error(), proctimes::errc::invalid_argument);
    EXPECT_EQ(proctimes::run_tree({.argv = {"/bin/true"}}, {.max_argv_bytes = 0}).error(),
              proctimes::errc::invalid_argument);
    auto r = proctimes::run_tree({.argv = {"/nonexistent/program"}});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), std::error_code(ENOENT, std::system_category()));
}

TEST(Tree, ArgvIsBounded) {
    const std::string big(3000, 'x');
    auto r = proctimes::run_tree({.argv = {"/bin/sh", "-c", "exit 0", big}}, {.max_argv_bytes = 100});
    ASSERT_TRUE(r) << r.error().message();
    const auto& prog = r->tree.processes.at(0).programs.at(0);
    EXPECT_TRUE(prog.argv_truncated);
    std::size_t bytes = 0;
    for (const auto& a : prog.argv) bytes += a.size() + 1;
    EXPECT_LE(bytes, 101U);
    ASSERT_GE(prog.argv.size(), 3U);
    EXPECT_EQ(prog.argv[0], "/bin/sh");
}

}  // namespace
