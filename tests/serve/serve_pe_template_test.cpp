// SPDX-License-Identifier: MIT
// `name:` templates that show what only a live process has ({{.PID}},
// {{.StartTime}}, {{.Cgroups}}): the group name is the one process-exporter
// gives, computed here from /proc independently, and compared with the real
// process-exporter (Debian's prometheus-process-exporter) where it is installed.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/run_cli.hpp"
#include "serve/harness.hpp"

namespace {

using cli_testing::run_cli;

// What process-exporter names a process with "{{.PID}}|{{.StartTime}}|{{.Cgroups}}",
// from /proc: pid, then btime of /proc/stat plus the start tick (stat field
// 22) at 100 per second, in UTC as Go prints a time, then the path of every
// /proc/<pid>/cgroup line in brackets.
std::string expected_name(pid_t pid) {
    long long btime = -1;
    std::istringstream stat(serve_test::read_text("/proc/stat"));
    for (std::string line; std::getline(stat, line);)
        if (line.rfind("btime ", 0) == 0) btime = std::stoll(line.substr(6));
    const std::string s = serve_test::read_text("/proc/" + std::to_string(pid) + "/stat");
    std::istringstream fields(s.substr(s.rfind(')') + 2));
    std::string f;
    for (int i = 3; i <= 22; ++i) fields >> f;  // field 22: starttime
    const unsigned long long ticks = std::stoull(f);
    const std::time_t t = static_cast<std::time_t>(btime + static_cast<long long>(ticks / 100));
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char date[64];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
    std::string when = date;
    if (const unsigned cs = static_cast<unsigned>(ticks % 100); cs != 0) {
        char frac[8];
        std::snprintf(frac, sizeof frac, ".%02u", cs);
        std::string fr = frac;
        if (fr.back() == '0') fr.pop_back();
        when += fr;
    }
    when += " +0000 UTC";
    std::string groups = "[";
    std::istringstream cg(serve_test::read_text("/proc/" + std::to_string(pid) + "/cgroup"));
    bool first = true;
    for (std::string line; std::getline(cg, line);) {
        const auto c2 = line.find(':', line.find(':') + 1);
        groups += (first ? "" : " ") + line.substr(c2 + 1);
        first = false;
    }
    groups += "]";
    return std::to_string(pid) + "|" + when + "|" + groups;
}

}  // namespace

TEST(ServePeTemplates, PidStartTimeAndCgroupsAreProcessExportersNames) {
    // "; :" keeps sh from exec'ing sleep: the command line stays what the rule matches.
    serve_test::program sh({"/bin/sh", "-c", "sleep 60; :", "pe-template-probe"}, "/dev/null");
    ASSERT_GT(sh.pid(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::string cfg = serve_test::temp_dir("tmpl") + "/config.yaml";
    {
        std::ofstream c(cfg);
        c << "process_names:\n  - name: '{{.PID}}|{{.StartTime}}|{{.Cgroups}}'\n"
             "    cmdline: ['^/bin/sh -c sleep 60; : pe-template-probe$']\n";
    }
    const std::string want = expected_name(sh.pid());

    // Two processes: the shell and its `sleep`, which no rule matches and
    // which joins its parent's group (-children, on by default in both).
    std::string out, err;
    ASSERT_EQ(run_cli({"serve", "--once", "--top", "0", "--config", cfg}, out, err), 0) << err;
    EXPECT_NE(out.find("proctimes_group_processes{group=\"" + want + "\"} 2\n"), std::string::npos)
        << "want group " << want << "\n"
        << out.substr(0, 4000);

    const char* peer = "/usr/bin/prometheus-process-exporter";
    if (::access(peer, X_OK) != 0) {
        std::cout << "prometheus-process-exporter is not installed: compared with /proc only\n";
    } else {
        const int port = serve_test::free_port();
        serve_test::program pe({peer, "-config.path", cfg, "-web.listen-address", "127.0.0.1:" + std::to_string(port)},
                               cfg + ".log");
        std::string body;
        for (int i = 0; i < 100 && body.find("num_procs{") == std::string::npos; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            // HTTP/1.0: the answer is not chunked.
            body = serve_test::http_exchange(port, "GET /metrics HTTP/1.0\r\n\r\n", std::chrono::seconds(5)).body;
        }
        EXPECT_NE(body.find("namedprocess_namegroup_num_procs{groupname=\"" + want + "\"} 2\n"), std::string::npos)
            << "process-exporter's groups:\n"
            << body.substr(0, 4000);
    }
    serve_test::remove_unless_failed(cfg.substr(0, cfg.rfind('/')), ::testing::Test::HasFailure());
}
