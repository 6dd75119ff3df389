// SPDX-License-Identifier: MIT
// `proctimes watch`, in-process through proctimes::cli::run: a child and a
// non-child (a reparented grandchild) reported with exit instants bracketed by
// clock samples, bad pids reported while the others are still watched, JSON
// Lines, and SIGTERM ending the watch with 143.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "proctimes/filetime.hpp"
#include "run_cli.hpp"

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

using cli_testing::cli_result;
using cli_testing::run_cli;

std::uint64_t ticks(std::chrono::system_clock::time_point t) {
    return proctimes::filetime_from_time(std::chrono::time_point_cast<std::chrono::nanoseconds>(t))->ticks;
}

// Only async-signal-safe calls in the forked children (this process has threads).
void sleep_ms(long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
    while (::nanosleep(&ts, &ts) != 0) {
    }
}

// A child that sleeps `ms`, writes the CLOCK_REALTIME instant just before its
// exit to `fd`, and exits with `code`.
pid_t fork_sleeper(long ms, int fd, int code = 0) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        sleep_ms(ms);
        timespec now{};
        ::clock_gettime(CLOCK_REALTIME, &now);
        if (fd >= 0) [[maybe_unused]]
            auto n = ::write(fd, &now, sizeof now);
        ::_exit(code);
    }
    return pid;
}

std::chrono::system_clock::time_point read_instant(int fd) {
    timespec ts{};
    EXPECT_EQ(::read(fd, &ts, sizeof ts), static_cast<ssize_t>(sizeof ts));
    return std::chrono::system_clock::time_point{std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec})};
}

std::vector<json> json_lines(const std::string& s) {
    std::vector<json> v;
    std::istringstream in(s);
    std::string line;
    while (std::getline(in, line)) v.push_back(json::parse(line));
    return v;
}

void expect_bracketed(const json& rec, std::chrono::system_clock::time_point lo,
                      std::chrono::system_clock::time_point hi) {
    ASSERT_TRUE(rec["exit_filetime"].is_number_integer()) << rec;
    const auto exit = rec["exit_filetime"].get<std::uint64_t>();
    EXPECT_GE(exit, ticks(lo - 50ms)) << rec;
    EXPECT_LE(exit, ticks(hi + 50ms)) << rec;
    EXPECT_GE(exit, rec["creation_filetime"].get<std::uint64_t>());
}

TEST(Watch, ChildIsReportedWithItsExitInstantAndFinalTimes) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    const pid_t pid = fork_sleeper(200, p[1], 7);
    ASSERT_GT(pid, 0);
    const auto r = run_cli({"watch", "--format", "json", std::to_string(pid)});
    const auto after = std::chrono::system_clock::now();
    const auto before_exit = read_instant(p[0]);
    ::close(p[0]);
    ::close(p[1]);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_EQ(WEXITSTATUS(status), 7);

    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 1u) << r.out;
    const json& j = lines[0];
    EXPECT_EQ(j["pid"], pid);
    EXPECT_EQ(j["state"], "exited");  // a zombie until we reaped it: final values
    expect_bracketed(j, before_exit, after);
    EXPECT_GE(j["kernel_ns"].get<std::int64_t>(), 0);
    EXPECT_GE(j["user_ns"].get<std::int64_t>(), 0);
    EXPECT_TRUE(j["sampled_at_time"].is_string());
    EXPECT_TRUE(j["exit_time"].is_string());
}

TEST(Watch, AZombieSeenLateSaysItsExitIsNoLaterThanAndHowEarly) {
    // A process that has been a zombie for 300 ms when watch starts: the exit
    // instant watch can give is its own observation, 300 ms late. It must say
    // so ("observed": no later than) with a lower bound that the real end
    // does not precede; before, it printed the observation as the exit.
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    const pid_t pid = fork_sleeper(0, p[1]);
    ASSERT_GT(pid, 0);
    const auto before_exit = read_instant(p[0]);
    siginfo_t si{};
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOWAIT), 0);
    const auto seen_dead = std::chrono::system_clock::now();
    std::this_thread::sleep_for(300ms);
    const auto r = run_cli({"watch", "--format", "json", std::to_string(pid)});
    const auto table = run_cli({"watch", "--utc", std::to_string(pid)});
    ::close(p[0]);
    ::close(p[1]);
    ::waitpid(pid, nullptr, 0);

    ASSERT_EQ(r.code, 0) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 1u) << r.out;
    const json& j = lines[0];
    EXPECT_EQ(j["exit_source"], "observed") << j;
    const auto exit = j["exit_filetime"].get<std::uint64_t>();
    const auto earliest = j["exit_earliest_filetime"].get<std::uint64_t>();
    EXPECT_GE(exit, ticks(before_exit)) << "no later than: never before the end";
    EXPECT_LE(earliest, ticks(seen_dead)) << "the lower bound may not be after the end";
    EXPECT_GE(earliest, j["creation_filetime"].get<std::uint64_t>());
    // The two instants are each floored to 100 ns: their difference within one tick.
    EXPECT_LE(j["exit_resolution_ns"].get<std::uint64_t>() / 100, exit - earliest);
    EXPECT_GE(j["exit_resolution_ns"].get<std::uint64_t>() / 100 + 1, exit - earliest);
    EXPECT_GE(j["exit_resolution_ns"].get<std::int64_t>(), 300'000'000) << "seen 300 ms late, and it says so";
    EXPECT_EQ(j["exit_earliest_time"].is_string(), true);
    // The table marks it "<=" and says after when it ended.
    ASSERT_EQ(table.code, 0) << table.err;
    EXPECT_NE(table.out.find("<= "), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("(ended after "), std::string::npos) << table.out;
}

TEST(Watch, BadPidsAreReportedAndTheOthersStillWatched) {
    const pid_t pid = fork_sleeper(150, -1);
    ASSERT_GT(pid, 0);
    const auto r = run_cli({"watch", "abc", "4000000", std::to_string(pid), "--format", "csv"});
    ::waitpid(pid, nullptr, 0);
    EXPECT_EQ(r.code, proctimes::cli::exit_failure);
    EXPECT_NE(r.err.find("proctimes: 'abc': not a process id"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("proctimes: pid 4000000:"), std::string::npos) << r.err;
    std::istringstream in(r.out);
    std::string header, row;
    ASSERT_TRUE(std::getline(in, header));
    EXPECT_EQ(header.rfind("pid,tid,name,", 0), 0u);
    EXPECT_NE(header.find(",state,sampled_at_time"), std::string::npos);
    ASSERT_TRUE(std::getline(in, row));
    EXPECT_EQ(row.rfind(std::to_string(pid) + ",,", 0), 0u) << row;
}

TEST(Watch, NonChildIsReportedWithItsExitInstant) {
    int p[2], t[2];
    ASSERT_EQ(::pipe(p), 0);
    ASSERT_EQ(::pipe(t), 0);
    const pid_t middle = ::fork();
    ASSERT_GE(middle, 0);
    if (middle == 0) {
        const pid_t grandchild = ::fork();
        if (grandchild == 0) {
            sleep_ms(200);
            timespec now{};
            ::clock_gettime(CLOCK_REALTIME, &now);
            [[maybe_unused]] auto n = ::write(t[1], &now, sizeof now);
            ::_exit(0);
        }
        [[maybe_unused]] auto n = ::write(p[1], &grandchild, sizeof grandchild);
        ::_exit(0);
    }
    pid_t grandchild = 0;
    ASSERT_EQ(::read(p[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
    ::waitpid(middle, nullptr, 0);  // the grandchild is reparented away from us

    const auto r = run_cli({"watch", "--format", "json", std::to_string(grandchild)});
    const auto after = std::chrono::system_clock::now();
    const auto before_exit = read_instant(t[0]);
    for (int fd : {p[0], p[1], t[0], t[1]}) ::close(fd);

    EXPECT_EQ(r.code, 0) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 1u) << r.out;
    EXPECT_EQ(lines[0]["pid"], grandchild);
    const std::string state = lines[0]["state"];
    EXPECT_TRUE(state == "exited" || state == "exited_partial") << state;
    expect_bracketed(lines[0], before_exit, after);
}

// A child that exits as soon as `fd` is readable.
pid_t fork_waiter(int fd) {
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Never outlive a test that failed before releasing it: a child left
        // waiting would hold the test's output open until CTest's timeout.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(1);
        char c;
        [[maybe_unused]] auto n = ::read(fd, &c, 1);
        ::_exit(0);
    }
    return pid;
}

// Whether this process holds a pidfd for `pid` (the watch's handle).
bool holds_pidfd_for(pid_t pid) {
    const std::string want = "Pid:\t" + std::to_string(pid) + "\n";
    DIR* d = ::opendir("/proc/self/fdinfo");
    if (!d) return false;
    bool found = false;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        // The descriptor may be closed between readdir and read (the watch
        // runs on another thread): read(2) then fails with ENOENT, which an
        // istreambuf_iterator would turn into an exception.
        const int fd = ::open((std::string("/proc/self/fdinfo/") + e->d_name).c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char buf[1024];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        ::close(fd);
        found = found || (n > 0 && std::string(buf, static_cast<std::size_t>(n)).find(want) != std::string::npos);
    }
    ::closedir(d);
    return found;
}

TEST(Watch, SeveralProcessesOneLineEachInExitOrder) {
    // Both end while watched (each released only once the watch holds its
    // pidfd): processes that had ended before the watch began are reported at
    // once, in the order given, since nothing tells when each ended.
    int go_fast[2], go_slow[2];
    ASSERT_EQ(::pipe(go_fast), 0);
    ASSERT_EQ(::pipe(go_slow), 0);
    const pid_t slow = fork_waiter(go_slow[0]);
    const pid_t fast = fork_waiter(go_fast[0]);
    std::thread releaser([&] {
        for (int i = 0; i < 2000 && !(holds_pidfd_for(slow) && holds_pidfd_for(fast)); ++i)
            std::this_thread::sleep_for(5ms);
        [[maybe_unused]] auto a = ::write(go_fast[1], "g", 1);
        std::this_thread::sleep_for(200ms);
        [[maybe_unused]] auto b = ::write(go_slow[1], "g", 1);
    });
    const auto r = run_cli({"watch", "--format", "json", std::to_string(slow), std::to_string(fast)});
    releaser.join();
    ::waitpid(slow, nullptr, 0);
    ::waitpid(fast, nullptr, 0);
    for (int fd : {go_fast[0], go_fast[1], go_slow[0], go_slow[1]}) ::close(fd);
    EXPECT_EQ(r.code, 0) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 2u) << r.out;
    EXPECT_EQ(lines[0]["pid"], fast);
    EXPECT_EQ(lines[1]["pid"], slow);
}

TEST(Watch, TableHasAHeaderAndOneLinePerExit) {
    const pid_t pid = fork_sleeper(50, -1);
    const auto r = run_cli({"watch", "--utc", std::to_string(pid)});
    ::waitpid(pid, nullptr, 0);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("    PID  NAME", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(std::to_string(pid) + "  "), std::string::npos);
    EXPECT_NE(r.out.find(" +00:00"), std::string::npos);
}

TEST(Watch, SigtermEndsTheWatchWith143AndNothingMore) {
    const pid_t pid = fork_sleeper(3000, -1);
    std::thread killer([] {
        std::this_thread::sleep_for(300ms);
        ::kill(::getpid(), SIGTERM);
    });
    const auto start = std::chrono::steady_clock::now();
    const auto r = run_cli({"watch", "--format", "json", std::to_string(pid)});
    const auto took = std::chrono::steady_clock::now() - start;
    killer.join();
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    EXPECT_EQ(r.code, 143);
    EXPECT_EQ(r.out, "");
    EXPECT_LT(took, 2500ms);
}

TEST(Watch, NoPidIsAUsageError) { EXPECT_EQ(run_cli({"watch"}).code, proctimes::cli::exit_usage); }

}  // namespace
