// SPDX-License-Identifier: MIT
// A loss of some other task's end does not stop a handle from waiting for its
// own eBPF record (docs/BPF.md, "Losses"): losses are matched to the task they
// hit. The monitor's ring buffer is made small (PROCTIMES_BPF_EXIT_RING_KIB)
// and a storm of unrelated processes overflows it while a thread handle is
// watched; the thread then ends, and its handle still gets its exact values.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_skip.hpp"
#include "burn.hpp"
#include "linux/bpf/exit_ring_reader.hpp"
#include "proctimes/ledger.hpp"
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

// Whether `w` (a stream of the test's own, with a 4 MiB ring) gets the end of
// `tid` within 5 s: under load the kernel now and then runs no program
// attached to sched_process_free for a task (docs/BPF.md, Losses: every
// stream misses the same task), and then no stream can deliver that end.
bool witness_saw(exit_stream& w, pid_t tid) {
    std::vector<ended_task> ends;
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < until) {
        (void)w.wait(100ms);
        ends.clear();
        (void)w.read(ends);
        for (const auto& e : ends)
            if (e.tid == tid) return true;
    }
    return false;
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
    constexpr int wanted = 12;
    int judged = 0, exact = 0, runs_with_loss = 0, unjudged = 0;
    for (int run = 0; judged < wanted && run < 2 * wanted; ++run) {
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
        std::this_thread::sleep_for(300ms);  // the ring drains: room for the thread's own record
        // The witness: a stream with the default ring, opened after the storm.
        ::unsetenv("PROCTIMES_BPF_EXIT_RING_KIB");
        auto witness = exit_stream::open(exit_stream_source::bpf);
        ::setenv("PROCTIMES_BPF_EXIT_RING_KIB", "16", 1);
        ASSERT_TRUE(witness) << "the monitor could load the eBPF exit stream, the test could not: "
                             << witness.error().message();
        const std::uint64_t lost1 = detail::exit_records_bpf_lost();
        go = true;
        th.join();
        const std::string dir = "/proc/self/task/" + std::to_string(tid.load());
        for (int i = 0; i < 5000 && ::access(dir.c_str(), F_OK) == 0; ++i) std::this_thread::sleep_for(1ms);
        // One query, right after the end: it waits for the record.
        auto t = h->times();
        ASSERT_TRUE(t) << t.error().message();
        if (t->precision.source == cpu_source::bpf_exit) {
            EXPECT_EQ(t->state, task_state::exited) << "run " << run << (lost ? " (losses of other tasks)" : "");
            EXPECT_GE(t->cpu(), 10ms);
        } else {
            // Without its record the handle says the thread ended and that its
            // values are the last sampled, never passed off as final.
            EXPECT_EQ(t->state, task_state::exited_partial) << "run " << run;
            // Not the handle's doing when the kernel ran no end program for
            // the thread, or when the thread's own end did not fit in the
            // ring (ends lost after the ring had drained): the run proves
            // nothing and another is made.
            const bool seen = witness_saw(*witness, tid);
            const bool own_may_be_lost = detail::exit_records_bpf_lost() != lost1;
            std::printf("run %d: no exact record for the handle; the witness %s it; %s\n", run,
                        seen ? "saw" : "did not see",
                        own_may_be_lost ? "ends were lost after the storm" : "no end was lost after the storm");
            if (!seen || own_may_be_lost) {
                ++unjudged;
                continue;
            }
            ADD_FAILURE() << "run " << run << ": the kernel ended the thread and nothing was lost, yet the handle "
                          << "has no exact record (source " << static_cast<int>(t->precision.source) << ")";
        }
        ++judged;
        runs_with_loss += lost;
        exact += t->precision.source == cpu_source::bpf_exit;
    }
    std::printf(
        "%d runs judged (%d not: the kernel or the ring lost the thread's own end), %d with losses of "
        "other tasks, %d with the thread's exact record\n",
        judged, unjudged, runs_with_loss, exact);
    EXPECT_EQ(judged, wanted) << "too many runs the kernel or the ring spoiled";
    EXPECT_GT(runs_with_loss, 0) << "no loss could be induced: the test proved nothing";
    set_exit_records_enabled(false);
}
