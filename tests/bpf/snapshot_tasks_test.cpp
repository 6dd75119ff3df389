// SPDX-License-Identifier: MIT
// The eBPF snapshot lists the same tasks as the /proc walk: the init process
// (pid 1), which some kernels keep out of the task iterators, and this test's
// own multi-threaded process (docs/BPF.md "The task walk").
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include "bpf_skip.hpp"
#include "linux/bpf/snapshot_source.hpp"
#include "parse/bpf_records.hpp"
#include "proctimes/snapshot.hpp"

using namespace proctimes;

namespace {

using task_set = std::set<std::pair<pid_t, pid_t>>;  // (pid, tid)

// Threads that wait until destroyed.
class parked_threads {
public:
    explicit parked_threads(int n) {
        for (int k = 0; k < n; ++k) {
            threads_.emplace_back([this] {
                {
                    std::lock_guard lock(m_);
                    tids_.push_back(::gettid());
                }
                cv_.notify_all();
                std::unique_lock lock(m_);
                cv_.wait(lock, [this] { return stop_; });
            });
        }
        std::unique_lock lock(m_);
        cv_.wait(lock, [&] { return tids_.size() == static_cast<std::size_t>(n); });
    }
    ~parked_threads() {
        {
            std::lock_guard lock(m_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto& t : threads_) t.join();
    }
    std::vector<pid_t> tids() {
        std::lock_guard lock(m_);
        return tids_;
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::vector<pid_t> tids_;
    std::vector<std::thread> threads_;
};

// The (pid, tid) of every thread of the processes `pids` in `s`, and how many
// times each came (more than once is a duplicate).
task_set tasks_of(const snapshot& s, const std::set<pid_t>& pids, std::size_t& entries) {
    task_set out;
    entries = 0;
    for (const auto& p : s.processes) {
        if (!pids.contains(p.pid())) continue;
        for (const auto& t : s.threads_of(p)) {
            out.insert({p.pid(), t.tid()});
            ++entries;
        }
    }
    return out;
}

std::string show(const task_set& s) {
    std::ostringstream o;
    for (const auto& [pid, tid] : s) o << ' ' << pid << '/' << tid;
    return o.str();
}

}  // namespace

// /proc (a), bpf (b), /proc (c): a task in both a and c was alive all through
// b, so b must list it; b may list only tasks that a or c lists (one that
// began after a and ended before c is possible, but rare: the comparison is
// taken again a few times before it counts as a failure).
TEST(BpfSnapshot, ListsTheSameTasksAsProcForPid1AndItself) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    parked_threads parked(4);
    const std::vector<pid_t> mine = parked.tids();
    auto bpf = snapshotter::open({.source = snapshot_source::bpf, .threads = true});
    ASSERT_TRUE(bpf) << bpf.error().message();
    const std::set<pid_t> pids{1, ::getpid()};

    constexpr int attempts = 5;
    std::string last;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        auto a = take_snapshot({.source = snapshot_source::procfs, .threads = true});
        auto b = bpf->take();
        auto c = take_snapshot({.source = snapshot_source::procfs, .threads = true});
        ASSERT_TRUE(a && b && c);
        ASSERT_EQ(b->source, snapshot_source::bpf);
        ASSERT_EQ(a->source, snapshot_source::procfs);
        if (!a->find(1)) GTEST_SKIP() << "/proc lists no pid 1 (another pid namespace)";
        std::size_t na = 0, nb = 0, nc = 0;
        const task_set ta = tasks_of(*a, pids, na), tb = tasks_of(*b, pids, nb), tc = tasks_of(*c, pids, nc);

        // Never twice, whatever the attempt: one process entry per pid, one
        // thread entry per tid.
        for (const pid_t pid : pids) {
            EXPECT_EQ(std::count_if(b->processes.begin(), b->processes.end(),
                                    [&](const snapshot_process& p) { return p.pid() == pid; }),
                      1)
                << "pid " << pid << " in the bpf snapshot";
        }
        EXPECT_EQ(nb, tb.size()) << "a thread listed twice by the bpf snapshot";
        // This process and the threads it parked are in every snapshot.
        for (const pid_t tid : mine) {
            EXPECT_TRUE(tb.contains({::getpid(), tid})) << "parked thread " << tid;
            EXPECT_TRUE(ta.contains({::getpid(), tid})) << "parked thread " << tid;
        }
        EXPECT_TRUE(tb.contains({1, 1})) << "pid 1's leader";
        EXPECT_TRUE(tb.contains({::getpid(), ::getpid()}));

        task_set both, either, lived_through_missing, extra;
        std::set_intersection(ta.begin(), ta.end(), tc.begin(), tc.end(), std::inserter(both, both.end()));
        std::set_union(ta.begin(), ta.end(), tc.begin(), tc.end(), std::inserter(either, either.end()));
        std::set_difference(both.begin(), both.end(), tb.begin(), tb.end(),
                            std::inserter(lived_through_missing, lived_through_missing.end()));
        std::set_difference(tb.begin(), tb.end(), either.begin(), either.end(), std::inserter(extra, extra.end()));
        // Failures of the /proc reads (a task that ended mid-read) leave a
        // thread out of a or c without being a bpf fault.
        const bool proc_failed = !a->failures.empty() || !c->failures.empty();
        if (lived_through_missing.empty() && extra.empty() && !HasFailure()) {
            SUCCEED() << "attempt " << attempt + 1 << ": " << tb.size() << " tasks agree";
            return;
        }
        last = "missing from bpf:" + show(lived_through_missing) + "; only in bpf:" + show(extra) +
               (proc_failed ? " (a /proc read failed)" : "");
        if (HasFailure()) {
            if (!lived_through_missing.empty() || !extra.empty()) ADD_FAILURE() << last;
            return;
        }
    }
    ADD_FAILURE() << "after " << attempts << " attempts, " << last;
}

// The task walk's ring buffer is sized at load for four times the tasks
// there are (at least 256 KiB). A system that grows past it is read with the
// task iterator once, whole; the walk is then loaded again, larger, and the
// snapshots after it list every task again.
TEST(BpfSnapshot, AWalkThatDidNotFitIsLoadedAgainLarger) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    const snapshot_options opts{.source = snapshot_source::bpf, .threads = true};
    auto src = detail::bpf_snapshot_source::open(opts, true);
    ASSERT_TRUE(src) << src.error().message();
    ASSERT_TRUE(*src);
    const std::size_t ring = src->walk_ring_bytes();
    if (ring == 0) GTEST_SKIP() << "no task walk here (the task iterator reads the tasks)";
    constexpr std::size_t record = sizeof(parse::bpf_task_record) + 8;  // with the ring's header
    const std::size_t fits = ring / record;
    if (fits > 5000) GTEST_SKIP() << "the walk's ring holds " << fits << " tasks, more threads than this test parks";
    const int more = static_cast<int>(fits) + 64;  // with the machine's own tasks: more than fit
    parked_threads parked(more);
    const std::vector<pid_t> mine = parked.tids();
    const auto lists_them_all = [&](const snapshot& s) {
        std::set<pid_t> tids;
        for (const snapshot_thread& t : s.threads)
            if (t.pid == ::getpid()) tids.insert(t.tid());
        return std::all_of(mine.begin(), mine.end(), [&](pid_t t) { return tids.contains(t); });
    };
    snapshot first;
    ASSERT_TRUE(src->take(first, opts));
    EXPECT_TRUE(lists_them_all(first)) << "read whole by the task iterator";
    const std::size_t grown = src->walk_ring_bytes();
    EXPECT_GE(grown, 4 * static_cast<std::size_t>(more) * record) << "loaded again for four times the tasks read";
    snapshot second;
    ASSERT_TRUE(src->take(second, opts));
    EXPECT_TRUE(lists_them_all(second));
    EXPECT_EQ(src->walk_ring_bytes(), grown) << "it fits now: not loaded again";
    std::printf("the walk's ring: %zu KiB for %zu tasks, then %zu KiB for the %zu read\n", ring / 1024, fits,
                grown / 1024, first.threads.size());
}
