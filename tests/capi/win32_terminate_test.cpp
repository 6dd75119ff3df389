// SPDX-License-Identifier: MIT
// TerminateProcess and DuplicateHandle from C++: processes this layer did not
// start, the caller terminating itself, and duplicated handles used from
// other threads and after their source is closed.
#include <proctimes/windows.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "burn.hpp"

using namespace std::chrono_literals;

namespace {

ULONGLONG ft64(const FILETIME& ft) { return (ULONGLONG{ft.dwHighDateTime} << 32) | ft.dwLowDateTime; }

// A process forked here, not by CreateProcess: it sleeps until killed.
struct forked_sleeper {
    pid_t pid = ::fork();
    forked_sleeper() {
        if (pid == 0) {
            for (;;) ::pause();
        }
    }
    int reap() {
        int st = 0;
        while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        pid = -1;
        return st;
    }
    ~forked_sleeper() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            reap();
        }
    }
};

}  // namespace

TEST(Win32Terminate, AProcessThisLayerDidNotStart) {
    forked_sleeper s;
    ASSERT_GT(s.pid, 0);
    HANDLE h = OpenProcess(PROCESS_TERMINATE | SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE,
                           static_cast<DWORD>(s.pid));
    ASSERT_NE(h, nullptr) << GetLastError();
    ASSERT_TRUE(TerminateProcess(h, 5)) << GetLastError();
    EXPECT_EQ(WaitForSingleObject(h, 20000), WAIT_OBJECT_0);
    // Its parent (this test) sees SIGKILL; the handle reports 128 + 9.
    DWORD code = 0;
    ASSERT_TRUE(GetExitCodeProcess(h, &code)) << GetLastError();
    EXPECT_EQ(code, 128u + SIGKILL);
    SetLastError(0);
    EXPECT_FALSE(TerminateProcess(h, 5));  // ended
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    const int st = s.reap();
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    SetLastError(0);
    EXPECT_FALSE(TerminateProcess(h, 5));  // reaped
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    CloseHandle(h);
}

TEST(Win32Terminate, TheCallerEndsItselfWithTheCode) {
    for (const bool pseudo : {true, false}) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            HANDLE h = pseudo ? GetCurrentProcess() : OpenProcess(PROCESS_TERMINATE, FALSE, GetCurrentProcessId());
            TerminateProcess(h, 42);
            ::_exit(1);  // not reached
        }
        int st = 0;
        while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        EXPECT_TRUE(WIFEXITED(st)) << "pseudo=" << pseudo;
        EXPECT_EQ(WEXITSTATUS(st), 42) << "pseudo=" << pseudo;
    }
    // Without the right, the caller is not ended.
    HANDLE q = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentProcessId());
    ASSERT_NE(q, nullptr);
    SetLastError(0);
    EXPECT_FALSE(TerminateProcess(q, 42));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    CloseHandle(q);
}

// GetCurrentThread() duplicated in thread A names A, wherever it is used.
TEST(Win32Duplicate, ADuplicatedThreadPseudoHandleNamesTheThreadThatMadeIt) {
    HANDLE dup = nullptr;
    std::atomic<bool> ready{false}, stop{false};
    DWORD worker_id = 0;
    std::thread worker([&] {
        worker_id = GetCurrentThreadId();
        testing_helpers::burn_thread_cpu(100ms);
        DuplicateHandle(GetCurrentProcess(), GetCurrentThread(), GetCurrentProcess(), &dup, 0, FALSE,
                        DUPLICATE_SAME_ACCESS);
        ready = true;
        while (!stop) std::this_thread::sleep_for(1ms);
    });
    while (!ready) std::this_thread::sleep_for(1ms);
    ASSERT_NE(dup, nullptr);
    EXPECT_EQ(GetThreadId(dup), worker_id);
    FILETIME c, x, k, u, mc, mx, mk, mu;
    ASSERT_TRUE(GetThreadTimes(dup, &c, &x, &k, &u));
    ASSERT_TRUE(GetThreadTimes(GetCurrentThread(), &mc, &mx, &mk, &mu));
    EXPECT_GE(ft64(k) + ft64(u), 100 * 10'000u);  // the worker's time, not this thread's
    EXPECT_EQ(ft64(x), 0u);
    stop = true;
    worker.join();
    // After the thread ends the handle still answers, with an exit time.
    EXPECT_EQ(WaitForSingleObject(dup, 20000), WAIT_OBJECT_0);
    ASSERT_TRUE(GetThreadTimes(dup, &c, &x, &k, &u)) << GetLastError();
    EXPECT_GE(ft64(x), ft64(c));
    EXPECT_TRUE(CloseHandle(dup));
}

TEST(Win32Duplicate, DuplicatesOutliveTheirSourceAndAreIndependent) {
    HANDLE self = GetCurrentProcess();
    HANDLE t = OpenThread(THREAD_ALL_ACCESS, FALSE, GetCurrentThreadId());
    ASSERT_NE(t, nullptr);
    HANDLE d1 = nullptr, d2 = nullptr;
    ASSERT_TRUE(DuplicateHandle(self, t, self, &d1, 0, FALSE, DUPLICATE_SAME_ACCESS));
    ASSERT_TRUE(DuplicateHandle(self, d1, self, &d2, THREAD_QUERY_LIMITED_INFORMATION, FALSE, DUPLICATE_CLOSE_SOURCE));
    EXPECT_NE(d1, t);
    EXPECT_NE(d2, d1);
    EXPECT_TRUE(CloseHandle(t));
    SetLastError(0);
    EXPECT_FALSE(CloseHandle(d1));  // closed by DUPLICATE_CLOSE_SOURCE
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    FILETIME c, x, k, u;
    EXPECT_TRUE(GetThreadTimes(d2, &c, &x, &k, &u));
    EXPECT_EQ(GetThreadId(d2), GetCurrentThreadId());
    SetLastError(0);
    EXPECT_EQ(WaitForSingleObject(d2, 0), WAIT_FAILED);  // no SYNCHRONIZE asked for
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    EXPECT_TRUE(CloseHandle(d2));
}
