// SPDX-License-Identifier: MIT
// A loss of some other task's end does not stop a handle from waiting for its
// own eBPF record (docs/BPF.md, "Losses"): losses are matched to the task they
// hit. The monitor's ring buffer is made small (PROCTIMES_BPF_EXIT_RING_KIB)
// and a storm of unrelated processes overflows it while a thread handle is
// watched; the thread then ends, and its handle still gets its exact values.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_skip.hpp"
#include "burn.hpp"
#include "platform_exit_stream.hpp"
#include "proctimes/linux.hpp"
#include "proctimes/process.hpp"

using namespace proctimes;
using namespace std::chrono_literals;

namespace {

// n unrelated processes, each ended and reaped at once.
void storm(int n) {
    const pid_t f = ::fork();
    if (f == 0) {
        for (int i = 0; i < n; ++i) {
            const pid_t k = ::vfork();
            if (k == 0) ::_exit(0);
            if (k < 0 || ::waitpid(k, nullptr, 0) != k) ::_exit(1);
        }
        ::_exit(0);
    }
    if (f > 0) ::waitpid(f, nullptr, 0);
}

}  // namespace

TEST(HandleLosses, ThreadGetsItsRecordDespiteLossesOfOtherTasks) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    // 16 KiB: about 120 records in flight, overflowed by a storm, enough
    // once it is over. Read when the monitor's listener starts (below).
    ::setenv("PROCTIMES_BPF_EXIT_RING_KIB", "16", 1);
    set_exit_records_enabled(true);
    set_exit_records_bpf(true);
    if (!exit_records_use_bpf()) GTEST_SKIP() << "exit records do not come from the eBPF exit stream here";
    int exact = 0, runs_with_loss = 0;
    for (int run = 0; run < 12; ++run) {
        std::atomic<pid_t> tid{0};
        std::atomic<bool> go{false};
        std::thread th([&] {
            tid = static_cast<pid_t>(::syscall(SYS_gettid));
            while (!go) std::this_thread::sleep_for(1ms);
            testing_helpers::burn_thread_cpu(10ms);
        });
        while (tid == 0) std::this_thread::sleep_for(1ms);
        auto h = thread::open(::getpid(), tid);
        ASSERT_TRUE(h) << h.error().message();
        // Ends of other tasks lost while the handle is watched.
        const std::uint64_t lost0 = detail::exit_records_bpf_lost();
        for (int i = 0; i < 10 && detail::exit_records_bpf_lost() == lost0; ++i) storm(4000);
        const bool lost = detail::exit_records_bpf_lost() != lost0;
        runs_with_loss += lost;
        std::this_thread::sleep_for(300ms);  // the ring drains: room for the thread's own record
        go = true;
        th.join();
        const std::string dir = "/proc/self/task/" + std::to_string(tid.load());
        for (int i = 0; i < 5000 && ::access(dir.c_str(), F_OK) == 0; ++i) std::this_thread::sleep_for(1ms);
        // One query, right after the end: it waits for the record.
        auto t = h->times();
        ASSERT_TRUE(t) << t.error().message();
        EXPECT_EQ(t->state, task_state::exited) << "run " << run << (lost ? " (losses of other tasks)" : "");
        EXPECT_EQ(t->precision.source, cpu_source::bpf_exit) << "run " << run;
        EXPECT_GE(t->cpu(), 10ms);
        exact += t->precision.source == cpu_source::bpf_exit;
    }
    std::printf("12 runs, %d with losses of other tasks, %d with the thread's exact record\n", runs_with_loss, exact);
    EXPECT_GT(runs_with_loss, 0) << "no loss could be induced: the test proved nothing";
    set_exit_records_enabled(false);
}
