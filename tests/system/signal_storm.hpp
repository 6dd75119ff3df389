// SPDX-License-Identifier: MIT
// Runs a call on a thread that a signal interrupts every 100 ms, and measures
// how long the call takes. A wait that restarts its full timeout after each
// signal would never return under such a storm: the helper stops the signals
// once a generous bound has passed, so that such a wait ends (and the test
// fails) instead of hanging.
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace testing_helpers {

inline std::atomic<int> storm_signals{0};

inline void count_storm_signal(int) { storm_signals.fetch_add(1, std::memory_order_relaxed); }

struct storm_result {
    bool within_bound = false;                   // the call returned before `bound`, signals still coming
    std::chrono::steady_clock::duration took{};  // how long the call took, in all
    int signals = 0;                             // signals handled while it ran
};

/// Calls f() on a new thread that receives SIGALRM every 100 ms (a POSIX
/// timer aimed at that thread alone, with a handler installed without
/// SA_RESTART). If f() has not returned after `bound`, the signals stop and
/// the call is waited for without them. The handler stays installed (a late
/// signal must never find SIGALRM's default action, which ends the process).
template <class F>
storm_result under_signal_storm(F&& f, std::chrono::seconds bound) {
    struct sigaction sa {};
    sa.sa_handler = count_storm_signal;
    ::sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    if (::sigaction(SIGALRM, &sa, nullptr) != 0) std::abort();

    std::atomic<pid_t> tid{0};
    std::atomic<bool> armed{false};
    std::promise<std::chrono::steady_clock::duration> done;
    auto took = done.get_future();
    const int before = storm_signals.load();
    std::thread t([&] {
        tid.store(static_cast<pid_t>(::syscall(SYS_gettid)));
        while (!armed.load()) std::this_thread::yield();
        const auto t0 = std::chrono::steady_clock::now();
        f();
        done.set_value(std::chrono::steady_clock::now() - t0);
    });
    while (tid.load() == 0) std::this_thread::yield();

    sigevent ev{};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGALRM;
    ev._sigev_un._tid = tid.load();
    timer_t timer{};
    if (::timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) std::abort();
    itimerspec every{};
    every.it_value.tv_nsec = 100'000'000;
    every.it_interval.tv_nsec = 100'000'000;
    if (::timer_settime(timer, 0, &every, nullptr) != 0) std::abort();
    armed.store(true);

    storm_result r;
    r.within_bound = took.wait_for(bound) == std::future_status::ready;
    ::timer_delete(timer);
    r.took = took.get();
    t.join();
    r.signals = storm_signals.load() - before;
    return r;
}

}  // namespace testing_helpers
