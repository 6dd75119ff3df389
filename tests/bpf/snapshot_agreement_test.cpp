// SPDX-License-Identifier: MIT
// The eBPF snapshot source against the /proc walk on the live system, with
// processes and threads being created and ending meanwhile (docs/BPF.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf_skip.hpp"
#include "burn.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/snapshot.hpp"

using namespace proctimes;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

namespace {

constexpr nanoseconds tick{10'000'000};

nanoseconds boottime() {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return std::chrono::seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec};
}

// Forks short-lived children as fast as it can until destroyed.
class churn {
public:
    churn() {
        pid_ = ::fork();
        if (pid_ == 0) {
            while (true) {
                const pid_t k = ::fork();
                if (k == 0) ::_exit(0);
                if (k > 0) ::waitpid(k, nullptr, 0);
            }
        }
    }
    ~churn() {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }

private:
    pid_t pid_ = -1;
};

// A thread that burns CPU while the snapshots are taken, so that CPU totals move.
struct busy_thread {
    std::atomic<bool> stop{false};
    std::thread t{[this] {
        volatile unsigned long x = 0;
        while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    }};
    ~busy_thread() {
        stop = true;
        t.join();
    }
};

struct key {
    pid_t id;
    std::uint64_t start;
    // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads a defaulted <=>
    auto operator<=>(const key&) const = default;
};

}  // namespace

TEST(BpfSnapshot, NamesItsSourceAndPrecision) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    auto s = snapshotter::open({.source = snapshot_source::bpf, .threads = true});
    ASSERT_TRUE(s) << s.error().message();
    auto snap = s->take();
    ASSERT_TRUE(snap) << snap.error().message();
    EXPECT_EQ(snap->source, snapshot_source::bpf);
    ASSERT_NE(snap->find(::getpid()), nullptr);
    const auto& me = *snap->find(::getpid());
    EXPECT_EQ(me.times.precision.source, cpu_source::bpf_task);
    EXPECT_EQ(me.times.precision.creation_resolution, nanoseconds{1});
    EXPECT_EQ(me.uid, ::geteuid());
    EXPECT_EQ(me.parent_pid, ::getppid());
    EXPECT_EQ(me.state, 'R');  // it is running this test
    ASSERT_GE(me.thread_entries, 1u);
    EXPECT_EQ(snap->threads_of(me)[0].tid(), ::getpid());
    // kthreadd (2) is a kernel thread without a parent. (pid 1, which some
    // kernels keep from the iterator, is snapshot_tasks_test.cpp's.)
    ASSERT_NE(snap->find(2), nullptr);
    EXPECT_EQ(snap->find(2)->parent_pid, 0);
    EXPECT_TRUE(snap->find(2)->kernel_thread);
    // The program that read it: the iterator when asked for (the CTest run
    // bpf.task_iterator), else the walk where this build and kernel have it.
    const auto st = bpf_snapshot_status();
    const char* forced = std::getenv("PROCTIMES_BPF_TASK_ITER");
    if (forced && std::string_view(forced) == "1") {
        EXPECT_EQ(st.program, "task iterator");
    } else {
        EXPECT_TRUE(st.program == "task walk" || st.program == "task iterator") << st.program;
    }
    EXPECT_EQ(snap->find(2)->times.user, nanoseconds{0});
    // The one-shot function keeps to /proc unless bpf is asked for.
    auto once = take_snapshot();
    ASSERT_TRUE(once);
    EXPECT_EQ(once->source, snapshot_source::procfs);
    auto asked = take_snapshot({.source = snapshot_source::bpf});
    ASSERT_TRUE(asked);
    EXPECT_EQ(asked->source, snapshot_source::bpf);
}

TEST(BpfSnapshot, AgreesWithProcUnderChurn) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    churn c;
    busy_thread busy;
    std::this_thread::sleep_for(milliseconds(50));
    auto bpf = snapshotter::open({.source = snapshot_source::bpf, .threads = true});
    ASSERT_TRUE(bpf);
    auto anchor = get_boot_anchor();
    ASSERT_TRUE(anchor);

    // bpf (a), /proc (b), bpf (c): a task in both a and c lived through b.
    auto a = bpf->take();
    auto b = take_snapshot({.source = snapshot_source::procfs, .threads = true, .cpu = snapshot_cpu::precise});
    auto cc = bpf->take();
    ASSERT_TRUE(a && b && cc);
    ASSERT_EQ(b->source, snapshot_source::procfs);
    ASSERT_EQ(a->boot, b->boot);

    std::map<key, const snapshot_process*> in_c;
    for (const auto& p : cc->processes) in_c[{p.pid(), p.identity.start_ticks}] = &p;
    std::map<key, const snapshot_thread*> threads_c;
    for (const auto& t : cc->threads) threads_c[{t.tid(), t.identity.start_ticks}] = &t;

    std::size_t compared = 0, threads_compared = 0;
    const nanoseconds between = cc->since_boot - a->since_boot;
    for (const auto& pa : a->processes) {
        auto it = in_c.find({pa.pid(), pa.identity.start_ticks});
        if (it == in_c.end()) continue;  // ended between a and c
        const auto& pc = *it->second;
        if (pc.state == 'Z' || pa.state == 'Z') continue;
        const auto* pb = b->find(pa.pid());
        bool failed = false;
        for (const auto& f : b->failures) failed |= f.pid == pa.pid();
        if (failed) continue;
        ASSERT_NE(pb, nullptr) << "pid " << pa.pid() << " (" << pa.name.view() << ") lived through the /proc walk";
        EXPECT_EQ(pb->identity.start_ticks, pa.identity.start_ticks) << pa.pid();
        EXPECT_EQ(pb->kernel_thread, pa.kernel_thread) << pa.pid();
        // Parent, owner and name can change (reparenting, setuid, exec):
        // compared where a and c agree, so b must too.
        if (pa.parent_pid == pc.parent_pid) EXPECT_EQ(pb->parent_pid, pa.parent_pid) << pa.pid();
        if (pa.uid == pc.uid) EXPECT_EQ(pb->uid, pa.uid) << pa.pid();
        // A kernel worker's /proc name carries its workqueue after the comm.
        if (pa.name == pc.name) EXPECT_EQ(pb->name.view().substr(0, pa.name.size()), pa.name.view()) << pa.pid();
        // The creation instant: /proc's is the same nanosecond value floored to its tick.
        const nanoseconds exact = pa.times.creation - anchor->boot;
        EXPECT_EQ(pb->times.creation - anchor->boot, exact - exact % tick) << pa.pid();
        EXPECT_EQ(pc.times.creation, pa.times.creation) << pa.pid();
        // CPU: b's read lies between a's and c's. A running task's counter is
        // brought up to date at least once a tick, so c may lag b by that much.
        EXPECT_LE(pa.times.cpu(), pb->times.cpu() + tick) << pa.pid() << " " << pa.name.view();
        EXPECT_LE(pb->times.cpu(), pc.times.cpu() + tick) << pa.pid() << " " << pa.name.view();
        EXPECT_LE(pc.times.cpu() - pa.times.cpu(), between * std::max(1, pc.thread_count) + tick) << pa.pid();
        // Reaped children's CPU: /proc's cutime/cstime are the same counters
        // floored to ticks, and can only grow between a and c.
        ASSERT_TRUE(pa.children_kernel && pa.children_user && pc.children_kernel && pc.children_user) << pa.pid();
        if (pb->children_kernel && pb->children_user) {
            const auto floor_tick = [](nanoseconds v) { return v - v % tick; };
            EXPECT_GE(*pb->children_kernel, floor_tick(*pa.children_kernel)) << pa.pid();
            EXPECT_LE(*pb->children_kernel, floor_tick(*pc.children_kernel)) << pa.pid();
            EXPECT_GE(*pb->children_user, floor_tick(*pa.children_user)) << pa.pid();
            EXPECT_LE(*pb->children_user, floor_tick(*pc.children_user)) << pa.pid();
        }
        ++compared;

        if (!pb->thread_entries) continue;
        std::map<pid_t, const snapshot_thread*> b_threads;
        for (const auto& t : b->threads_of(*pb)) b_threads[t.tid()] = &t;
        for (const auto& ta : a->threads_of(pa)) {
            auto tc = threads_c.find({ta.tid(), ta.identity.start_ticks});
            if (tc == threads_c.end() || ta.state == 'Z' || tc->second->state == 'Z') continue;
            auto tb = b_threads.find(ta.tid());
            if (tb == b_threads.end()) continue;  // the thread list was read before or after: a /proc race
            EXPECT_EQ(tb->second->identity.start_ticks, ta.identity.start_ticks);
            const nanoseconds te = ta.times.creation - anchor->boot;
            EXPECT_EQ(tb->second->times.creation - anchor->boot, te - te % tick);
            EXPECT_LE(ta.times.cpu(), tb->second->times.cpu() + tick) << ta.tid();
            EXPECT_LE(tb->second->times.cpu(), tc->second->times.cpu() + tick) << ta.tid();
            ++threads_compared;
        }
    }
    // Nearly every process of the system lived through the three reads.
    EXPECT_GE(compared + 20, std::min(a->processes.size(), cc->processes.size()));
    EXPECT_GE(threads_compared, compared);
    std::printf("compared %zu processes and %zu threads; bpf read %lld µs, /proc walk %lld µs\n", compared,
                threads_compared, static_cast<long long>(a->walk_duration.count() / 1000),
                static_cast<long long>(b->walk_duration.count() / 1000));
}

TEST(BpfSnapshot, CreationInstantsHaveSubTickDigitsAndOrder) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    auto anchor = get_boot_anchor();
    ASSERT_TRUE(anchor);
    pid_t kids[2];
    nanoseconds before[2], after[2];
    for (int i = 0; i < 2; ++i) {
        if (i) std::this_thread::sleep_for(milliseconds(1));
        before[i] = boottime();
        kids[i] = ::fork();
        if (kids[i] == 0) {
            ::pause();
            ::_exit(0);
        }
        after[i] = boottime();
    }
    auto snap = take_snapshot({.source = snapshot_source::bpf});
    for (pid_t k : kids) ::kill(k, SIGKILL);
    for (pid_t k : kids) ::waitpid(k, nullptr, 0);
    ASSERT_TRUE(snap);
    const snapshot_process* p[2] = {snap->find(kids[0]), snap->find(kids[1])};
    ASSERT_TRUE(p[0] && p[1]);
    for (int i = 0; i < 2; ++i) {
        const nanoseconds c = p[i]->times.creation - anchor->boot;
        // The exact instant of the fork, between two clock samples around it.
        EXPECT_LE(before[i], c);
        EXPECT_LE(c, after[i]);
    }
    // Ordered, at least the 1 ms sleep apart, though both may share one tick.
    EXPECT_GE(p[1]->times.creation - p[0]->times.creation, milliseconds(1));
}

// A child that burned CPU and was waited for: its final times are added to
// this process's children times, which this source reads in nanoseconds (the
// same values wait4(2)'s rusage gives in microseconds).
TEST(BpfSnapshot, ReapedChildrenTimesAreTheKernelsNanoseconds) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    auto bpf = snapshotter::open({.source = snapshot_source::bpf});
    ASSERT_TRUE(bpf);
    auto before = bpf->take();
    ASSERT_TRUE(before);
    const auto* me0 = before->find(::getpid());
    ASSERT_NE(me0, nullptr);
    ASSERT_TRUE(me0->children_kernel && me0->children_user);

    constexpr nanoseconds burn{30'000'000};
    const pid_t child = ::fork();
    if (child == 0) {
        testing_helpers::burn_process_cpu(burn);
        ::_exit(0);
    }
    ASSERT_GT(child, 0);
    rusage ru{};
    int status = 0;
    ASSERT_EQ(::wait4(child, &status, 0, &ru), child);

    auto after = bpf->take();
    ASSERT_TRUE(after);
    const auto* me1 = after->find(::getpid());
    ASSERT_NE(me1, nullptr);
    ASSERT_TRUE(me1->children_kernel && me1->children_user);
    const nanoseconds grew_kernel = *me1->children_kernel - *me0->children_kernel;
    const nanoseconds grew_user = *me1->children_user - *me0->children_user;
    EXPECT_GE(grew_kernel + grew_user, burn);
    // wait4 reports the same two values, truncated to microseconds. (No
    // other child of this process ends in between: the test runs alone.)
    const auto us = [](const timeval& tv) { return std::int64_t{tv.tv_sec} * 1'000'000 + tv.tv_usec; };
    EXPECT_EQ(grew_user.count() / 1000, us(ru.ru_utime));
    EXPECT_EQ(grew_kernel.count() / 1000, us(ru.ru_stime));
}
