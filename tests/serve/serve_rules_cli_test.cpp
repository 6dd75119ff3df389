// SPDX-License-Identifier: MIT
// `proctimes serve` against processes that choose hostile names and command
// lines, hostile --config paths, strict numeric options, and the truth of
// its estimated and source metrics.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli/run_cli.hpp"
#include "proctimes/snapshot.hpp"
#include "scrape_text.hpp"
#include "serve/collect/collector.hpp"

extern char** environ;

namespace {

using cli_testing::run_cli;

// The installed-like binary under `timeout`, for what could hang: exit status
// (124 when it had to be killed) and everything it wrote.
int run_bin(const std::string& args, std::string& out) {
    const std::string cmd = "timeout -s KILL 30 " + std::string(PROCTIMES_BIN) + " " + args + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return -1;
    out.clear();
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = ::pclose(p);
    if (WIFEXITED(status)) return WEXITSTATUS(status) == 137 ? 124 : WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

void burn(std::chrono::milliseconds cpu) {
    timespec t{};
    const auto now = [&t] {
        ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
    };
    const auto end = now() + cpu;
    while (now() < end) {
    }
}

// A child that names itself `name` (any bytes; "" is allowed), burns `cpu`,
// says so on a pipe and then waits until told to go on, `steps` times, each
// step taking the next name of `names`; then it ends.
class named_child {
public:
    explicit named_child(std::vector<std::string> names,
                         std::chrono::milliseconds cpu = std::chrono::milliseconds(20)) {
        int up[2], down[2];
        if (::pipe(up) != 0 || ::pipe(down) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(up[0]);
            ::close(down[1]);
            for (std::size_t i = 0; i < names.size(); ++i) {
                ::prctl(PR_SET_NAME, names[i].c_str(), 0, 0, 0);
                if (i == 0) burn(cpu);
                char c = 'r';
                if (::write(up[1], &c, 1) != 1) ::_exit(1);
                if (::read(down[0], &c, 1) != 1) ::_exit(0);  // the parent closed it: end
            }
            ::_exit(0);
        }
        ::close(up[1]);
        ::close(down[0]);
        up_ = up[0];
        down_ = down[1];
        wait_ready();
    }
    ~named_child() { end(); }
    named_child(const named_child&) = delete;
    named_child& operator=(const named_child&) = delete;
    [[nodiscard]] pid_t pid() const { return pid_; }
    // Lets the child take its next name, and waits until it has.
    void next() {
        char c = 'g';
        ASSERT_EQ(::write(down_, &c, 1), 1);
        wait_ready();
    }
    // Ends the child and reaps it.
    void end() {
        if (pid_ <= 0) return;
        ::close(down_);
        ::close(up_);
        int st = 0;
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
    }

private:
    void wait_ready() {
        char c = 0;
        ASSERT_EQ(::read(up_, &c, 1), 1);
    }
    pid_t pid_ = -1;
    int up_ = -1, down_ = -1;
};

// posix_spawnp(3) of argv[0] in a process group of its own, with its standard
// streams on /dev/null; the child's pid (= its group), or -1. The group is
// what kill_group ends: a shell's own children (sleep) would otherwise outlive
// it and hold the test's output open, which CTest waits for.
pid_t spawn(std::vector<std::string>& args) {
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t files;
    ::posix_spawnattr_init(&attr);
    ::posix_spawnattr_setpgroup(&attr, 0);
    ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    ::posix_spawn_file_actions_init(&files);
    for (int fd : {0, 1, 2}) ::posix_spawn_file_actions_addopen(&files, fd, "/dev/null", O_RDWR, 0);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, argv[0], &files, &attr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&files);
    ::posix_spawnattr_destroy(&attr);
    return rc == 0 ? pid : -1;
}

// Ends what spawn started, the shell and its children, and reaps the shell.
void kill_group(pid_t pid) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

std::string temp_file(const std::string& text) {
    char path[] = "/tmp/proctimes-serve-rules-XXXXXX";
    const int fd = ::mkstemp(path);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
    return path;
}

// Every sample line's series (name and labels) and value.
std::multimap<std::string, double> samples(const std::string& text) {
    std::multimap<std::string, double> m;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        const auto sp = line.rfind(' ');
        m.emplace(line.substr(0, sp), std::stod(line.substr(sp + 1)));
    }
    return m;
}

double value_of(const std::string& text, const std::string& series) {
    const auto m = samples(text);
    const auto it = m.find(series);
    return it == m.end() ? -1 : it->second;
}

}  // namespace

// Debian's stock rule (examples/all.yaml) against a 40 KB command line: the
// old std::regex matcher died of SIGSEGV.
TEST(ServeRules, StockAllRuleSurvivesAHugeCommandLine) {
    const std::string cfg = temp_file("process_names:\n  - name: \"{{.Comm}}\"\n    cmdline:\n    - '.+'\n");
    const std::string big(40000, 'x');
    std::vector<std::string> argv_s{"sh", "-c", "sleep 60; :", big};
    const pid_t pid = spawn(argv_s);
    ASSERT_GT(pid, 0);
    ::usleep(100000);  // let it exec
    std::string out;
    const int rc = run_bin("serve --once --top 0 --config " + cfg, out);
    kill_group(pid);
    ::unlink(cfg.c_str());
    ASSERT_EQ(rc, 0) << out.substr(0, 2000);
    EXPECT_GE(value_of(out, "proctimes_group_processes{group=\"sh\"}"), 1) << out.substr(0, 2000);
}

// A process-exporter template over a name that is itself a template: the old
// substitution re-read its own output and never ended.
TEST(ServeRules, ANameThatLooksLikeATemplateIsTakenLiterally) {
    named_child child({"{{.Comm}}"});
    const std::string cfg = temp_file("process_names:\n  - name: \"<{{.Comm}}>\"\n    comm: ['{{.Comm}}']\n");
    std::string out;
    const int rc = run_bin("serve --once --top 0 --config " + cfg, out);
    ::unlink(cfg.c_str());
    ASSERT_EQ(rc, 0) << out;
    EXPECT_EQ(value_of(out, "proctimes_group_processes{group=\"<{{.Comm}}>\"}"), 1) << out;
}

TEST(ServeRules, NamedCapturesNameTheGroup) {
    const std::string cfg = temp_file(
        "process_names:\n  - name: \"svc-{{.Matches.word}}\"\n    cmdline:\n"
        "    - '(?i)\\ASH -C (?P<word>\\pL+) 6\\d; :\\z'\n");
    // "; :" keeps sh from exec'ing sleep: the command line stays "sh -c sleep 60; :".
    std::vector<std::string> argv_s{"sh", "-c", "sleep 60; :"};
    const pid_t pid = spawn(argv_s);
    ASSERT_GT(pid, 0);
    ::usleep(100000);
    std::string out, err;
    const int rc = run_cli({"serve", "--once", "--top", "0", "--config", cfg}, out, err);
    kill_group(pid);
    ::unlink(cfg.c_str());
    ASSERT_EQ(rc, 0) << err;
    EXPECT_GE(value_of(out, "proctimes_group_processes{group=\"svc-sleep\"}"), 1) << out;
}

// prctl(PR_SET_NAME, "") put a process in no group and out of --top while the
// ledger counted its CPU.
TEST(ServeRules, AnEmptyNameIsVisible) {
    named_child child({""}, std::chrono::milliseconds(50));
    std::string out, err;
    ASSERT_EQ(run_cli({"serve", "--once", "--top", "4294967295"}, out, err), 0) << err;
    EXPECT_GE(value_of(out, "proctimes_group_processes{group=\"(no process name)\"}"), 1);
    const std::string top =
        "proctimes_process_start_time_seconds{group=\"(no process name)\",name=\"(no process name)\",pid=\"" +
        std::to_string(child.pid()) + "\",start_ticks=\"";
    EXPECT_NE(out.find(top), std::string::npos) << "no --top series for pid " << child.pid();
}

// Names that differ only in bytes that are not UTF-8 rendered as one label
// value: duplicate series, which Prometheus drops and OpenMetrics forbids.
TEST(ServeRules, InvalidUtf8NamesStayDistinctSeries) {
    named_child a({"ptu\xff"}), b({"ptu\xfe"}), c({"ptu\xef\xbf\xbd"});
    std::string out, err;
    ASSERT_EQ(run_cli({"serve", "--once", "--include", "^ptu", "--top", "4294967295", "--namedprocess"}, out, err), 0)
        << err;
    EXPECT_EQ(value_of(out, "proctimes_group_processes{group=\"ptu\\\\xFF\"}"), 1) << out;
    EXPECT_EQ(value_of(out, "proctimes_group_processes{group=\"ptu\\\\xFE\"}"), 1) << out;
    EXPECT_EQ(value_of(out, "proctimes_group_processes{group=\"ptu\xef\xbf\xbd\"}"), 1) << out;
    const auto all = samples(out);
    for (auto it = all.begin(); it != all.end(); it = all.upper_bound(it->first))
        EXPECT_EQ(all.count(it->first), 1u) << "duplicate series " << it->first;
}

TEST(ServeRules, TopIsAStrictWholeNumber) {
    std::string out, err;
    for (const char* bad : {"-1", "1e3", "x", "18446744073709551615", " 3"}) {
        EXPECT_EQ(run_cli({"serve", "--once", "--top", bad}, out, err), 2) << bad;
        EXPECT_NE(err.find("--top"), std::string::npos) << bad << ": " << err;
    }
    EXPECT_EQ(run_cli({"serve", "--once", "--top", "2"}, out, err), 0) << err;
    // Every numeric option of serve goes through the same parser.
    for (const char* opt : {"--http-threads", "--connection-deadline", "--idle-deadline", "--max-connections",
                            "--max-connections-per-ip"}) {
        for (const char* bad : {"-1", "0", "1e3", "nan", " 3", "2.5", "18446744073709551617"}) {
            EXPECT_EQ(run_cli({"serve", "--once", opt, bad}, out, err), 2) << opt << " " << bad;
            EXPECT_NE(err.find(opt), std::string::npos) << opt << " " << bad << ": " << err;
        }
    }
}

// A FIFO made open(2) wait forever for a writer; /dev/zero was read until
// bad_alloc (exit 1). Both are usage errors now, answered at once.
TEST(ServeRules, ConfigMustBeARegularFile) {
    char dir[] = "/tmp/proctimes-serve-fifo-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const std::string fifo = std::string(dir) + "/pe.yaml";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string out;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(run_bin("serve --once --config " + fifo, out), 2) << out;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
    EXPECT_NE(out.find("not a regular file"), std::string::npos) << out;
    EXPECT_EQ(run_bin("serve --once --config /dev/zero", out), 2) << out;
    EXPECT_NE(out.find("/dev/zero"), std::string::npos) << out;
    EXPECT_NE(out.find("not a regular file"), std::string::npos) << out;
    EXPECT_EQ(run_bin("serve --once --config /tmp", out), 2) << out;
    ::unlink(fifo.c_str());
    ::rmdir(dir);
    const std::string big = temp_file(std::string(std::size_t{2} << 20, '#'));
    EXPECT_EQ(run_bin("serve --once --config " + big, out), 2) << out;
    EXPECT_NE(out.find("larger than 1 MiB"), std::string::npos) << out;
    ::unlink(big.c_str());
}

// A process that burns CPU under one name, renames itself and ends with no
// exit record: its estimated part must be the part its last group counted.
TEST(ServeRules, EstimatedIsPartOfItsGroupsTotal) {
    const std::string a = "ptA" + std::to_string(::getpid() % 100000), b = "ptB" + std::to_string(::getpid() % 100000);
    named_child child({a, b}, std::chrono::milliseconds(300));
    proctimes::cli::serve_options opts;
    opts.exit_records = false;
    opts.top = 0;
    opts.include = "^pt[AB]" + std::to_string(::getpid() % 100000) + "$";
    auto col = proctimes::cli::serve::collector::open(opts);
    ASSERT_TRUE(col) << col.error().message;
    const auto f = proctimes::cli::serve::format::text_004;
    std::string s = (*col)->scrape(f);
    const auto total = [&s](const std::string& g) {
        return value_of(s, "proctimes_group_cpu_seconds_total{group=\"" + g + "\",mode=\"user\"}") +
               value_of(s, "proctimes_group_cpu_seconds_total{group=\"" + g + "\",mode=\"system\"}");
    };
    EXPECT_GE(total(a), 0.25) << s;
    child.next();  // renamed to b
    ::usleep(150000);
    s = (*col)->scrape(f);
    child.end();  // ends, reaped: no exit record is read
    ::usleep(150000);
    s = (*col)->scrape(f);
    const double est_b = value_of(s, "proctimes_group_cpu_estimated_seconds_total{group=\"" + b + "\"}");
    const double est_a = value_of(s, "proctimes_group_cpu_estimated_seconds_total{group=\"" + a + "\"}");
    EXPECT_EQ(value_of(s, "proctimes_group_ended_processes_total{group=\"" + b + "\"}"), 1) << s;
    ASSERT_GE(est_b, 0) << s;
    EXPECT_LE(est_b, total(b) + 1e-9) << s;
    EXPECT_LE(est_a, total(a) + 1e-9) << s;
    EXPECT_GE(total(a), 0.25) << s;
}

// The snapshot label said "proc" while the snapshotter read eBPF.
TEST(ServeRules, ExporterSourceTellsTheTruth) {
    std::string out, err;
    ASSERT_EQ(run_cli({"serve", "--once", "--top", "0"}, out, err), 0) << err;
    const bool bpf = proctimes::bpf_snapshot_status().usable;
    const std::string snap = bpf ? "bpf" : "proc";
    bool found = false;
    for (const char* exits : {"bpf", "taskstats", "none"})
        found =
            found || value_of(out, "proctimes_exporter_source{snapshot=\"" + snap + "\",exits=\"" + exits + "\"}") == 1;
    EXPECT_TRUE(found) << out.substr(out.find("proctimes_exporter_source"));
    // --threads reads from the same source: the group set does not depend on it.
    ASSERT_EQ(run_cli({"serve", "--once", "--top", "0", "--threads", "--no-exit-records"}, out, err), 0) << err;
    EXPECT_EQ(value_of(out, "proctimes_exporter_source{snapshot=\"" + snap + "+threads\",exits=\"none\"}"), 1)
        << out.substr(out.find("proctimes_exporter_source"));
    // With process-exporter's families, a walk that lists what /proc lists.
    ASSERT_EQ(run_cli({"serve", "--once", "--top", "0", "--namedprocess", "--no-exit-records"}, out, err), 0) << err;
    EXPECT_EQ(
        value_of(out, "proctimes_exporter_source{snapshot=\"" + serve_testing::rules_walk() + "\",exits=\"none\"}"), 1)
        << out.substr(out.find("proctimes_exporter_source"));
}

// process-exporter starts with a config that has no rules and exports no
// group; `process_names: []` exported a group for every process name, and the
// others were refused (exit 2).
TEST(ServeRules, AConfigWithoutRulesMonitorsNothing) {
    for (const char* yaml : {"process_names: []\n", "", "# nothing yet\n", "process_names:\n", "other: 1\n"}) {
        const std::string cfg = temp_file(yaml);
        std::string out;
        const int rc = run_bin("serve --once --top 3 --config " + cfg, out);
        ::unlink(cfg.c_str());
        ASSERT_EQ(rc, 0) << yaml << ": " << out.substr(0, 2000);
        std::size_t groups = 0, pe_groups = 0;
        for (const auto& [series, value] : samples(out)) {
            groups += series.rfind("proctimes_group_processes{", 0) == 0 ? 1 : 0;
            pe_groups += series.rfind("namedprocess_namegroup_num_procs{", 0) == 0 ? 1 : 0;
        }
        EXPECT_EQ(groups, 0u) << yaml;
        EXPECT_EQ(pe_groups, 0u) << yaml;
        EXPECT_NE(out.find("# TYPE namedprocess_scrape_errors"), std::string::npos) << yaml;
    }
}

// The same file names the same groups as in process-exporter: merge keys
// (`<<: *anchor`), and the last of duplicate keys.
TEST(ServeRules, MergeKeysAndDuplicateKeysAsProcessExporterReadsThem) {
    named_child child({"pt-merge-me"});
    const std::string cfg = temp_file(
        "base: &b {comm: [pt-merge-me]}\n"
        "process_names:\n  - comm: [pt-not-this]\n"
        "process_names:\n  - <<: *b\n    name: first\n    name: 'merged-{{.Comm}}'\n");
    std::string out;
    const int rc = run_bin("serve --once --top 0 --config " + cfg, out);
    ::unlink(cfg.c_str());
    ASSERT_EQ(rc, 0) << out;
    EXPECT_EQ(value_of(out, "proctimes_group_processes{group=\"merged-pt-merge-me\"}"), 1) << out.substr(0, 3000);
    EXPECT_EQ(value_of(out, "proctimes_group_processes{group=\"first\"}"), -1);
}

// Refusals name the line and the reason (exit 2): a byte that is not UTF-8,
// \C in a regex, and nesting deeper than the YAML reader takes.
TEST(ServeRules, ConfigRefusalsNameTheLine) {
    const std::pair<std::string, std::string> cases[] = {
        {"process_names:\n  - comm: [a\xff]\n", "line 2, column 13 (byte 0xFF): not UTF-8"},
        {"process_names:\n  - cmdline: ['x\\C']\n", "invalid escape sequence: `\\C`"},
        {"process_names:\n  - comm: [a]\nx: " + std::string(1000, '[') + std::string(1000, ']') + "\n",
         "line 3, column"},
    };
    for (const auto& [yaml, want] : cases) {
        const std::string cfg = temp_file(yaml);
        std::string out;
        const int rc = run_bin("serve --once --config " + cfg, out);
        ::unlink(cfg.c_str());
        EXPECT_EQ(rc, 2) << out;
        EXPECT_NE(out.find("proctimes: serve: " + cfg + ": line "), std::string::npos) << out;
        EXPECT_NE(out.find(want), std::string::npos) << out;
    }
}

// {{.Matches}} names the group with the whole map, as process-exporter prints
// it (it was cut off there: "x").
TEST(ServeRules, TheWholeMatchesMapNamesTheGroup) {
    const std::string cfg =
        temp_file("process_names:\n  - name: 'x{{.Matches}}y'\n    cmdline: ['^(sl)(?P<a>e+)p (?P<b>271)$']\n");
    std::vector<std::string> argv_s{"sleep", "271"};
    const pid_t pid = spawn(argv_s);
    ASSERT_GT(pid, 0);
    ::usleep(100000);
    std::string out;
    const int rc = run_bin("serve --once --top 0 --config " + cfg, out);
    kill_group(pid);
    ::unlink(cfg.c_str());
    ASSERT_EQ(rc, 0) << out;
    EXPECT_EQ(value_of(out, "proctimes_group_processes{group=\"xmap[:sl a:ee b:271]y\"}"), 1) << out.substr(0, 3000);
}
