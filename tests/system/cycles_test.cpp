// SPDX-License-Identifier: MIT
// Cycle counts on this machine: the TSC rate is plausible, counts track CPU
// time at that rate, and the calling thread's count strictly increases.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "proctimes/clock.hpp"
#include "proctimes/cycles.hpp"
#include "proctimes/linux.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;

TEST(TscRate, PlausibleAndFixed) {
    const tsc_rate& r = get_tsc_rate();
    RecordProperty("tsc_hz", std::to_string(r.hz));
    RecordProperty("tsc_source", std::string(to_string(r.source)));
#if defined(__x86_64__) || defined(__aarch64__)
    EXPECT_NE(r.source, tsc_rate_source::nominal);
#endif
#if defined(__x86_64__)
    // Every x86-64 TSC runs between 100 MHz and 10 GHz.
    EXPECT_GE(r.hz, 100'000'000u);
    EXPECT_LE(r.hz, 10'000'000'000u);
#endif
    EXPECT_EQ(&get_tsc_rate(), &r);
    EXPECT_EQ(get_tsc_rate().hz, r.hz);
}

#if defined(__x86_64__)
TEST(TscRate, AgreesWithTheCounterOverAnInterval) {
    // Independent check of the rate: rdtsc against CLOCK_MONOTONIC_RAW over
    // ~200 ms. Each end pairs a counter read with the midpoint of the two clock
    // reads around it, kept only when they are at most 20 us apart, so a
    // preemption inside a pair cannot skew the rate. 1% is far looser than
    // calibration error and far tighter than any mistake (a wrong unit, a wrong
    // CPUID leaf) would be.
    struct pair {
        long long ns;
        unsigned long long tsc;
    };
    const auto sample = [] {
        for (;;) {
            timespec a{}, b{};
            ::clock_gettime(CLOCK_MONOTONIC_RAW, &a);
            const unsigned long long tsc = __builtin_ia32_rdtsc();
            ::clock_gettime(CLOCK_MONOTONIC_RAW, &b);
            const long long na = a.tv_sec * 1'000'000'000LL + a.tv_nsec;
            const long long nb = b.tv_sec * 1'000'000'000LL + b.tv_nsec;
            if (nb - na <= 20'000) return pair{na + (nb - na) / 2, tsc};
        }
    };
    const pair first = sample();
    std::this_thread::sleep_for(200ms);
    const pair last = sample();
    const double secs = static_cast<double>(last.ns - first.ns) * 1e-9;
    const double measured = static_cast<double>(last.tsc - first.tsc) / secs;
    EXPECT_NEAR(measured / static_cast<double>(get_tsc_rate().hz), 1.0, 0.01);
}
#endif

TEST(ThreadCycles, StrictlyIncreaseBetweenCalls) {
    std::uint64_t prev = this_thread::cycles();
    for (int i = 0; i < 100'000; ++i) {
        const std::uint64_t now = this_thread::cycles();
        ASSERT_GT(now, prev);
        prev = now;
    }
}

TEST(ThreadCycles, TrackThreadCpuTime) {
    const std::uint64_t hz = get_tsc_rate().hz;
    const auto cpu0 = thread_cpu_clock::now();
    const std::uint64_t c0 = this_thread::cycles();
    testing_helpers::burn_thread_cpu(100ms);
    const std::uint64_t c1 = this_thread::cycles();
    const auto cpu1 = thread_cpu_clock::now();
    // The cycle reads are bracketed by the clock reads.
    const auto used = cpu1 - cpu0;
    const std::uint64_t upper = cycles_from_cpu_time(used, hz) + 2;
    const std::uint64_t lower = cycles_from_cpu_time(100ms, hz);
    EXPECT_GE(c1 - c0, lower);
    EXPECT_LE(c1 - c0, upper);
}

TEST(ThreadCycles, EachThreadCountsItsOwn) {
    // A fresh thread that has done almost nothing has far fewer cycles than
    // this one after a busy loop.
    testing_helpers::burn_thread_cpu(30ms);
    const std::uint64_t mine = this_thread::cycles();
    std::uint64_t theirs = 0;
    std::thread([&] { theirs = this_thread::cycles(); }).join();
    EXPECT_LT(theirs, mine);
    EXPECT_GT(theirs, 0u);
}

TEST(ProcessCycles, IncludeAllThreadsAndNeverDecrease) {
    const std::uint64_t hz = get_tsc_rate().hz;
    const std::uint64_t before = this_process::cycles();
    std::thread t([] { testing_helpers::burn_thread_cpu(60ms); });
    t.join();
    const std::uint64_t after = this_process::cycles();
    EXPECT_GE(after - before, cycles_from_cpu_time(60ms, hz));
    std::uint64_t prev = after;
    for (int i = 0; i < 1000; ++i) {
        const std::uint64_t now = this_process::cycles();
        ASSERT_GE(now, prev);
        prev = now;
    }
}

TEST(ThreadCycles, RestartInAForkedChild) {
    testing_helpers::burn_thread_cpu(50ms);
    const std::uint64_t parent = this_thread::cycles();
    const std::uint64_t parent_proc = this_process::cycles();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // The child's thread is new: its count starts near zero, not at the
        // parent's value plus one.
        const bool ok = this_thread::cycles() < parent / 2 && this_process::cycles() < parent_proc / 2;
        ::_exit(ok ? 0 : 1);
    }
    ASSERT_GT(pid, 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(HardwareCycleCounter, StatusIsAnAnswerNotACrash) {
    auto s = hardware_cycle_counter_status();
    if (!s) {
        RecordProperty("perf_hw_cycles", s.error().message());
        const int e = s.error().value();
        EXPECT_TRUE(e == ENOENT || e == EACCES || e == EPERM || e == EOPNOTSUPP || e == ENODEV || e == ENOSYS) << e;
    }
}
