// SPDX-License-Identifier: MIT
// The calling process and thread through every name Windows code has for
// them: the pseudo-handles, real handles from OpenProcess(GetCurrentProcessId())
// and OpenThread(GetCurrentThreadId()), and the C++ handles from
// process::open(getpid()) and thread::open(gettid()). On Windows these are
// one object, so mixing them never shows time going backwards. Also: NULL
// output pointers, and what the first GetThreadTimes of a thread costs.
#include <proctimes/windows.h>
#include <proctimes/process.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "burn.hpp"
#include "in_child.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;

namespace {

ULONGLONG ft64(const FILETIME& ft) { return (ULONGLONG{ft.dwHighDateTime} << 32) | ft.dwLowDateTime; }
constexpr DWORD poison = 0xA5A5A5A5u;
FILETIME poisoned() { return FILETIME{poison, poison}; }
bool untouched(const FILETIME& ft) { return ft.dwLowDateTime == poison && ft.dwHighDateTime == poison; }

std::int64_t clock_ns(clockid_t c) {
    timespec t{};
    ::clock_gettime(c, &t);
    return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// About `d` of CPU time in the kernel: copying from /dev/zero is the kernel
// clearing user memory.
void burn_kernel(int zero_fd, nanoseconds d) {
    static char buf[1 << 16];
    const std::int64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < d.count()) {
        if (::read(zero_fd, buf, sizeof buf) < 0) break;
    }
}

// A running check that kernel and user time never go backwards.
struct never_backwards {
    ULONGLONG kernel = 0, user = 0;
    int kernel_back = 0, user_back = 0;
    ULONGLONG worst_kernel = 0, worst_user = 0;
    void see(ULONGLONG k, ULONGLONG u) {
        if (k < kernel) {
            ++kernel_back;
            worst_kernel = std::max(worst_kernel, kernel - k);
        }
        if (u < user) {
            ++user_back;
            worst_user = std::max(worst_user, user - u);
        }
        kernel = std::max(kernel, k);
        user = std::max(user, u);
    }
    void see(const FILETIME& k, const FILETIME& u) { see(ft64(k), ft64(u)); }
    [[nodiscard]] std::string report() const {
        return "kernel back " + std::to_string(kernel_back) + "x (worst " + std::to_string(worst_kernel) +
               " x100ns), user back " + std::to_string(user_back) + "x (worst " + std::to_string(worst_user) +
               " x100ns)";
    }
    [[nodiscard]] bool ok() const { return kernel_back == 0 && user_back == 0; }
};

constexpr int mixed_iterations = 4000;

}  // namespace

// ---- NULL outputs: the pointers given are filled, the call succeeds ---------------------

TEST(Win32Self, GetProcessTimesFillsOnlyTheOutputsGiven) {
    HANDLE real = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentProcessId());
    ASSERT_NE(real, nullptr);
    for (HANDLE h : {GetCurrentProcess(), real}) {
        testing_helpers::burn_process_cpu(20ms);
        FILETIME c = poisoned(), x = poisoned(), k = poisoned(), u = poisoned();
        SetLastError(0);
        ASSERT_TRUE(GetProcessTimes(h, nullptr, nullptr, &k, &u)) << GetLastError();
        EXPECT_EQ(GetLastError(), 0u);
        EXPECT_FALSE(untouched(k));
        EXPECT_FALSE(untouched(u));
        const auto cpu_after = static_cast<ULONGLONG>(clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 100);
        EXPECT_GE(ft64(k) + ft64(u), 20 * 10'000u);  // at least the 20 ms just burned
        EXPECT_LE(ft64(k) + ft64(u), cpu_after + 10);

        ASSERT_TRUE(GetProcessTimes(h, &c, nullptr, nullptr, nullptr));
        ASSERT_TRUE(GetProcessTimes(h, nullptr, &x, nullptr, nullptr));
        ASSERT_TRUE(GetProcessTimes(h, nullptr, nullptr, nullptr, nullptr));
        FILETIME c2, x2, k2, u2;
        ASSERT_TRUE(GetProcessTimes(h, &c2, &x2, &k2, &u2));
        EXPECT_EQ(ft64(c), ft64(c2));  // the creation instant never changes
        EXPECT_EQ(ft64(x), 0u);        // running
    }
    // The handle is still checked first.
    SetLastError(0);
    EXPECT_FALSE(GetProcessTimes(nullptr, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    HANDLE no_query = OpenProcess(SYNCHRONIZE, FALSE, GetCurrentProcessId());
    ASSERT_NE(no_query, nullptr);
    EXPECT_FALSE(GetProcessTimes(no_query, nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    CloseHandle(no_query);
    CloseHandle(real);
}

TEST(Win32Self, GetThreadTimesFillsOnlyTheOutputsGiven) {
    HANDLE real = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentThreadId());
    ASSERT_NE(real, nullptr);
    for (HANDLE h : {GetCurrentThread(), real}) {
        testing_helpers::burn_thread_cpu(20ms);
        FILETIME c = poisoned(), x = poisoned(), k = poisoned(), u = poisoned();
        SetLastError(0);
        ASSERT_TRUE(GetThreadTimes(h, nullptr, nullptr, &k, &u)) << GetLastError();
        EXPECT_EQ(GetLastError(), 0u);
        EXPECT_GE(ft64(k) + ft64(u), 20 * 10'000u);
        EXPECT_LE(ft64(k) + ft64(u), static_cast<ULONGLONG>(clock_ns(CLOCK_THREAD_CPUTIME_ID) / 100) + 10);
        ASSERT_TRUE(GetThreadTimes(h, &c, nullptr, nullptr, nullptr));
        ASSERT_TRUE(GetThreadTimes(h, nullptr, &x, nullptr, nullptr));
        ASSERT_TRUE(GetThreadTimes(h, nullptr, nullptr, nullptr, nullptr));
        FILETIME c2, x2, k2, u2;
        ASSERT_TRUE(GetThreadTimes(h, &c2, &x2, &k2, &u2));
        EXPECT_EQ(ft64(c), ft64(c2));
        EXPECT_EQ(ft64(x), 0u);
    }
    // Another thread, through its handle.
    std::atomic<bool> stop{false};
    std::atomic<DWORD> tid{0};
    std::thread t([&] {
        tid = GetCurrentThreadId();
        testing_helpers::burn_thread_cpu(10ms);
        while (!stop) std::this_thread::sleep_for(1ms);
    });
    while (tid == 0) std::this_thread::sleep_for(1ms);
    HANDLE other = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, tid);
    ASSERT_NE(other, nullptr);
    FILETIME k = poisoned(), u = poisoned();
    EXPECT_TRUE(GetThreadTimes(other, nullptr, nullptr, &k, &u)) << GetLastError();
    EXPECT_FALSE(untouched(k));
    EXPECT_FALSE(untouched(u));
    stop = true;
    t.join();
    SetLastError(0);
    EXPECT_FALSE(GetThreadTimes(GetCurrentProcess(), nullptr, nullptr, nullptr, nullptr));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    CloseHandle(other);
    CloseHandle(real);
}

// ---- one answer for "self" -------------------------------------------------------------

namespace {

using times_query = BOOL (*)(HANDLE, LPFILETIME, LPFILETIME, LPFILETIME, LPFILETIME);

// The tick-sampled utime and stime of `stat` (/proc/self/stat or
// /proc/thread-self/stat), fields 14 and 15; {0, 0} when unreadable.
std::pair<unsigned long long, unsigned long long> stat_ticks(const char* stat) {
    std::ifstream in(stat);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) return {0, 0};
    std::istringstream fields(text.substr(close + 2));
    std::string skip;
    for (int i = 3; i < 14; ++i) fields >> skip;  // state .. cmajflt
    unsigned long long utime = 0, stime = 0;
    fields >> utime >> stime;
    return {utime, stime};
}

// The pseudo-handle and a real handle to the caller, interleaved while it
// burns CPU in user and in kernel mode: neither component may go backwards.
// Each component must have moved wherever the kernel's own tick samples
// (`stat`) saw the caller in that mode: Linux splits a total by them, so on
// a loaded machine a short burn can see no tick in user mode at all.
void expect_mixed_handles_never_go_backwards(times_query query, HANDLE pseudo, HANDLE real, const char* stat) {
    ASSERT_NE(real, nullptr);
    const int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(zero, 0);
    never_backwards seen;
    FILETIME c, x, k, u;
    for (int i = 0; i < mixed_iterations; ++i) {
        if (i % 2 == 0)
            testing_helpers::burn_thread_cpu(30us);
        else
            burn_kernel(zero, 30us);
        ASSERT_TRUE(query(i % 3 == 0 ? real : pseudo, &c, &x, &k, &u));
        seen.see(k, u);
        ASSERT_TRUE(query(i % 3 == 0 ? pseudo : real, &c, &x, &k, &u));
        seen.see(k, u);
    }
    // The kernel's samples first: a query after them splits by at least as many.
    const auto [utime, stime] = stat_ticks(stat);
    ASSERT_TRUE(query(real, &c, &x, &k, &u));
    seen.see(k, u);
    ASSERT_TRUE(query(pseudo, &c, &x, &k, &u));
    seen.see(k, u);
    ::close(zero);
    CloseHandle(real);
    EXPECT_TRUE(seen.ok()) << seen.report();
    EXPECT_GT(utime + stime, 0u) << stat;
    if (stime > 0) {
        EXPECT_GT(seen.kernel, 0u);
    }
    if (utime > 0) {
        EXPECT_GT(seen.user, 0u);
    }
}

}  // namespace

TEST(Win32Self, MixedProcessHandlesNeverGoBackwards) {
    expect_mixed_handles_never_go_backwards(
        [](HANDLE h, LPFILETIME c, LPFILETIME x, LPFILETIME k, LPFILETIME u) { return GetProcessTimes(h, c, x, k, u); },
        GetCurrentProcess(), OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentProcessId()),
        "/proc/self/stat");
}

TEST(Win32Self, MixedThreadHandlesNeverGoBackwards) {
    expect_mixed_handles_never_go_backwards(
        [](HANDLE h, LPFILETIME c, LPFILETIME x, LPFILETIME k, LPFILETIME u) { return GetThreadTimes(h, c, x, k, u); },
        GetCurrentThread(), OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentThreadId()),
        "/proc/thread-self/stat");
}

TEST(Win32Self, CxxHandlesToSelfAgreeWithThisProcessAndThisThread) {
    auto p = proctimes::process::open(::getpid());
    auto t = proctimes::thread::open(static_cast<pid_t>(::gettid()));
    ASSERT_TRUE(p);
    ASSERT_TRUE(t);
    const int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(zero, 0);
    never_backwards process_seen, thread_seen;
    const auto see = [](never_backwards& s, const auto& r) {
        ASSERT_TRUE(r);
        s.see(static_cast<ULONGLONG>(r->kernel.count()), static_cast<ULONGLONG>(r->user.count()));
    };
    for (int i = 0; i < mixed_iterations; ++i) {
        if (i % 2 == 0)
            testing_helpers::burn_thread_cpu(30us);
        else
            burn_kernel(zero, 30us);
        if (i % 3 == 0) {
            see(process_seen, p->times());
            see(process_seen, proctimes::this_process::times());
            see(thread_seen, t->times());
            see(thread_seen, proctimes::this_thread::times());
        } else {
            see(process_seen, proctimes::this_process::times());
            see(process_seen, p->times());
            see(thread_seen, proctimes::this_thread::times());
            see(thread_seen, t->times());
        }
    }
    ::close(zero);
    EXPECT_TRUE(process_seen.ok()) << process_seen.report();
    EXPECT_TRUE(thread_seen.ok()) << thread_seen.report();
}

// A handle to one thread, used from another thread, answers for the thread
// it names, not for the caller.
TEST(Win32Self, AHandleToAnotherThreadIsNotSelf) {
    HANDLE main_thread = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentThreadId());
    ASSERT_NE(main_thread, nullptr);
    FILETIME c, x, k, u;
    ASSERT_TRUE(GetThreadTimes(GetCurrentThread(), &c, &x, &k, &u));
    const ULONGLONG main_before = ft64(k) + ft64(u);
    ULONGLONG seen_by_worker = 0, worker_own = 0, worker_creation = 0;
    std::thread w([&] {
        testing_helpers::burn_thread_cpu(150ms);
        FILETIME c2, x2, k2, u2;
        if (GetThreadTimes(main_thread, &c2, &x2, &k2, &u2)) seen_by_worker = ft64(k2) + ft64(u2);
        if (GetThreadTimes(GetCurrentThread(), &c2, &x2, &k2, &u2)) {
            worker_own = ft64(k2) + ft64(u2);
            worker_creation = ft64(c2);
        }
    });
    w.join();
    ASSERT_TRUE(GetThreadTimes(GetCurrentThread(), &c, &x, &k, &u));
    const ULONGLONG main_after = ft64(k) + ft64(u);
    EXPECT_GE(worker_own, 150 * 10'000u);
    EXPECT_GE(seen_by_worker, main_before);  // the main thread's values...
    EXPECT_LE(seen_by_worker, main_after);   // ...not the worker's 150 ms
    EXPECT_GE(worker_creation, ft64(c));     // the worker started after the main thread
    CloseHandle(main_thread);
}

// ---- the first GetThreadTimes of a thread ------------------------------------------------

// What the calling thread's first query reads: with no descriptor left, it
// still answers, so it opened none. Kernel and user time need no file at all;
// the main thread's creation is the process's, already known once the
// process's times were asked for.
TEST(Win32Self, FirstThreadQueryOpensNoFile) {
    if (test_in_child::descriptor_exhaustion_skip_reason)
        GTEST_SKIP() << test_in_child::descriptor_exhaustion_skip_reason;
    const auto o = test_in_child::run([]() -> std::string {
        FILETIME pc, px, pk, pu;
        if (!GetProcessTimes(GetCurrentProcess(), &pc, &px, &pk, &pu)) return "GetProcessTimes failed";
        if (!test_in_child::leave_free_descriptors(0)) return "could not limit descriptors";
        if (::open("/dev/null", O_RDONLY) >= 0) return "a descriptor was still free";
        FILETIME c, x, k, u;
        if (!GetThreadTimes(GetCurrentThread(), nullptr, nullptr, &k, &u))
            return "main thread, NULL creation: error " + std::to_string(GetLastError());
        if (!GetThreadTimes(GetCurrentThread(), &c, &x, &k, &u))
            return "main thread, every output: error " + std::to_string(GetLastError());
        if (ft64(c) != ft64(pc)) return "the main thread's creation is not the process's";
        std::string r;
#if defined(__SANITIZE_THREAD__)
        // ThreadSanitizer refuses to start a thread in a child forked from a
        // multi-threaded process: the main-thread checks above still ran.
        return r;
#endif
        std::thread t([&] {
            FILETIME k2, u2;
            ULONG64 cycles = 0;
            if (!GetThreadTimes(GetCurrentThread(), nullptr, nullptr, &k2, &u2))
                r = "new thread, NULL creation: error " + std::to_string(GetLastError());
            else if (!QueryThreadCycleTime(GetCurrentThread(), &cycles) || cycles == 0)
                r = "new thread: no cycle count";
        });
        t.join();
        return r;
    });
    EXPECT_TRUE(o.ok()) << o.why();
}
