// SPDX-License-Identifier: MIT
// Group names with process-exporter's rules, as process-exporter 0.7.10 gives
// them: {{.ExeBase}}, {{.ExeFull}} and `exe:` from argv[0] (a symlink, a
// rewritten argv[0], a deleted binary), kernel threads and zombies by comm,
// the first name kept until the process ends, and -children.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "scrape_text.hpp"
#include "serve/collect/collector.hpp"

extern char** environ;

namespace {

using serve_testing::temp_config;
using serve_testing::value_of;
namespace serve = proctimes::cli::serve;

const std::string tag = std::to_string(::getpid());

// A collector with process-exporter's rules `yaml` and families.
std::unique_ptr<serve::collector> make(const std::string& yaml, bool children = true) {
    proctimes::cli::serve_options opts;
    opts.config_file = temp_config(yaml);
    opts.namedprocess = true;
    opts.children = children;
    opts.top = 0;
    opts.exit_records = false;
    auto c = serve::collector::open(opts);
    ::unlink(opts.config_file.c_str());
    EXPECT_TRUE(c) << c.error().message;
    return std::move(*c);
}

double procs(const std::string& text, const std::string& group) {
    return value_of(text, "namedprocess_namegroup_num_procs{groupname=\"" + group + "\"}");
}

// `path` run with `argv` (argv[0] as given), its streams on /dev/null; the pid.
pid_t spawn(const std::string& path, std::vector<std::string> argv) {
    std::vector<char*> v;
    v.reserve(argv.size() + 1);
    for (auto& a : argv) v.push_back(a.data());
    v.push_back(nullptr);
    posix_spawn_file_actions_t files;
    ::posix_spawn_file_actions_init(&files);
    for (int fd : {0, 1, 2}) ::posix_spawn_file_actions_addopen(&files, fd, "/dev/null", O_RDWR, 0);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, path.c_str(), &files, nullptr, v.data(), environ);
    ::posix_spawn_file_actions_destroy(&files);
    return rc == 0 ? pid : -1;
}

void end(pid_t pid) {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

// Waits until /proc/<pid>/cmdline starts with `argv0` (the exec is done).
bool exec_done(pid_t pid, const std::string& argv0) {
    for (int i = 0; i < 500; ++i) {
        std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
        std::string s;
        std::getline(in, s, '\0');
        if (s == argv0) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// A child named `first` that renames itself to each of `then` when told to
// (a byte on a pipe), and forks a grandchild named `grandchild` first when
// that is not empty.
struct renaming_child {
    pid_t pid = -1;
    int go = -1, ready = -1;
    renaming_child(const std::string& first, const std::vector<std::string>& then, const std::string& grandchild = "") {
        int up[2], down[2];
        if (::pipe(up) != 0 || ::pipe(down) != 0) return;
        pid = ::fork();
        if (pid == 0) {
            ::prctl(PR_SET_NAME, first.c_str(), 0, 0, 0);
            ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
            if (!grandchild.empty() && ::fork() == 0) {
                ::prctl(PR_SET_NAME, grandchild.c_str(), 0, 0, 0);
                ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                char c;
                while (::read(down[0], &c, 1) > 0) {
                }
                ::_exit(0);
            }
            char c = 'r';
            if (::write(up[1], &c, 1) != 1) ::_exit(1);
            for (const auto& n : then) {
                if (::read(down[0], &c, 1) != 1) ::_exit(0);
                ::prctl(PR_SET_NAME, n.c_str(), 0, 0, 0);
                if (::write(up[1], &c, 1) != 1) ::_exit(1);
            }
            while (::read(down[0], &c, 1) > 0) {
            }
            ::_exit(0);
        }
        ::close(up[1]);
        ::close(down[0]);
        ready = up[0];
        go = down[1];
        char c;
        EXPECT_EQ(::read(ready, &c, 1), 1);
    }
    void next() {
        char c = 'g';
        ASSERT_EQ(::write(go, &c, 1), 1);
        ASSERT_EQ(::read(ready, &c, 1), 1);
    }
    ~renaming_child() {
        ::close(go);
        ::close(ready);
        if (pid > 0) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
    }
};

}  // namespace

// {{.ExeBase}} and {{.ExeFull}} are argv[0]'s, as process-exporter takes
// them, not /proc/<pid>/exe's: a symlink's name, an argv[0] that names
// another program, a binary deleted since it started.
TEST(ServePeNaming, ExeNamesComeFromArgvZero) {
    const std::string dir = "/tmp/proctimes-pe-naming-" + tag;
    ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
    const std::string link = dir + "/ptlink" + tag, copy = dir + "/ptcopy" + tag;
    ASSERT_EQ(::symlink("/bin/sleep", link.c_str()), 0);
    ASSERT_EQ(std::system(("cp /bin/sleep " + copy).c_str()), 0);
    const pid_t a = spawn(link, {link, "30"});
    const pid_t b = spawn("/bin/sleep", {"ptfake" + tag, "30"});
    const pid_t c = spawn(copy, {copy, "30"});
    ASSERT_TRUE(exec_done(a, link) && exec_done(b, "ptfake" + tag) && exec_done(c, copy));
    ::unlink(copy.c_str());
    auto col = make(
        "process_names:\n"
        "  - name: 'full:{{.ExeFull}}'\n    exe: ['" +
        link +
        "']\n"
        "  - exe: ['ptfake" +
        tag + "', '" + copy + "']\n");
    ASSERT_TRUE(col);
    const std::string s = col->scrape(serve::format::text_004);
    EXPECT_EQ(procs(s, "full:" + link), 1) << s;
    EXPECT_EQ(procs(s, "ptfake" + tag), 1) << s;
    EXPECT_EQ(procs(s, "ptcopy" + tag), 1) << s;
    EXPECT_EQ(procs(s, "sleep"), -1) << s;
    for (pid_t p : {a, b, c}) end(p);
    ::unlink(link.c_str());
    ::rmdir(dir.c_str());
}

// A kernel thread and a zombie have no command line: named by comm, as
// process-exporter names them ({{.ExeBase}} is the comm), never dropped.
TEST(ServePeNaming, KernelThreadsAndZombiesAreNamedByComm) {
    const std::string zname = "ptzomb" + tag.substr(0, 8);
    const pid_t z = ::fork();
    if (z == 0) {
        ::prctl(PR_SET_NAME, zname.c_str(), 0, 0, 0);
        ::_exit(0);
    }
    // Wait until it is a zombie (not reaped: no waitpid yet).
    siginfo_t si{};
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(z), &si, WEXITED | WNOWAIT), 0);
    // -children=false: kthreadd's children (every kernel thread) stay out.
    auto col = make("process_names:\n  - comm: [kthreadd, " + zname + "]\n", false);
    ASSERT_TRUE(col);
    const std::string s = col->scrape(serve::format::text_004);
    ::waitpid(z, nullptr, 0);
    if (::access("/proc/2/comm", R_OK) == 0) EXPECT_EQ(procs(s, "kthreadd"), 1) << s;
    EXPECT_EQ(procs(s, zname), 1) << s;
    EXPECT_EQ(value_of(s, "namedprocess_namegroup_states{groupname=\"" + zname + "\",state=\"Zombie\"}"), 1) << s;
    EXPECT_EQ(procs(s, ""), -1) << s;
}

// A kernel thread is matched and named by the name /proc gives it, as
// process-exporter reads it: longer than the 15 bytes of its comm (which is
// all an eBPF walk reads) for a long name, or for a worker with its workqueue
// (`kworker/R-rcu_gp`), whichever walk serve takes.
TEST(ServePeNaming, KernelThreadsAreNamedAsProcNamesThem) {
    std::string full;  // a kernel thread's name longer than 15 bytes that does not change
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string pid = e.path().filename();
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        const auto open = text.find('('), close = text.rfind(')');
        if (open == std::string::npos || close == std::string::npos || close + 2 >= text.size()) continue;
        std::ifstream cmdline(e.path() / "cmdline");
        if (cmdline.peek() != std::ifstream::traits_type::eof()) continue;  // a kernel thread has none
        const std::string name = text.substr(open + 1, close - open - 1);
        // A worker's suffix names the work it does now, which changes; a
        // rescuer's (kworker/R-...) does not.
        const bool changes = name.rfind("kworker/", 0) == 0 && name.rfind("kworker/R-", 0) != 0;
        if (name.size() > 15 && !changes && name.find_first_of(" \"\\") == std::string::npos) {
            full = name;
            break;
        }
    }
    if (full.empty()) GTEST_SKIP() << "no kernel thread here has a lasting name longer than 15 bytes";
    auto col = make("process_names:\n  - name: \"k-{{.Comm}}\"\n    comm: [\"" + full + "\"]\n", false);
    ASSERT_TRUE(col);
    const std::string s = col->scrape(serve::format::text_004);
    EXPECT_GE(procs(s, "k-" + full), 1) << full << "\n" << s;
    EXPECT_EQ(procs(s, "k-" + full.substr(0, 15)), -1) << s;
}

// A process keeps the group it was first given when it renames itself: the
// old group does not drop to 0 members (process-exporter keeps it too).
TEST(ServePeNaming, TheFirstNameIsKeptUntilTheProcessEnds) {
    const std::string a = "ptA" + tag, b = "ptB" + tag;
    renaming_child child(a, {b});
    auto col = make("process_names:\n  - name: '{{.Comm}}'\n    comm: [" + a + ", " + b + "]\n");
    ASSERT_TRUE(col);
    std::string s = col->scrape(serve::format::text_004);
    EXPECT_EQ(procs(s, a), 1) << s;
    child.next();
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    s = col->scrape(serve::format::text_004);
    EXPECT_EQ(procs(s, a), 1) << s;
    EXPECT_EQ(procs(s, b), -1) << s;
}

// -children (process-exporter's default): an unmatched process whose parent
// is in a group joins it; -children=false leaves it out.
TEST(ServePeNaming, ChildrenJoinTheirParentsGroup) {
    const std::string parent = "ptP" + tag, kid = "ptK" + tag;
    renaming_child child(parent, {}, kid);
    const std::string yaml = "process_names:\n  - name: '{{.Comm}}'\n    comm: [" + parent + "]\n";
    // The grandchild may not have named itself yet: wait until /proc says so.
    bool named = false;
    for (int i = 0; i < 500 && !named; ++i) {
        FILE* p = ::popen(("grep -lx " + kid + " /proc/[0-9]*/comm 2>/dev/null").c_str(), "r");
        char buf[64];
        named = p && std::fgets(buf, sizeof buf, p) != nullptr;
        if (p) ::pclose(p);
        if (!named) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(named);
    auto on = make(yaml);
    auto off = make(yaml, false);
    ASSERT_TRUE(on && off);
    const std::string s_on = on->scrape(serve::format::text_004), s_off = off->scrape(serve::format::text_004);
    EXPECT_EQ(procs(s_on, parent), 2) << s_on;
    EXPECT_EQ(procs(s_off, parent), 1) << s_off;
}

namespace {

// A collector with exit records from `from`, or null when they cannot be
// read here (not permitted; eBPF not built or refused).
std::unique_ptr<serve::collector> make_with_exits(
    const std::string& yaml, proctimes::exit_stream_source from = proctimes::exit_stream_source::automatic) {
    proctimes::cli::serve_options opts;
    opts.config_file = temp_config(yaml);
    opts.namedprocess = true;
    opts.top = 0;
    opts.exit_from = from;
    auto c = serve::collector::open(opts);
    ::unlink(opts.config_file.c_str());
    EXPECT_TRUE(c) << c.error().message;
    if (c && (*c)->exit_source().rfind("none", 0) == 0) return nullptr;
    return std::move(*c);
}

double group_cpu(const std::string& s, const std::string& g) {
    return value_of(s, "namedprocess_namegroup_cpu_seconds_total{groupname=\"" + g + "\",mode=\"user\"}") +
           value_of(s, "namedprocess_namegroup_cpu_seconds_total{groupname=\"" + g + "\",mode=\"system\"}");
}

// Runs `script` in /bin/sh named `argv0`, scraping `col` every 150 ms until
// it ends; reaps it and returns its CPU and its children's (wait4), and the
// last scrape, taken once its end and its children's were read.
double run_scraped(serve::collector& col, const std::string& argv0, const std::string& script, std::string& last) {
    const pid_t sh = spawn("/bin/sh", {argv0, "-c", script});
    EXPECT_GT(sh, 0);
    for (;;) {
        last = col.scrape(serve::format::text_004);
        siginfo_t si{};
        si.si_pid = 0;
        if (::waitid(P_PID, static_cast<id_t>(sh), &si, WEXITED | WNOWAIT | WNOHANG) == 0 && si.si_pid == sh) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
    }
    int status = 0;
    rusage ru{};
    EXPECT_EQ(::wait4(sh, &status, 0, &ru), sh);
    for (int i = 0; i < 3; ++i) {  // the records come within ms of the reap
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        last = col.scrape(serve::format::text_004);
    }
    const auto s = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return s(ru.ru_utime) + s(ru.ru_stime);
}

}  // namespace

// Debian's all.yaml rule (cmdline '.+') needs the command line, which an
// exit record does not carry. A shell's subshells (forked, never exec'd)
// that start and end between two scrapes have their parent's: the group
// gets their CPU, within 10 % of what wait4 says the shell and they used,
// with either source of exit records.
// (The shell waits first, so that a scrape sees it after its exec: one that
// sees it in the instant between exec's switch of the command line and of
// the comm keeps facts that no child matches until the next scrape.)
TEST(ServePeNaming, ChurningForkedChildrenAreCreditedWithRulesThatNeedTheCommandLine) {
    using proctimes::exit_stream_source;
    int sources = 0;
    for (const auto from : {exit_stream_source::bpf, exit_stream_source::taskstats}) {
        auto col = make_with_exits("process_names:\n  - name: '{{.ExeBase}}'\n    cmdline: ['.+']\n", from);
        if (!col) continue;  // this source cannot be used here
        ++sources;
        SCOPED_TRACE("exit records from " + col->exit_source());
        const std::string name = "ptchurn" + tag;
        std::string s;
        const double truth =
            run_scraped(*col, name,
                        "sleep 0.5; i=0; while [ $i -lt 200 ]; do (j=0; while [ $j -lt 2000 ]; do j=$((j+1)); done); "
                        "i=$((i+1)); done",
                        s);
        ASSERT_GT(truth, 0.05);
        const double got = group_cpu(s, name);
        EXPECT_GE(got, 0.9 * truth) << "truth " << truth << "\n" << s;
        EXPECT_LE(got, 1.1 * truth) << "truth " << truth;
    }
    if (sources == 0) GTEST_SKIP() << "no exit records here (not permitted)";
}

// Children that exec'd and ended between two scrapes, under a rule that needs
// their command line: the eBPF exit stream's exec records carry it, so their
// CPU goes to their group (within 10 % of what wait4 says the shell and they
// used). Each child is a shell run through a symlink, so that its argv[0],
// and so {{.ExeBase}}, is the group's name.
TEST(ServePeNaming, ExecdChildrenUnseenAreNamedFromTheirExecRecords) {
    auto col = make_with_exits("process_names:\n  - name: '{{.ExeBase}}'\n    cmdline: ['.+']\n",
                               proctimes::exit_stream_source::bpf);
    if (!col) GTEST_SKIP() << "no eBPF exit stream here (not permitted, or not built)";
    char dir[] = "/tmp/ptexecXXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const std::string name = "ptx" + tag, link = std::string(dir) + "/" + name;
    ASSERT_EQ(::symlink("/bin/sh", link.c_str()), 0);
    std::string s;
    const double truth = run_scraped(*col, link,
                                     "sleep 0.5; i=0; while [ $i -lt 100 ]; do \"" + link +
                                         "\" -c 'j=0; while [ $j -lt 3000 ]; do j=$((j+1)); done'; i=$((i+1)); done",
                                     s);
    ::unlink(link.c_str());
    ::rmdir(dir);
    ASSERT_GT(truth, 0.05);
    const double got = group_cpu(s, name);
    EXPECT_GE(got, 0.9 * truth) << "truth " << truth << "\n" << s;
    EXPECT_LE(got, 1.1 * truth) << "truth " << truth;
}

// Where the command line is not known, the CPU is counted as unattributed,
// never guessed: from taskstats, which carries no command line, and from
// eBPF for a command line over 8 KiB (never matched on a part of it).
TEST(ServePeNaming, ExecdChildrenNoRuleCanNameAreUnattributed) {
    using proctimes::exit_stream_source;
    int sources = 0;
    const std::string big(9000, 'x');
    for (const auto from : {exit_stream_source::taskstats, exit_stream_source::bpf}) {
        auto col = make_with_exits("process_names:\n  - name: '{{.ExeBase}}'\n    cmdline: ['.+']\n", from);
        if (!col) continue;
        ++sources;
        SCOPED_TRACE("exit records from " + col->exit_source());
        const std::string args = from == exit_stream_source::bpf ? " " + big : "";
        std::string s;
        const double before =
            value_of(col->scrape(serve::format::text_004), "proctimes_ended_unattributed_processes_total");
        ASSERT_GE(before, 0);
        run_scraped(*col, "ptexec" + tag, "i=0; while [ $i -lt 100 ]; do /bin/true" + args + "; i=$((i+1)); done", s);
        // Some of them may be seen alive (and named "true"); most are not.
        EXPECT_GE(value_of(s, "proctimes_ended_unattributed_processes_total") - before, 50) << s;
    }
    if (sources == 0) GTEST_SKIP() << "no exit records here (not permitted)";
}

// pid 1 is in its group with and without -threads (the eBPF walk, which
// --threads used to switch off, does not see a sandbox's pid 1), as
// process-exporter, which reads /proc, has it.
TEST(ServePeNaming, TheGroupSetDoesNotDependOnThreads) {
    std::ifstream in("/proc/1/comm");
    std::string init;
    std::getline(in, init);
    if (init.empty()) GTEST_SKIP() << "/proc/1/comm unreadable";
    const std::string yaml = "process_names:\n  - name: '{{.Comm}}'\n    comm: ['" + init + "']\n";
    for (const bool threads : {false, true}) {
        proctimes::cli::serve_options opts;
        opts.config_file = temp_config(yaml);
        opts.namedprocess = true;
        opts.children = false;
        opts.threads = threads;
        opts.top = 0;
        opts.exit_records = false;
        auto col = serve::collector::open(opts);
        ::unlink(opts.config_file.c_str());
        ASSERT_TRUE(col) << col.error().message;
        const std::string s = (*col)->scrape(serve::format::text_004);
        EXPECT_GE(procs(s, init), 1) << "threads " << threads << "\n" << s;
    }
}

// Children that end while their parent does not wait stay zombies across
// scrapes: listed by the walks with their final times, their ends already
// read (taskstats sends a task's record as it exits, before it is reaped).
// Each CPU-second goes to their group once, with either source: within 10 %
// of what getrusage says the children used. (The parent, named before it
// renamed itself, is in no group.)
TEST(ServePeNaming, ZombieChildrenAcrossScrapesAreCountedOnce) {
    using proctimes::exit_stream_source;
    int sources = 0;
    for (const auto from : {exit_stream_source::bpf, exit_stream_source::taskstats}) {
        const std::string name = "ptzomb" + tag.substr(0, 6);
        auto col = make_with_exits("process_names:\n  - name: '{{.Comm}}'\n    comm: [" + name + "]\n", from);
        if (!col) continue;
        ++sources;
        SCOPED_TRACE("exit records from " + col->exit_source());
        char out[] = "/tmp/ptzombXXXXXX";
        const int fd = ::mkstemp(out);
        ASSERT_GE(fd, 0);
        ::close(fd);
        // Eight children of 30 ms, 100 ms apart, reaped only 700 ms after
        // the last: zombies for 0.7-1.4 s, over several scrapes.
        const std::string script =
            "import os, resource, time\n"
            "open('/proc/self/comm', 'w').write('" +
            name +
            "')\n"
            "time.sleep(0.3)\n"
            "for _ in range(8):\n"
            "    if os.fork() == 0:\n"
            "        t = time.process_time()\n"
            "        while time.process_time() - t < 0.03: pass\n"
            "        os._exit(0)\n"
            "    time.sleep(0.1)\n"
            "time.sleep(0.7)\n"
            "while True:\n"
            "    try: os.wait()\n"
            "    except ChildProcessError: break\n"
            "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "open('" +
            std::string(out) + "', 'w').write(repr(r.ru_utime + r.ru_stime))\n";
        const pid_t py = spawn("/usr/bin/python3", {"python3", "-c", script});
        ASSERT_GT(py, 0);
        std::string s;
        for (;;) {
            s = col->scrape(serve::format::text_004);
            siginfo_t si{};
            if (::waitid(P_PID, static_cast<id_t>(py), &si, WEXITED | WNOWAIT | WNOHANG) == 0 && si.si_pid == py) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
        }
        int status = 0;
        ASSERT_EQ(::waitpid(py, &status, 0), py);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
        for (int i = 0; i < 2; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            s = col->scrape(serve::format::text_004);
        }
        std::ifstream in(out);
        double truth = 0;
        in >> truth;
        ::unlink(out);
        ASSERT_GT(truth, 0.2);
        const double got = group_cpu(s, name);
        EXPECT_GE(got, 0.9 * truth) << "truth " << truth << "\n" << s;
        EXPECT_LE(got, 1.1 * truth) << "truth " << truth;
    }
    if (sources == 0) GTEST_SKIP() << "no exit records here (not permitted)";
}
