// SPDX-License-Identifier: MIT
// proctimes.exe, the command on Windows: run, ps, show and watch, each started
// as a real process (proctimes.exe beside this test executable) with its
// output in files, on children that are copies of this executable
// (windows_children.cpp). Under Wine, where Wine is known to differ, the test
// asserts Wine's answer (docs/WINDOWS.md).
#include <windows.h>
// After windows.h:
#include <fcntl.h>
#include <io.h>
#include <share.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "proctimes/snapshot.hpp"
#include "proctimes/spawn.hpp"
#include "windows_test.hpp"

using namespace std::chrono_literals;
using nlohmann::json;

namespace {

std::string cli_path() {
    std::string self = wintest::self_path();
    return self.substr(0, self.find_last_of("\\/") + 1) + "proctimes.exe";
}

// A new empty file in the temporary directory; its path.
std::string temp_file() {
    char dir[MAX_PATH + 1] = {};
    char path[MAX_PATH + 1] = {};
    if (::GetTempPathA(sizeof dir, dir) == 0 || ::GetTempFileNameA(dir, "ptc", 0, path) == 0) return {};
    return path;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct cli_result {
    int code = -1;
    std::string out, err;
};

// Runs proctimes.exe with `args`, its stdout and stderr in files. One that
// has not ended after `limit` is terminated (code -1).
cli_result run_cli(const std::vector<std::string>& args, std::chrono::seconds limit = std::chrono::seconds{120}) {
    cli_result r;
    const std::string out_path = temp_file(), err_path = temp_file();
    if (out_path.empty() || err_path.empty()) return r;
    int out_fd = -1, err_fd = -1;
    ::_sopen_s(&out_fd, out_path.c_str(), _O_WRONLY | _O_TRUNC | _O_BINARY, _SH_DENYNO, _S_IREAD | _S_IWRITE);
    ::_sopen_s(&err_fd, err_path.c_str(), _O_WRONLY | _O_TRUNC | _O_BINARY, _SH_DENYNO, _S_IREAD | _S_IWRITE);
    if (out_fd >= 0 && err_fd >= 0) {
        std::vector<std::string> argv{cli_path()};
        argv.insert(argv.end(), args.begin(), args.end());
        auto c = proctimes::child::spawn({.argv = argv, .stdout_fd = out_fd, .stderr_fd = err_fd});
        if (c) {
            auto e = c->wait_for(limit);
            if (e && *e && (*e)->status) r.code = (*e)->status->code;
            if (e && !*e) {
                r.err = "proctimes.exe did not end within the limit; terminated\n";
                HANDLE h = ::OpenProcess(PROCESS_TERMINATE, FALSE, static_cast<DWORD>(c->id()));
                if (h) {
                    ::TerminateProcess(h, 1);
                    ::CloseHandle(h);
                }
                (void)c->wait();
            }
        } else {
            r.err = "spawn: " + c.error().message();
        }
    }
    if (out_fd >= 0) ::_close(out_fd);
    if (err_fd >= 0) ::_close(err_fd);
    r.out = slurp(out_path);
    r.err += slurp(err_path);
    ::DeleteFileA(out_path.c_str());
    ::DeleteFileA(err_path.c_str());
    return r;
}

std::wstring wide(const std::string& s) {
    const int n = ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
    std::wstring w(static_cast<std::size_t>(n > 0 ? n : 0), L'\0');
    if (n > 0) ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
}

std::string utf8(const std::wstring& w) {
    const int n = ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
    std::string s(static_cast<std::size_t>(n > 0 ? n : 0), '\0');
    if (n > 0) ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr, nullptr);
    return s;
}

// The bytes of the file at a UTF-8 path.
std::string slurp_utf8(const std::string& path) {
    std::ifstream in(std::filesystem::path(wide(path)), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::uint64_t now_filetime() {
    FILETIME f{};
    ::GetSystemTimePreciseAsFileTime(&f);
    return wintest::ticks(f);
}

void end_process(pid_t pid) {
    HANDLE h = ::OpenProcess(PROCESS_TERMINATE, FALSE, static_cast<DWORD>(pid));
    ASSERT_NE(h, nullptr);
    EXPECT_TRUE(::TerminateProcess(h, 1));
    ::CloseHandle(h);
}

std::vector<std::string> child(std::vector<std::string> rest) {
    rest.insert(rest.begin(), {wintest::self_path(), "child"});
    return rest;
}

}  // namespace

TEST(WindowsCli, RunReportsExitCodeInstantsAndCpu) {
    const std::string report = temp_file();
    ASSERT_FALSE(report.empty());
    const std::uint64_t before = now_filetime();
    std::vector<std::string> args{"run", "--format", "json", "-o", report, "--"};
    for (auto& a : child({"burn", "300", "7"})) args.push_back(a);
    const auto r = run_cli(args);
    const std::uint64_t after = now_filetime();
    const std::string text = slurp(report);
    ::DeleteFileA(report.c_str());
    // run exits with the command's status.
    ASSERT_EQ(r.code, 7) << r.err;
    const json j = json::parse(text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << text;
    EXPECT_EQ(j.at("exit_code"), 7);
    EXPECT_EQ(j.at("state"), "exited");
    EXPECT_EQ(j.at("source"), "os_times");
    EXPECT_EQ(j.at("command").size(), 5u);
    // Creation and exit inside the bracket of this process's clock reads
    // around the whole run; creation may be floored to the clock tick.
    const auto created = j.at("creation_filetime").get<std::uint64_t>();
    const auto exited = j.at("exit_filetime").get<std::uint64_t>();
    const auto tick = j.at("resolution_ns").get<std::uint64_t>() / 100;
    EXPECT_GE(created + tick, before);
    EXPECT_LE(created, exited);
    EXPECT_LE(exited, after);
    const auto cpu =
        std::chrono::nanoseconds{j.at("kernel_ns").get<std::int64_t>() + j.at("user_ns").get<std::int64_t>()};
    if (wintest::under_wine()) {
        // Wine 8 answers GetProcessTimes on another process with the caller's
        // own times: the report holds proctimes.exe's CPU, not the child's
        // 300 ms. It is at least a tick of Wine's process start-up and no
        // more than the whole run's wall time on every processor.
        EXPECT_GT(cpu.count(), 0);
        EXPECT_LE(static_cast<std::uint64_t>(cpu.count()) / 100,
                  (after - before) * std::thread::hardware_concurrency());
    } else {
        // The child burned 300 ms by its own thread clock.
        EXPECT_GE(cpu, 300ms - std::chrono::nanoseconds{tick * 100});
    }
}

TEST(WindowsCli, RunRefusesWhatItCannotStart) {
    const auto r = run_cli({"run", "--", "C:\\no\\such\\program.exe"});
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.err.find("proctimes: "), std::string::npos) << r.err;
}

TEST(WindowsCli, PsListsEveryThreadOfAFiftyThreadProcess) {
    auto c = proctimes::child::spawn({.argv = child({"threads", "50"})});
    ASSERT_TRUE(c) << c.error().message();
    const pid_t pid = c->id();
    // Its threads start after it does: wait until the library sees all 51.
    bool all = false;
    for (int i = 0; i < 200 && !all; ++i) {
        auto s = proctimes::take_snapshot({.threads = true});
        ASSERT_TRUE(s) << s.error().message();
        const auto* p = s->find(pid);
        all = p && s->threads_of(*p).size() == 51;
        if (!all) std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(all);
    const auto r = run_cli({"ps", "--threads", "--format", "json"});
    end_process(c->id());
    (void)c->wait();
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_array()) << r.out.substr(0, 400);
    const json* proc = nullptr;
    for (const auto& p : j)
        if (p.at("pid") == pid) proc = &p;
    ASSERT_NE(proc, nullptr) << "pid " << pid << " is not in ps's list";
    const auto& threads = proc->at("threads");
    ASSERT_EQ(threads.size(), 51u);
    std::set<std::int64_t> tids;
    std::size_t before_process = 0;
    for (const auto& t : threads) {
        EXPECT_EQ(t.at("pid"), pid);
        tids.insert(t.at("tid").get<std::int64_t>());
        before_process +=
            t.at("creation_filetime").get<std::uint64_t>() < proc->at("creation_filetime").get<std::uint64_t>();
    }
    // Wine stamps a process's creation after its main thread's
    // (windows_snapshot_test.cpp); on Windows no thread precedes its process.
    EXPECT_EQ(before_process, wintest::under_wine() ? 1u : 0u);
    EXPECT_EQ(tids.size(), 51u);  // 51 different threads
    EXPECT_EQ(tids.count(pid), 0u);
}

TEST(WindowsCli, WatchPrintsTheEndOfAProcess) {
    auto c = proctimes::child::spawn({.argv = child({"sleep", "2000"})});
    ASSERT_TRUE(c) << c.error().message();
    const pid_t pid = c->id();
    const auto r = run_cli({"watch", "--format", "json", std::to_string(pid)});
    const std::uint64_t after = now_filetime();
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j.at("pid"), pid);
    EXPECT_EQ(j.at("state"), "exited");
    const auto created = j.at("creation_filetime").get<std::uint64_t>();
    const auto exited = j.at("exit_filetime").get<std::uint64_t>();
    // It slept 2 s: its exit is at least that after its creation (less a tick).
    EXPECT_GE(exited - created + j.at("resolution_ns").get<std::uint64_t>() / 100, 20'000'000u);
    EXPECT_LE(exited, after);
    auto e = c->wait();
    ASSERT_TRUE(e);
}

TEST(WindowsCli, ShowAnswersNoSuchProcessTheWindowsWay) {
    // The highest id Windows can hand out: OpenProcess answers
    // ERROR_INVALID_PARAMETER, which is "no such process".
    const auto r = run_cli({"show", "4294967292"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("proctimes: pid 4294967292: no such process"), std::string::npos) << r.err;
    const auto bad = run_cli({"show", "x"});
    EXPECT_EQ(bad.code, 1);
    EXPECT_NE(bad.err.find("'x': not a process id"), std::string::npos) << bad.err;
}

TEST(WindowsCli, ShowOfAnEndedPidWhoseHandlesAreClosed) {
    auto c = proctimes::child::spawn({.argv = child({"burn", "0", "0"})});
    ASSERT_TRUE(c) << c.error().message();
    const pid_t pid = c->id();
    ASSERT_TRUE(c->wait());
    c = proctimes::child{};  // every handle to it closed
    const auto r = run_cli({"show", "--format", "json", std::to_string(pid)});
    const std::string gone = "proctimes: pid " + std::to_string(pid) + ": no such process";
    if (wintest::under_wine() && r.code == 0) {
        // Wine 8 keeps an ended process's object for a while after its last
        // handle is closed (WindowsHandles.AnEndedProcessWhoseHandlesAreClosed):
        // then it opens, and has ended. Seconds later, as proctimes.exe's own
        // start under Wine can take, it is gone as on Windows.
        const json j = json::parse(r.out, nullptr, false);
        ASSERT_TRUE(j.is_array() && j.size() == 1) << r.out;
        EXPECT_EQ(j[0].at("pid"), pid);
        EXPECT_FALSE(j[0].at("exit_filetime").is_null());
    } else {
        EXPECT_EQ(r.code, 1);
        EXPECT_NE(r.err.find(gone), std::string::npos) << r.err;
    }
}

TEST(WindowsCli, ShowsALiveProcess) {
    auto c = proctimes::child::spawn({.argv = child({"sleep", "5000"})});
    ASSERT_TRUE(c) << c.error().message();
    const auto r = run_cli({"show", "--threads", "--format", "json", std::to_string(c->id())});
    end_process(c->id());
    (void)c->wait();
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_array() && j.size() == 1) << r.out;
    EXPECT_EQ(j[0].at("pid"), c->id());
    EXPECT_TRUE(j[0].at("exit_filetime").is_null());
    EXPECT_EQ(j[0].at("source"), "os_times");
    EXPECT_EQ(j[0].at("name"), "windows_system_tests.exe");
    EXPECT_GE(j[0].at("threads").size(), 1u);
}

TEST(WindowsCli, ScopedWatchIsAUsageErrorThatSaysWhy) {
    const auto r = run_cli({"watch", "--all"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("not available on Windows"), std::string::npos) << r.err;
}

TEST(WindowsCli, RunsANonAsciiProgramWithNonAsciiArguments) {
    // A copy of this executable in a directory and under a name with spaces,
    // ü, 日本 and an emoji; it writes back the arguments it received.
    wchar_t tmp[MAX_PATH + 1] = {};
    ASSERT_NE(::GetTempPathW(MAX_PATH + 1, tmp), 0u);
    const std::string dir = utf8(tmp) + "proctimes dir \u00fc " + std::to_string(::GetCurrentProcessId());
    ASSERT_TRUE(::CreateDirectoryW(wide(dir).c_str(), nullptr) || ::GetLastError() == ERROR_ALREADY_EXISTS);
    const std::string program = dir + "\\\u00fcn\u00ef \u65e5\u672c \U0001F600.exe";
    ASSERT_TRUE(::CopyFileW(wide(wintest::self_path()).c_str(), wide(program).c_str(), FALSE)) << ::GetLastError();
    const std::string written = dir + "\\argv \u65e5\u672c.bin";
    const std::string report = dir + "\\report \u00fc.json";
    const std::vector<std::string> sent{
        "\u65e5\u672c", "\u00fc", "\U0001F600 two words", "plain", "\u03a9mega \"quoted\"", "", "tab\there"};
    std::vector<std::string> command{program, "child", "argv-out", written};
    command.insert(command.end(), sent.begin(), sent.end());
    std::vector<std::string> args{"run", "--format", "json", "-o", report, "--"};
    args.insert(args.end(), command.begin(), command.end());
    const auto r = run_cli(args);
    const std::string got = slurp_utf8(written);
    const std::string text = slurp_utf8(report);
    ::DeleteFileW(wide(written).c_str());
    ::DeleteFileW(wide(report).c_str());
    ::DeleteFileW(wide(program).c_str());
    ::RemoveDirectoryW(wide(dir).c_str());
    ASSERT_EQ(r.code, 0) << r.err;
    std::string expected;
    for (const auto& a : sent) expected += a + '\0';
    EXPECT_EQ(got, expected) << "the command's arguments, as it received them, byte for byte";
    const json j = json::parse(text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << text;
    EXPECT_EQ(j.at("command").get<std::vector<std::string>>(), command);
    EXPECT_EQ(j.at("exit_code"), 0);
    EXPECT_EQ(text.find('\r'), std::string::npos) << "the report's lines end in LF";
}

TEST(WindowsCli, LinesEndInLf) {
    const std::string self = std::to_string(::GetCurrentProcessId());
    for (const char* format : {"table", "json", "csv"}) {
        // A pid it shows, and one it reports an error for.
        const auto r = run_cli({"show", "--format", format, self, "x"});
        EXPECT_EQ(r.code, 1) << format << ": " << r.err;
        EXPECT_NE(r.out.find(self), std::string::npos) << format << ": " << r.out;
        EXPECT_NE(r.out.find('\n'), std::string::npos) << format;
        EXPECT_EQ(r.out.find('\r'), std::string::npos) << format << ": " << r.out;
        EXPECT_NE(r.err.find("'x': not a process id\n"), std::string::npos) << format << ": " << r.err;
        EXPECT_EQ(r.err.find('\r'), std::string::npos) << format << ": " << r.err;
    }
}

TEST(WindowsCli, AnIdBesideItsParentsIsNoSuchProcessToWatch) {
    // Windows ignores an id's low two bits: this process's id + 1 would open
    // this process, proctimes.exe's parent, which waits for it to end.
    const DWORD self = ::GetCurrentProcessId();
    const std::string beside = std::to_string(self + 1);
    const auto r = run_cli({"watch", beside}, std::chrono::seconds{60});
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("proctimes: pid " + beside + ": no such process"), std::string::npos) << r.err;
}

TEST(WindowsCli, HelpAndTheLinuxOnlyCommandsSayWhereTheyRun) {
    const auto help = run_cli({"--help"});
    EXPECT_EQ(help.code, 0) << help.err;
    EXPECT_NE(help.out.find("GetProcessTimes"), std::string::npos) << help.out;
    EXPECT_EQ(help.out.find("on Linux"), std::string::npos) << help.out;
    EXPECT_EQ(help.out.find("serve"), std::string::npos) << help.out;
    for (const char* command : {"serve", "doctor"}) {
        const auto r = run_cli({command, "--config", "x.yml", "--help"});
        EXPECT_EQ(r.code, 2) << command << ": " << r.out << r.err;
        EXPECT_NE(r.err.find(std::string("proctimes: ") + command + " is not available on Windows"), std::string::npos)
            << r.err;
    }
}
