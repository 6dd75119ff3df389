// SPDX-License-Identifier: MIT
// Cost of one timing query against the syscall it cannot avoid (the baseline)
// and against peers, in one run. bench/run.sh turns the output into ratios.
//
// Names: <group>/<what>/<threads in the target>. Groups:
//   thread_self   the calling thread       baseline clock_gettime(CLOCK_THREAD_CPUTIME_ID),
//                                          the cheapest source of a current total
//   process_self  the calling process      baseline getrusage(RUSAGE_SELF)
//   process_other another process (handle) baseline pread of a kept stat fd + one CPU-clock read
//   thread_other  a thread of another one  baseline pread of a kept task/<tid>/stat fd
//   process_busy  process_other, thread_busy  thread_other, with a target that
//                 runs: it calls sched_yield(2) in a loop, so its CPU time moves
//                 between any two queries and proctimes reads stat every time.
//                 An idle target's stat is not read again while its CPU time
//                 stands still (docs/DESIGN.md), which the *_other groups show.
#include <benchmark/benchmark.h>

#include <boost/chrono/process_cpu_clocks.hpp>
#include <boost/chrono/thread_clock.hpp>
#include <boost/timer/timer.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"
#include "proctimes/windows.h"

namespace {

// ---- targets with N threads ------------------------------------------------------

// N-1 extra threads parked in this process (for the process_self group).
void ensure_own_threads(int n) {
    static int parked = 0;  // detached: they sleep until the benchmark exits
    for (; parked < n - 1; ++parked)
        std::thread([] {
            for (;;) ::pause();
        }).detach();
}

// A child process with n threads, all asleep; killed at exit.
struct target {
    pid_t pid = -1;
    pid_t other_tid = -1;  // a non-main thread (or the main one when n == 1)
};

target child_with_threads(int n) {
    static std::map<int, target> made;
    if (auto it = made.find(n); it != made.end()) return it->second;
    int p[2];
    if (::pipe(p) != 0) std::abort();
    pid_t pid = ::fork();
    if (pid == 0) {
        pid_t tid = ::getpid();
        for (int i = 1; i < n; ++i) {
            std::thread t([&tid, p, i, n] {
                if (i == n - 1) {
                    pid_t me = static_cast<pid_t>(::gettid());
                    (void)!::write(p[1], &me, sizeof me);
                }
                for (;;) ::pause();
            });
            t.detach();
        }
        if (n == 1) (void)!::write(p[1], &tid, sizeof tid);
        for (;;) ::pause();
    }
    target t;
    t.pid = pid;
    if (::read(p[0], &t.other_tid, sizeof t.other_tid) != sizeof t.other_tid) std::abort();
    ::close(p[0]);
    ::close(p[1]);
    made[n] = t;
    static bool registered = false;
    if (!registered) {
        registered = true;
        std::atexit([] {
            for (auto& [k, v] : made) {
                ::kill(v.pid, SIGKILL);
                ::waitpid(v.pid, nullptr, 0);
            }
        });
    }
    return t;
}

clockid_t process_clock(pid_t pid) { return static_cast<clockid_t>((~static_cast<unsigned>(pid) << 3) | 2); }

// ---- the calling thread ----------------------------------------------------------

void thread_self_baseline_thread_clock(benchmark::State& s) {
    timespec ts;
    for (auto _ : s) {
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        benchmark::DoNotOptimize(ts);
    }
}
// The split's source: alone it lags by up to a tick (docs/DESIGN.md).
void thread_self_getrusage(benchmark::State& s) {
    rusage ru;
    for (auto _ : s) {
        ::getrusage(RUSAGE_THREAD, &ru);
        benchmark::DoNotOptimize(ru);
    }
}
void thread_self_proctimes(benchmark::State& s) {
    for (auto _ : s) benchmark::DoNotOptimize(proctimes::this_thread::times());
}
void thread_self_win32_GetThreadTimes(benchmark::State& s) {
    FILETIME c, e, k, u;
    for (auto _ : s) benchmark::DoNotOptimize(GetThreadTimes(GetCurrentThread(), &c, &e, &k, &u));
}
void thread_self_boost_thread_clock(benchmark::State& s) {
    for (auto _ : s) benchmark::DoNotOptimize(boost::chrono::thread_clock::now());
}
void thread_self_proctimes_cpu_clock(benchmark::State& s) {
    for (auto _ : s) benchmark::DoNotOptimize(proctimes::thread_cpu_clock::now());
}

// ---- the calling process -------------------------------------------------------

void process_self_baseline_getrusage(benchmark::State& s) {
    ensure_own_threads(static_cast<int>(s.range(0)));
    rusage ru;
    for (auto _ : s) {
        ::getrusage(RUSAGE_SELF, &ru);
        benchmark::DoNotOptimize(ru);
    }
}
void process_self_proctimes(benchmark::State& s) {
    ensure_own_threads(static_cast<int>(s.range(0)));
    for (auto _ : s) benchmark::DoNotOptimize(proctimes::this_process::times());
}
void process_self_win32_GetProcessTimes(benchmark::State& s) {
    ensure_own_threads(static_cast<int>(s.range(0)));
    FILETIME c, e, k, u;
    for (auto _ : s) benchmark::DoNotOptimize(GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &u));
}
void process_self_boost_process_cpu_clock(benchmark::State& s) {
    ensure_own_threads(static_cast<int>(s.range(0)));
    for (auto _ : s) benchmark::DoNotOptimize(boost::chrono::process_cpu_clock::now());
}
void process_self_boost_cpu_timer(benchmark::State& s) {
    ensure_own_threads(static_cast<int>(s.range(0)));
    boost::timer::cpu_timer t;
    for (auto _ : s) benchmark::DoNotOptimize(t.elapsed());
}
void process_self_times(benchmark::State& s) {
    ensure_own_threads(static_cast<int>(s.range(0)));
    tms t;
    for (auto _ : s) benchmark::DoNotOptimize(::times(&t));
}

// ---- another process, a thread of another process ----------------------------------
// Each query is measured on an idle target (a child with N sleeping threads)
// and on a running one (busy_child below); these bodies take the target.

void baseline_pread_clock(benchmark::State& s, pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    char buf[1024];
    timespec ts;
    for (auto _ : s) {
        ::clock_gettime(process_clock(pid), &ts);
        benchmark::DoNotOptimize(::pread(fd, buf, sizeof buf, 0));
        benchmark::DoNotOptimize(ts);
    }
    ::close(fd);
}
void process_handle_times(benchmark::State& s, pid_t pid) {
    auto h = proctimes::process::open(pid).value();
    for (auto _ : s) benchmark::DoNotOptimize(h.times());
}
void win32_process_times(benchmark::State& s, pid_t pid) {
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid));
    FILETIME c, e, k, u;
    for (auto _ : s) benchmark::DoNotOptimize(GetProcessTimes(h, &c, &e, &k, &u));
    CloseHandle(h);
}
void baseline_pread_thread(benchmark::State& s, pid_t pid, pid_t tid) {
    char path[96];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    char buf[1024];
    for (auto _ : s) benchmark::DoNotOptimize(::pread(fd, buf, sizeof buf, 0));
    ::close(fd);
}
void thread_handle_times(benchmark::State& s, pid_t pid, pid_t tid) {
    auto h = proctimes::thread::open(pid, tid).value();
    for (auto _ : s) benchmark::DoNotOptimize(h.times());
}
void win32_thread_times(benchmark::State& s, pid_t tid) {
    HANDLE h = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(tid));
    FILETIME c, e, k, u;
    for (auto _ : s) benchmark::DoNotOptimize(GetThreadTimes(h, &c, &e, &k, &u));
    CloseHandle(h);
}

target idle_target(benchmark::State& s) { return child_with_threads(static_cast<int>(s.range(0))); }

void process_other_baseline_pread_clock(benchmark::State& s) { baseline_pread_clock(s, idle_target(s).pid); }
void process_other_open_read_close(benchmark::State& s) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", idle_target(s).pid);
    char buf[1024];
    for (auto _ : s) {
        int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        benchmark::DoNotOptimize(::read(fd, buf, sizeof buf));
        ::close(fd);
    }
}
void process_other_proctimes(benchmark::State& s) { process_handle_times(s, idle_target(s).pid); }
void process_other_win32_GetProcessTimes(benchmark::State& s) { win32_process_times(s, idle_target(s).pid); }
void thread_other_baseline_pread(benchmark::State& s) {
    const target t = idle_target(s);
    baseline_pread_thread(s, t.pid, t.other_tid);
}
void thread_other_proctimes(benchmark::State& s) {
    const target t = idle_target(s);
    thread_handle_times(s, t.pid, t.other_tid);
}
void thread_other_win32_GetThreadTimes(benchmark::State& s) { win32_thread_times(s, idle_target(s).other_tid); }

// A child whose only thread yields in a loop (each sched_yield updates its run
// time); killed when the benchmark function returns, so that it does not take a
// CPU from the others.
struct busy_child {
    pid_t pid = ::fork();
    busy_child() {
        if (pid == 0)
            for (;;) ::sched_yield();
        if (pid < 0) std::abort();
    }
    ~busy_child() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

void process_busy_baseline_pread_clock(benchmark::State& s) {
    busy_child c;
    baseline_pread_clock(s, c.pid);
}
void process_busy_proctimes(benchmark::State& s) {
    busy_child c;
    process_handle_times(s, c.pid);
}
void process_busy_win32_GetProcessTimes(benchmark::State& s) {
    busy_child c;
    win32_process_times(s, c.pid);
}
void thread_busy_baseline_pread(benchmark::State& s) {
    busy_child c;
    baseline_pread_thread(s, c.pid, c.pid);
}
void thread_busy_proctimes(benchmark::State& s) {
    busy_child c;
    thread_handle_times(s, c.pid, c.pid);
}
void thread_busy_win32_GetThreadTimes(benchmark::State& s) {
    busy_child c;
    win32_thread_times(s, c.pid);
}

}  // namespace

// Registered by target size first: own-process threads are only ever added, so
// every query at N threads must run before any at the next N.
int main(int argc, char** argv) {
    benchmark::RegisterBenchmark("thread_self_baseline_thread_clock", thread_self_baseline_thread_clock);
    benchmark::RegisterBenchmark("thread_self_getrusage", thread_self_getrusage);
    benchmark::RegisterBenchmark("thread_self_proctimes", thread_self_proctimes);
    benchmark::RegisterBenchmark("thread_self_win32_GetThreadTimes", thread_self_win32_GetThreadTimes);
    benchmark::RegisterBenchmark("thread_self_proctimes_cpu_clock", thread_self_proctimes_cpu_clock);
    benchmark::RegisterBenchmark("thread_self_boost_thread_clock", thread_self_boost_thread_clock);
    using fn = void (*)(benchmark::State&);
    const std::pair<const char*, fn> per_n[] = {
        {"process_self_baseline_getrusage", process_self_baseline_getrusage},
        {"process_self_proctimes", process_self_proctimes},
        {"process_self_win32_GetProcessTimes", process_self_win32_GetProcessTimes},
        {"process_self_boost_process_cpu_clock", process_self_boost_process_cpu_clock},
        {"process_self_boost_cpu_timer", process_self_boost_cpu_timer},
        {"process_self_times", process_self_times},
        {"process_other_baseline_pread_clock", process_other_baseline_pread_clock},
        {"process_other_open_read_close", process_other_open_read_close},
        {"process_other_proctimes", process_other_proctimes},
        {"process_other_win32_GetProcessTimes", process_other_win32_GetProcessTimes},
        {"thread_other_baseline_pread", thread_other_baseline_pread},
        {"thread_other_proctimes", thread_other_proctimes},
        {"thread_other_win32_GetThreadTimes", thread_other_win32_GetThreadTimes},
    };
    for (int n : {1, 100, 1000})
        for (const auto& [name, f] : per_n) benchmark::RegisterBenchmark(name, f)->Arg(n);
    benchmark::RegisterBenchmark("process_busy_baseline_pread_clock", process_busy_baseline_pread_clock)->Arg(1);
    benchmark::RegisterBenchmark("process_busy_proctimes", process_busy_proctimes)->Arg(1);
    benchmark::RegisterBenchmark("process_busy_win32_GetProcessTimes", process_busy_win32_GetProcessTimes)->Arg(1);
    benchmark::RegisterBenchmark("thread_busy_baseline_pread", thread_busy_baseline_pread)->Arg(1);
    benchmark::RegisterBenchmark("thread_busy_proctimes", thread_busy_proctimes)->Arg(1);
    benchmark::RegisterBenchmark("thread_busy_win32_GetThreadTimes", thread_busy_win32_GetThreadTimes)->Arg(1);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
