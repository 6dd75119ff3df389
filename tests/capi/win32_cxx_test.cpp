// SPDX-License-Identifier: MIT
// The Win32 layer from C++: the header under a C++ compiler, and the cases the
// C program cannot easily set up (other threads, processes that are not
// CreateProcess children, concurrency, descriptor accounting).
#include <proctimes/windows.h>
#include <proctimes/exit.hpp>
#include <proctimes/linux.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "in_child.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;

namespace {

ULONGLONG ft64(const FILETIME& ft) { return (ULONGLONG{ft.dwHighDateTime} << 32) | ft.dwLowDateTime; }
constexpr ULONGLONG ms_ticks = 10'000;

struct child_process {
    PROCESS_INFORMATION pi{};
    BOOL ok = FALSE;
    explicit child_process(const std::string& args, DWORD flags = 0) {
        std::string cmd = std::string("\"") + PROCTIMES_CPU_BURNER + "\" " + args;
        STARTUPINFOA si{};
        si.cb = sizeof si;
        ok = CreateProcessA(nullptr, cmd.data(), nullptr, nullptr, FALSE, flags, nullptr, nullptr, &si, &pi);
    }
    ~child_process() {
        if (ok) {
            CloseHandle(pi.hThread);
            CloseHandle(pi.hProcess);
        }
    }
};

// A thread that burns some CPU, then parks until released.
class parked_thread {
public:
    explicit parked_thread(milliseconds burn)
        : t_([this, burn] {
              tid_ = GetCurrentThreadId();
              testing_helpers::burn_thread_cpu(burn);
              ready_ = true;
              while (!release_) std::this_thread::sleep_for(1ms);
          }) {
        while (!ready_) std::this_thread::sleep_for(1ms);
    }
    ~parked_thread() { join(); }
    void join() {
        release_ = true;
        if (t_.joinable()) t_.join();
    }
    DWORD tid() const { return tid_; }

private:
    std::atomic<DWORD> tid_{0};
    std::atomic<bool> ready_{false}, release_{false};
    std::thread t_;
};

}  // namespace

static_assert(sizeof(FILETIME) == 8 && alignof(FILETIME) == 4);
static_assert(sizeof(SYSTEMTIME) == 16 && sizeof(LARGE_INTEGER) == 8);

TEST(Win32Cxx, LastErrorIsPerThread) {
    SetLastError(111);
    DWORD seen = 1;
    std::thread([&] {
        seen = GetLastError();
        SetLastError(222);
    }).join();
    EXPECT_EQ(seen, 0u);
    EXPECT_EQ(GetLastError(), 111u);
}

TEST(Win32Cxx, OtherThreadOfThisProcessWhileRunningAndAfterItExits) {
    FILETIME pc, pe, pk, pu, c, e, k, u;
    ASSERT_TRUE(GetProcessTimes(GetCurrentProcess(), &pc, &pe, &pk, &pu));
    parked_thread t(60ms);
    HANDLE h = OpenThread(THREAD_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, t.tid());
    ASSERT_NE(h, nullptr) << GetLastError();
    EXPECT_EQ(GetThreadId(h), t.tid());
    ASSERT_TRUE(GetThreadTimes(h, &c, &e, &k, &u));
    EXPECT_EQ(ft64(e), 0u);
    EXPECT_GE(ft64(c), ft64(pc));
    EXPECT_GE(ft64(k) + ft64(u), 60 * ms_ticks);
    ULONG64 cycles = 0;
    EXPECT_TRUE(QueryThreadCycleTime(h, &cycles));
    EXPECT_GT(cycles, 0u);
    EXPECT_EQ(WaitForSingleObject(h, 0), WAIT_TIMEOUT);

    t.join();
    EXPECT_EQ(WaitForSingleObject(h, 5000), WAIT_OBJECT_0);
    // Like Windows: the handle of an exited thread still answers, with its exit
    // instant (stamped by the exit monitor) and its CPU times (the last values
    // sampled: the kernel frees a thread's accounting the moment it ends).
    FILETIME c2, e2, k2, u2;
    SetLastError(0);
    ASSERT_TRUE(GetThreadTimes(h, &c2, &e2, &k2, &u2)) << GetLastError();
    EXPECT_EQ(ft64(c2), ft64(c));
    EXPECT_NE(ft64(e2), 0u);
    EXPECT_GE(ft64(e2), ft64(c2));
    EXPECT_GE(ft64(k2) + ft64(u2), ft64(k) + ft64(u));
    ULONG64 cycles_after = 0;
    EXPECT_TRUE(QueryThreadCycleTime(h, &cycles_after));
    EXPECT_GE(cycles_after, cycles);
    EXPECT_TRUE(CloseHandle(h));
}

TEST(Win32Cxx, ProcessThatIsNotACreateProcessChild) {
    // A forked child: it exits, stays a zombie until reaped, then vanishes.
    testing_helpers::forked ch([] {
        testing_helpers::burn_thread_cpu(60ms);
        return 3;
    });
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, static_cast<DWORD>(ch.pid()));
    ASSERT_NE(h, nullptr) << GetLastError();
    DWORD code = 0;
    EXPECT_TRUE(GetExitCodeProcess(h, &code));
    EXPECT_EQ(code, STILL_ACTIVE);
    EXPECT_EQ(WaitForSingleObject(h, 20), WAIT_TIMEOUT);
    ch.start();
    EXPECT_EQ(WaitForSingleObject(h, INFINITE), WAIT_OBJECT_0);

    FILETIME c, e, k, u;
    // Exited but not yet reaped: the final CPU times, and the exit instant the
    // exit monitor stamped when its pidfd became readable.
    ASSERT_TRUE(GetProcessTimes(h, &c, &e, &k, &u)) << GetLastError();
    EXPECT_GE(ft64(k) + ft64(u), 60 * ms_ticks);
    EXPECT_NE(ft64(e), 0u);
    EXPECT_GE(ft64(e), ft64(c));
    // Not our child, yet its status is known: the zombie shows it until its
    // parent reaps it, and the handle keeps it.
    code = 0;
    EXPECT_TRUE(GetExitCodeProcess(h, &code)) << GetLastError();
    EXPECT_EQ(code, 3u);

    ch.reap();
    code = 0;
    EXPECT_TRUE(GetExitCodeProcess(h, &code)) << GetLastError();
    EXPECT_EQ(code, 3u);
    // Reaped by its parent: the handle still answers with the same values.
    FILETIME c2, e2, k2, u2;
    SetLastError(0);
    ASSERT_TRUE(GetProcessTimes(h, &c2, &e2, &k2, &u2)) << GetLastError();
    EXPECT_EQ(ft64(c2), ft64(c));
    EXPECT_EQ(ft64(e2), ft64(e));
    EXPECT_EQ(ft64(k2) + ft64(u2), ft64(k) + ft64(u));
    EXPECT_TRUE(CloseHandle(h));
}

TEST(Win32Cxx, ExitCodeUnknownOnlyWhenReapedBeforeAnyoneCouldReadIt) {
    // No exit monitor for handles opened now: nothing sees the zombie before
    // its parent reaps it.
    proctimes::set_exit_monitor_enabled(false);
    testing_helpers::forked ch([] { return 4; });
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, static_cast<DWORD>(ch.pid()));
    proctimes::set_exit_monitor_enabled(true);
    ASSERT_NE(h, nullptr) << GetLastError();
    DWORD code = 0;
    EXPECT_TRUE(GetExitCodeProcess(h, &code));
    EXPECT_EQ(code, STILL_ACTIVE);
    ch.start();
    ch.reap();
    SetLastError(0);
    EXPECT_FALSE(GetExitCodeProcess(h, &code));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    EXPECT_TRUE(CloseHandle(h));
}

TEST(Win32Cxx, OneExitMonitorThreadForChildrenAndHandles) {
    // CreateProcess children and opened handles share the core's exit
    // monitor: exactly one thread named "proctimes-exit", and no other thread
    // started by the library (sanitizer runtimes may add their own).
    auto threads = [](const char* only) {
        int n = 0;
        if (DIR* d = ::opendir("/proc/self/task")) {
            while (dirent* e = ::readdir(d)) {
                if (e->d_name[0] == '.') continue;
                if (!only) {
                    ++n;
                    continue;
                }
                std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
                std::string name;
                std::getline(comm, name);
                n += name == only;
            }
            ::closedir(d);
        }
        return n;
    };
    const int before = threads(nullptr);
    const int monitors_before = threads("proctimes-exit");
    ASSERT_LE(monitors_before, 1);
    child_process a("0 0 0 50"), b("0");
    ASSERT_TRUE(a.ok && b.ok) << GetLastError();
    HANDLE t = OpenThread(THREAD_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, a.pi.dwThreadId);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(WaitForSingleObject(b.pi.hProcess, INFINITE), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(t, INFINITE), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(a.pi.hProcess, INFINITE), WAIT_OBJECT_0);
    EXPECT_EQ(threads("proctimes-exit"), 1);
    // No other thread of the library's: all but the monitor existed before
    // (a sanitizer runtime may start its own helper thread at any time).
    EXPECT_LE(threads(nullptr), before + 1 - monitors_before + 1);
    EXPECT_TRUE(CloseHandle(t));
}

TEST(Win32Cxx, OpenProcessFindsAnExitedChildWhileAHandleHoldsIt) {
    child_process ch("20 9");
    ASSERT_TRUE(ch.ok) << GetLastError();
    ASSERT_EQ(WaitForSingleObject(ch.pi.hProcess, INFINITE), WAIT_OBJECT_0);
    HANDLE again = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, ch.pi.dwProcessId);
    ASSERT_NE(again, nullptr) << GetLastError();
    FILETIME c1, e1, k1, u1, c2, e2, k2, u2;
    ASSERT_TRUE(GetProcessTimes(ch.pi.hProcess, &c1, &e1, &k1, &u1));
    ASSERT_TRUE(GetProcessTimes(again, &c2, &e2, &k2, &u2));
    EXPECT_EQ(ft64(c1), ft64(c2));
    EXPECT_EQ(ft64(e1), ft64(e2));
    EXPECT_NE(ft64(e2), 0u);
    DWORD code = 0;
    EXPECT_TRUE(GetExitCodeProcess(again, &code));
    EXPECT_EQ(code, 9u);
    HANDLE thread = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, ch.pi.dwThreadId);
    ASSERT_NE(thread, nullptr);
    ASSERT_TRUE(GetThreadTimes(thread, &c2, &e2, &k2, &u2));
    // The main thread ends first, then the process: its own pidfd may be
    // stamped a few µs earlier, never later.
    EXPECT_LE(ft64(e2), ft64(e1));
    EXPECT_GE(ft64(e2), ft64(c2));
    PEPROCESS p = nullptr;
    ASSERT_EQ(PsLookupProcessByProcessId(reinterpret_cast<HANDLE>(static_cast<ULONG_PTR>(ch.pi.dwProcessId)), &p),
              STATUS_SUCCESS);
    EXPECT_EQ(PsGetProcessCreateTimeQuadPart(p), static_cast<LONGLONG>(ft64(c1)));
    ObDereferenceObject(p);
    EXPECT_TRUE(CloseHandle(thread));
    EXPECT_TRUE(CloseHandle(again));
}

TEST(Win32Cxx, KilledChildExitCodeIs128PlusSignal) {
    child_process ch("0 0 0 10000");
    ASSERT_TRUE(ch.ok);
    const auto t0 = steady_clock::now();
    EXPECT_EQ(WaitForSingleObject(ch.pi.hProcess, 50), WAIT_TIMEOUT);
    EXPECT_GE(steady_clock::now() - t0, 50ms);
    ASSERT_EQ(::kill(static_cast<pid_t>(ch.pi.dwProcessId), SIGKILL), 0);
    EXPECT_EQ(WaitForSingleObject(ch.pi.hProcess, 10000), WAIT_OBJECT_0);
    DWORD code = 0;
    EXPECT_TRUE(GetExitCodeProcess(ch.pi.hProcess, &code));
    EXPECT_EQ(code, 128u + SIGKILL);
    FILETIME c, e, k, u;
    EXPECT_TRUE(GetProcessTimes(ch.pi.hProcess, &c, &e, &k, &u));
    EXPECT_GE(ft64(e) - ft64(c), 40 * ms_ticks);  // it was alive for the 50 ms wait
}

TEST(Win32Cxx, ChildTimesAreMonotonicAcrossItsExit) {
    child_process ch("120 0 30");
    ASSERT_TRUE(ch.ok);
    ULONGLONG k0 = 0, u0 = 0;
    ULONG64 cycles0 = 0;
    bool exited = false;
    while (!exited) {
        FILETIME c, e, k, u;
        ASSERT_TRUE(GetProcessTimes(ch.pi.hProcess, &c, &e, &k, &u));
        ASSERT_GE(ft64(k), k0);
        ASSERT_GE(ft64(u), u0);
        k0 = ft64(k);
        u0 = ft64(u);
        ULONG64 cycles = 0;
        ASSERT_TRUE(QueryProcessCycleTime(ch.pi.hProcess, &cycles));
        ASSERT_GE(cycles, cycles0);
        cycles0 = cycles;
        exited = ft64(e) != 0;
        std::this_thread::sleep_for(3ms);
    }
    EXPECT_GE(k0 + u0, 150 * ms_ticks);
}

TEST(Win32Cxx, ClosingWhileOtherThreadsQueryIsSafe) {
    child_process ch("0 0 0 300");
    ASSERT_TRUE(ch.ok);
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, ch.pi.dwProcessId);
    ASSERT_NE(h, nullptr);
    std::atomic<bool> stop{false};
    std::atomic<int> ok{0}, invalid{0}, other{0};
    std::vector<std::thread> ts;
    ts.reserve(3);
    for (int i = 0; i < 3; ++i)
        ts.emplace_back([&] {
            while (!stop) {
                FILETIME c, e, k, u;
                if (GetProcessTimes(h, &c, &e, &k, &u))
                    ++ok;
                else if (GetLastError() == ERROR_INVALID_HANDLE)
                    ++invalid;
                else
                    ++other;
            }
        });
    // Close only once the queries run, and stop only once they have seen the
    // handle closed (or after 20 s on a machine too loaded to schedule them).
    const auto until = [](const std::atomic<int>& n) {
        for (const auto deadline = steady_clock::now() + 20s; n == 0 && steady_clock::now() < deadline;)
            std::this_thread::sleep_for(1ms);
    };
    until(ok);
    EXPECT_TRUE(CloseHandle(h));
    until(invalid);
    stop = true;
    for (auto& t : ts) t.join();
    EXPECT_GT(ok.load(), 0);
    EXPECT_GT(invalid.load(), 0);
    EXPECT_EQ(other.load(), 0);
}

TEST(Win32Cxx, NoDescriptorsLeak) {
    {  // warm up: the exit watcher's epoll descriptor is created once
        child_process ch("0");
        ASSERT_TRUE(ch.ok);
        WaitForSingleObject(ch.pi.hProcess, INFINITE);
    }
    // The exit monitor releases an ended child's descriptors once it has its
    // eBPF end, which can come up to 2 s after the wait returned.
    const int before = testing_helpers::settled_fd_count();
    for (int i = 0; i < 10; ++i) {
        child_process ch("0");
        ASSERT_TRUE(ch.ok);
        ASSERT_EQ(WaitForSingleObject(ch.pi.hProcess, INFINITE), WAIT_OBJECT_0);
        FILETIME c, e, k, u;
        ASSERT_TRUE(GetProcessTimes(ch.pi.hProcess, &c, &e, &k, &u));
        HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentProcessId());
        HANDLE t = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentThreadId());
        ASSERT_TRUE(p && t);
        ASSERT_TRUE(CloseHandle(p) && CloseHandle(t));
        PEPROCESS ep = nullptr;
        ASSERT_EQ(
            PsLookupProcessByProcessId(reinterpret_cast<HANDLE>(static_cast<ULONG_PTR>(GetCurrentProcessId())), &ep),
            STATUS_SUCCESS);
        ObDereferenceObject(ep);
    }
    STARTUPINFOA si{};
    si.cb = sizeof si;
    PROCESS_INFORMATION pi{};
    char missing[] = "proctimes-no-such-program-4711";
    EXPECT_FALSE(CreateProcessA(nullptr, missing, nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi));
    // Every child's descriptors are closed, none left behind.
    EXPECT_EQ(testing_helpers::settled_fd_count(), before);
}

TEST(Win32Cxx, CreateProcessRefusesWhatItCannotHonour) {
    STARTUPINFOA si{};
    si.cb = sizeof si;
    PROCESS_INFORMATION pi{};
    std::string cmd = std::string(PROCTIMES_CPU_BURNER) + " 0";
    si.dwFlags = STARTF_USESTDHANDLES;
    SetLastError(0);
    EXPECT_FALSE(CreateProcessA(nullptr, cmd.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    si.dwFlags = STARTF_USESHOWWINDOW;  // harmless: ignored
    si.wShowWindow = SW_HIDE;
    ASSERT_TRUE(CreateProcessA(nullptr, cmd.data(), nullptr, nullptr, FALSE, NORMAL_PRIORITY_CLASS, nullptr, nullptr,
                               &si, &pi));
    EXPECT_EQ(WaitForSingleObject(pi.hProcess, INFINITE), WAIT_OBJECT_0);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    char env[] = "A=1\0";  // UTF-16 blocks are not supported
    SetLastError(0);
    EXPECT_FALSE(CreateProcessA(nullptr, cmd.data(), nullptr, nullptr, FALSE, CREATE_UNICODE_ENVIRONMENT, env, nullptr,
                                &si, &pi));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    // A directory is not a program.
    SetLastError(0);
    EXPECT_FALSE(CreateProcessA("/tmp", nullptr, nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    // Neither is an executable file in no known format.
    char path[] = "/tmp/proctimes-badexe-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "\x01\x02garbage", 9), 9);
    ::fchmod(fd, 0755);
    ::close(fd);
    SetLastError(0);
    const BOOL ok = CreateProcessA(path, nullptr, nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi);
    const DWORD err = GetLastError();
    ::unlink(path);
    EXPECT_FALSE(ok);
    EXPECT_EQ(err, static_cast<DWORD>(ERROR_BAD_EXE_FORMAT));
}

TEST(Win32Cxx, CallingThreadTimesCostNextToItsSources) {
    // Recorded, not asserted (speed belongs to benchmarks, bench/core_bench):
    // the cost of GetThreadTimes(GetCurrentThread()) next to the getrusage
    // that gives its split (its total comes from the thread CPU clock).
    constexpr int n = 200'000;
    FILETIME c, e, k, u;
    rusage ru{};
    auto time_it = [&](auto&& f) {
        auto best = nanoseconds::max();
        for (int round = 0; round < 5; ++round) {
            const auto t0 = steady_clock::now();
            for (int i = 0; i < n; ++i) f();
            best = std::min(best, (steady_clock::now() - t0) / n);
        }
        return best;
    };
    const auto raw = time_it([&] { ::getrusage(RUSAGE_THREAD, &ru); });
    const auto api = time_it([&] { GetThreadTimes(GetCurrentThread(), &c, &e, &k, &u); });
    RecordProperty("getrusage_ns", std::to_string(raw.count()));
    RecordProperty("GetThreadTimes_ns", std::to_string(api.count()));
    std::printf("getrusage(RUSAGE_THREAD): %lld ns, GetThreadTimes(GetCurrentThread()): %lld ns (%.2fx)\n",
                static_cast<long long>(raw.count()), static_cast<long long>(api.count()),
                static_cast<double>(api.count()) / static_cast<double>(raw.count()));
    EXPECT_GT(ft64(u) + ft64(k), 0u);
}

TEST(Win32Cxx, CallingThreadTimesAreCurrentNotAsOfTheLastTick) {
    // 1 ms asleep, then 3 ms of CPU, 200 times: every run is shorter than a
    // tick. GetThreadTimes(GetCurrentThread()) must see all of each run, as
    // the thread CPU clock read between the two calls does (it saw about 40 %
    // when it came from getrusage(RUSAGE_THREAD) alone).
    FILETIME c, e, k0, u0, k1, u1;
    ULONGLONG seen = 0;
    nanoseconds spun{0};
    for (int i = 0; i < 200; ++i) {
        std::this_thread::sleep_for(1ms);
        ASSERT_TRUE(GetThreadTimes(GetCurrentThread(), &c, &e, &k0, &u0));
        const auto t0 = proctimes::thread_cpu_clock::now();
        testing_helpers::spin_without_syscalls(3ms);  // a CPU-clock read would update the runtime
        ASSERT_TRUE(GetThreadTimes(GetCurrentThread(), &c, &e, &k1, &u1));
        const auto t1 = proctimes::thread_cpu_clock::now();
        ASSERT_GE(ft64(k1), ft64(k0));
        ASSERT_GE(ft64(u1), ft64(u0));
        seen += (ft64(k1) + ft64(u1)) - (ft64(k0) + ft64(u0));
        spun += t1 - t0;
    }
    // Short only by FILETIME truncation (100 ns a call) and the tail of the
    // second call: 90 % cannot flake.
    EXPECT_GE(static_cast<long long>(seen) * 100, static_cast<long long>(spun.count()) * 9 / 10)
        << "saw " << seen / 10'000 << " ms of " << spun.count() / 1'000'000 << " ms";
}

namespace {
// In a forked child: CreateProcessA of a program that exits 5 succeeds, the
// wait and the exit code work, and the times that could not be read are
// refused with `times_error` as the last error, not made up.
std::string create_process_reports_a_running_child(DWORD times_error) {
    STARTUPINFOA si{};
    si.cb = sizeof si;
    PROCESS_INFORMATION pi{};
    char cmd[] = "sh -c \"exit 5\"";
    if (!CreateProcessA(nullptr, cmd, nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi))
        return "CreateProcessA failed for a program that ran: " + std::to_string(GetLastError());
    if (WaitForSingleObject(pi.hProcess, INFINITE) != WAIT_OBJECT_0) return "wait failed";
    DWORD code = 0;
    if (!GetExitCodeProcess(pi.hProcess, &code) || code != 5) return "exit code " + std::to_string(code);
    FILETIME c{}, e{}, k{}, u{};
    SetLastError(0);
    if (GetProcessTimes(pi.hProcess, &c, &e, &k, &u)) return "times made up without its own values";
    if (GetLastError() != times_error) return "GetProcessTimes error " + std::to_string(GetLastError());
    SetLastError(0);
    if (GetThreadTimes(pi.hThread, &c, &e, &k, &u) || GetLastError() != times_error)
        return "GetThreadTimes error " + std::to_string(GetLastError());
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    return "";
}
}  // namespace

TEST(Win32Cxx, CreateProcessSucceedsWhenDescriptorsRunOutAfterTheExec) {
    if (test_in_child::descriptor_exhaustion_skip_reason)
        GTEST_SKIP() << test_in_child::descriptor_exhaustion_skip_reason;
    const auto r = test_in_child::run([] {
        if (!test_in_child::leave_free_descriptors(3)) return std::string("cannot set the limit");
        return create_process_reports_a_running_child(ERROR_TOO_MANY_OPEN_FILES);
    });
    EXPECT_TRUE(r.ok()) << r.why();
}

TEST(Win32Cxx, ExitCodeOfACreateProcessChildIsUnknownWhenSigchldIsIgnored) {
    // The kernel reaps the child itself: GetExitCodeProcess fails (50)
    // rather than answer a made-up 0, while the wait still succeeds.
    const auto r = test_in_child::run([] {
        std::signal(SIGCHLD, SIG_IGN);
        STARTUPINFOA si{};
        si.cb = sizeof si;
        PROCESS_INFORMATION pi{};
        char cmd[] = "sh -c \"exit 5\"";
        if (!CreateProcessA(nullptr, cmd, nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi))
            return "CreateProcessA: " + std::to_string(GetLastError());
        if (WaitForSingleObject(pi.hProcess, INFINITE) != WAIT_OBJECT_0) return std::string("wait failed");
        DWORD code = 1234;
        SetLastError(0);
        const BOOL ok = GetExitCodeProcess(pi.hProcess, &code);
        if (ok && code != 5) return "a made-up exit code " + std::to_string(code);
        if (!ok && GetLastError() != ERROR_NOT_SUPPORTED) return "error " + std::to_string(GetLastError());
        CloseHandle(pi.hThread);
        CloseHandle(pi.hProcess);
        return std::string();
    });
    EXPECT_TRUE(r.ok()) << r.why();
}

// ---- exit instants and final values ----------------------------------------------------

namespace {

bool has_cap_net_admin() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("CapEff:", 0) == 0)
            return (std::stoull(line.substr(7), nullptr, 16) >> 12) & 1;  // CAP_NET_ADMIN
    return false;
}

bool in_initial_pid_namespace() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("NSpid:", 0) == 0)
            return line.find_first_of(" \t", line.find_first_not_of(" \t", 6)) == std::string::npos;
    return false;
}

// Why exit records cannot be used here, or "" when they can (checked without
// the library: the tests must fail, not skip, if the layer does not turn them on).
std::string why_no_exit_records() {
    if (const char* v = std::getenv("PROCTIMES_EXIT_RECORDS"); v && std::string(v) != "1" && std::string(v) != "on")
        return "PROCTIMES_EXIT_RECORDS is set to opt out";
    if (!has_cap_net_admin()) return "needs CAP_NET_ADMIN (the taskstats listener)";
    if (!in_initial_pid_namespace()) return "needs the initial pid namespace";
    if (::access("/proc/self/task", F_OK) != 0) return "no /proc";
    return "";
}

}  // namespace

TEST(Win32Exit, AnEndedProcessAlwaysHasAnExitTimeAfterItsCreation) {
    // The consistency rule: once GetExitCodeProcess says it ended, the exit
    // time is non-zero and >= creation — also when nothing watched it (no
    // monitor) and when it was a zombie before the handle was opened.
    for (const bool monitor : {false, true}) {
        SCOPED_TRACE(monitor ? "monitor on" : "monitor off");
        testing_helpers::forked ch([] { return 5; });
        ch.start();
        ch.wait_exited_unreaped();
        std::this_thread::sleep_for(50ms);  // a zombie for a while: the handle sees it late
        proctimes::set_exit_monitor_enabled(monitor);
        HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, static_cast<DWORD>(ch.pid()));
        proctimes::set_exit_monitor_enabled(true);
        ASSERT_NE(h, nullptr) << GetLastError();
        DWORD code = 0;
        ASSERT_TRUE(GetExitCodeProcess(h, &code)) << GetLastError();
        EXPECT_EQ(code, 5u);
        FILETIME c, e, k, u;
        ASSERT_TRUE(GetProcessTimes(h, &c, &e, &k, &u)) << GetLastError();
        EXPECT_NE(ft64(e), 0u) << "ended, so it has an exit time";
        EXPECT_GE(ft64(e), ft64(c));
        // And it says what that time is: stamped when seen, with how early it can have been.
        DWORD source = 99;
        FILETIME earliest{};
        ASSERT_TRUE(proctimes_GetExitTimeInfo(h, &source, &earliest)) << GetLastError();
        EXPECT_EQ(source, PROCTIMES_EXIT_TIME_OBSERVED);
        EXPECT_GE(ft64(earliest), ft64(c));
        EXPECT_LE(ft64(earliest), ft64(e));
        EXPECT_GE(ft64(e) - ft64(earliest), 50 * ms_ticks) << "a zombie for 50 ms before it was seen";
        ch.reap();
        EXPECT_TRUE(CloseHandle(h));
    }
}

TEST(Win32Exit, ExitTimeInfoOnRunningTasksAndBadArguments) {
    DWORD source = 99;
    FILETIME earliest{1, 1};
    ASSERT_TRUE(proctimes_GetExitTimeInfo(GetCurrentProcess(), &source, &earliest));
    EXPECT_EQ(source, PROCTIMES_EXIT_TIME_NONE);
    EXPECT_EQ(ft64(earliest), 0u);
    ASSERT_TRUE(proctimes_GetExitTimeInfo(GetCurrentThread(), &source, &earliest));
    EXPECT_EQ(source, PROCTIMES_EXIT_TIME_NONE);
    SetLastError(0);
    EXPECT_FALSE(proctimes_GetExitTimeInfo(nullptr, &source, &earliest));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    EXPECT_FALSE(proctimes_GetExitTimeInfo(GetCurrentProcess(), nullptr, &earliest));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_NOACCESS));
    HANDLE h = OpenProcess(PROCESS_VM_READ, FALSE, static_cast<DWORD>(::getppid()));
    ASSERT_NE(h, nullptr);
    EXPECT_FALSE(proctimes_GetExitTimeInfo(h, &source, &earliest));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    EXPECT_TRUE(CloseHandle(h));
}

TEST(Win32Exit, AnExitedThreadReportsItsFinalCpuTime) {
    // Windows gives an exited thread's final times. The kernel frees a
    // thread's accounting as it ends; the Win32 layer turns exit records on
    // where permitted, which carry them (before: the last sample, here ~0).
    if (auto why = why_no_exit_records(); !why.empty()) GTEST_SKIP() << why;
    std::atomic<DWORD> tid{0};
    std::atomic<bool> go{false};
    std::thread t([&] {
        tid = GetCurrentThreadId();
        while (!go) std::this_thread::sleep_for(1ms);
        testing_helpers::burn_thread_cpu(50ms);
    });
    while (tid == 0) std::this_thread::sleep_for(1ms);
    HANDLE h = OpenThread(THREAD_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, tid);
    ASSERT_NE(h, nullptr) << GetLastError();
    go = true;
    t.join();
    ASSERT_EQ(WaitForSingleObject(h, 20000), WAIT_OBJECT_0);
    FILETIME c, e, k, u;
    ASSERT_TRUE(GetThreadTimes(h, &c, &e, &k, &u)) << GetLastError();
    EXPECT_GE(ft64(k) + ft64(u), 50 * ms_ticks) << "the final value, not the last sample";
    EXPECT_GE(ft64(e), ft64(c));
    DWORD source = 0;
    FILETIME earliest{};
    ASSERT_TRUE(proctimes_GetExitTimeInfo(h, &source, &earliest));
    EXPECT_EQ(source, PROCTIMES_EXIT_TIME_RECORDED);
    EXPECT_TRUE(CloseHandle(h));
}

TEST(Win32Exit, AChildReapedAtOnceByTheCallerReportsItsFinalCpuTime) {
    // Not a CreateProcess child: the caller forks it and reaps it with
    // waitpid the moment it ends, usually before the exit monitor reads the
    // zombie. Its exit record still has its final values.
    if (auto why = why_no_exit_records(); !why.empty()) GTEST_SKIP() << why;
    int one_thread = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
        SCOPED_TRACE("attempt " + std::to_string(attempt));
        int p[2];
        ASSERT_EQ(::pipe(p), 0);
        testing_helpers::forked ch([w = p[1]] {
            testing_helpers::burn_thread_cpu(120ms);
            // Its thread count at its end: ThreadSanitizer's runtime adds a
            // helper thread to a process forked from a one-thread process.
            const int n = testing_helpers::threads_now();
            return ::write(w, &n, sizeof n) == static_cast<ssize_t>(sizeof n) ? 0 : 3;
        });
        HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, static_cast<DWORD>(ch.pid()));
        ASSERT_NE(h, nullptr) << GetLastError();
        ch.start();
        ch.reap();  // blocked in waitpid when it ends: reaped at once
        int threads = 0;
        EXPECT_EQ(::read(p[0], &threads, sizeof threads), static_cast<ssize_t>(sizeof threads));
        ::close(p[0]);
        ::close(p[1]);
        ASSERT_EQ(WaitForSingleObject(h, 20000), WAIT_OBJECT_0);
        FILETIME c, e, k, u;
        ASSERT_TRUE(GetProcessTimes(h, &c, &e, &k, &u)) << GetLastError();
        EXPECT_GE(ft64(e), ft64(c));
        if (threads != 1) {
            // Records give a process's final values only when it only ever
            // had one thread (docs/EXIT.md): not the case under test.
            EXPECT_TRUE(CloseHandle(h));
            continue;
        }
        ++one_thread;
        EXPECT_GE(ft64(k) + ft64(u), 120 * ms_ticks) << "the final value, not the last sample";
        EXPECT_TRUE(CloseHandle(h));
    }
    if (one_thread == 0) GTEST_SKIP() << "every child had a second thread (a sanitizer's): nothing tested";
}

TEST(Win32Exit, AnExplicitChoiceWinsOverTheLayersDefault) {
    proctimes::set_exit_records_enabled(false);
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(::getppid()));
    ASSERT_NE(h, nullptr);
    EXPECT_FALSE(proctimes::exit_records_enabled());
    EXPECT_TRUE(CloseHandle(h));
    proctimes::set_exit_records_enabled(true);
    EXPECT_TRUE(proctimes::exit_records_enabled());
}

TEST(Win32Exit, OptOutWithTheEnvironment) {
    // Each in a fresh process (the switch is decided once per process).
    const std::string child = std::string("'") + PROCTIMES_EXIT_SWITCH_CHILD + "'";
    EXPECT_EQ(std::system(("PROCTIMES_EXIT_RECORDS=0 " + child + " opt-out").c_str()), 0);
    // And without the opt-out the layer turns them on (an undecided process).
    EXPECT_EQ(std::system(("env -u PROCTIMES_EXIT_RECORDS " + child + " default").c_str()), 0);
}
