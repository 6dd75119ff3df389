// SPDX-License-Identifier: MIT
// Whole-system snapshots on Windows (NtQuerySystemInformation): a process's
// threads, the calling process's entry against its handle, deltas.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "proctimes/process.hpp"
#include "proctimes/snapshot.hpp"
#include "proctimes/spawn.hpp"
#include "windows_test.hpp"

using namespace std::chrono_literals;
using proctimes::errc;

namespace {

void terminate(pid_t pid) {
    HANDLE h = ::OpenProcess(PROCESS_TERMINATE, FALSE, static_cast<DWORD>(pid));
    ASSERT_NE(h, nullptr);
    EXPECT_TRUE(::TerminateProcess(h, 0));
    ::CloseHandle(h);
}

TEST(WindowsSnapshot, AFiftyThreadProcessListsItsFiftyOneThreads) {
    auto c = proctimes::child::spawn({.argv = {wintest::self_path(), "child", "threads", "50"}});
    ASSERT_TRUE(c) << c.error().message();
    const pid_t pid = c->id();
    proctimes::snapshot s;
    const proctimes::snapshot_process* p = nullptr;
    // Its threads start after it does: take snapshots until all are there.
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
        auto r = proctimes::take_snapshot({.threads = true});
        ASSERT_TRUE(r) << r.error().message();
        s = std::move(*r);
        p = s.find(pid);
        ASSERT_NE(p, nullptr);
        if (p->thread_count >= 51) break;
        ::Sleep(20);
    }
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->thread_count, 51);
    const auto threads = s.threads_of(*p);
    ASSERT_EQ(threads.size(), 51u);
    std::set<pid_t> tids;
    std::size_t before_process = 0;
    for (const auto& t : threads) {
        EXPECT_EQ(t.pid, pid);
        before_process += t.times.creation < p->times.creation;
        tids.insert(t.tid());
    }
    // Wine stamps a process's creation once it has started up, after its
    // main thread's creation (measured 0.16 s to 1.8 s later); the 50 others
    // come after both. On Windows no thread precedes its process.
    EXPECT_EQ(before_process, wintest::under_wine() ? 1u : 0u);
    EXPECT_EQ(tids.size(), 51u);
    EXPECT_TRUE(
        std::is_sorted(threads.begin(), threads.end(), [](const auto& a, const auto& b) { return a.tid() < b.tid(); }));
    // The same identity as a handle's, and the same thread ids.
    EXPECT_EQ(p->identity, c->handle().identity());
    auto ids = c->handle().thread_ids();
    ASSERT_TRUE(ids);
    EXPECT_EQ(std::set<pid_t>(ids->begin(), ids->end()), tids);
    EXPECT_EQ(p->name.view(), "windows_system_tests.exe");
    EXPECT_EQ(p->parent_pid, proctimes::this_process::id());
    terminate(pid);
    ASSERT_TRUE(c->wait());
}

TEST(WindowsSnapshot, TheCallingProcessAsItsHandleSeesIt) {
    auto self = proctimes::process::open_self();
    ASSERT_TRUE(self);
    const auto before = self->times();
    ASSERT_TRUE(before);
    auto s = proctimes::take_snapshot({.threads = true});
    ASSERT_TRUE(s) << s.error().message();
    const auto after = self->times();
    ASSERT_TRUE(after);
    EXPECT_EQ(s->source, proctimes::snapshot_source::windows);
    EXPECT_TRUE(s->has_threads);
    EXPECT_GT(s->processes.size(), 3u);
    EXPECT_TRUE(std::is_sorted(s->processes.begin(), s->processes.end(),
                               [](const auto& a, const auto& b) { return a.pid() < b.pid(); }));
    EXPECT_EQ(s->find(0), nullptr);  // the idle process is not a process
    const auto* me = s->find(self->id());
    ASSERT_NE(me, nullptr);
    EXPECT_EQ(me->identity, self->identity());
    EXPECT_EQ(me->times.creation, before->creation);
    EXPECT_GE(me->times.cpu(), before->cpu());
    EXPECT_LE(me->times.cpu(), after->cpu());
    EXPECT_EQ(me->times.precision, before->precision);
    EXPECT_EQ(me->uid, proctimes::snapshot_process::unknown_uid);
    EXPECT_EQ(me->times.sampled_at, s->taken);
    const auto mine = s->threads_of(*me);
    EXPECT_NE(
        std::find_if(mine.begin(), mine.end(), [](const auto& t) { return t.tid() == proctimes::this_thread::id(); }),
        mine.end());
    // Start ticks count 100 ns since 1970; since_boot is that instant in ns.
    EXPECT_EQ(s->since_boot, s->taken.time_since_epoch());
    EXPECT_EQ(std::chrono::nanoseconds{me->identity.start_ticks * 100}, me->times.creation.time_since_epoch());
}

TEST(WindowsSnapshot, DeltaCountsANewProcessFromItsStart) {
    auto snap = proctimes::snapshotter::open({});
    ASSERT_TRUE(snap) << snap.error().message();
    auto before = snap->take();
    ASSERT_TRUE(before);
    auto c = proctimes::child::spawn({.argv = {wintest::self_path(), "child", "sleep", "60000"}});
    ASSERT_TRUE(c);
    // Wait until it shows in a snapshot (it is created before it runs).
    proctimes::snapshot after;
    for (int i = 0; i < 100; ++i) {
        auto r = snap->take();
        ASSERT_TRUE(r);
        after = std::move(*r);
        if (after.find(c->id())) break;
        ::Sleep(10);
    }
    ASSERT_NE(after.find(c->id()), nullptr);
    auto d = proctimes::compute_delta(*before, after);
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_GT(d->interval, 0ns);
    auto it =
        std::find_if(d->processes.begin(), d->processes.end(), [&](const auto& e) { return e.identity.id == c->id(); });
    ASSERT_NE(it, d->processes.end());
    EXPECT_EQ(it->basis, proctimes::delta_basis::created);
    terminate(c->id());
    ASSERT_TRUE(c->wait());
}

TEST(WindowsSnapshot, NoEbpfSourceOnWindows) {
    auto s = proctimes::snapshotter::open({.source = proctimes::snapshot_source::bpf});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), errc::not_supported);
    EXPECT_FALSE(proctimes::bpf_snapshot_status().usable);
}

}  // namespace
