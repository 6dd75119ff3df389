// SPDX-License-Identifier: MIT
// The windows backend on the running system: the calling process and
// thread, handles by id, ended tasks, cycle counts, the UTC offset. Under
// Wine (detected at run time) the answers Wine is known to give differently
// from Windows are asserted as such (docs/WINDOWS.md lists them), never
// skipped. The executable is also its own child program (windows_children.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.hpp"
#include "fd.hpp"
#include "proctimes/civil.hpp"
#include "proctimes/cycles.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/linux.hpp"
#include "proctimes/process.hpp"
#include "proctimes/resources.hpp"
#include "proctimes/spawn.hpp"
#include "windows_test.hpp"

using namespace std::chrono_literals;
using proctimes::errc;

namespace {

std::chrono::nanoseconds expected_tick() {
    if (wintest::under_wine()) return 10ms;  // Wine reads Linux's USER_HZ tick counts
    DWORD adj = 0, inc = 0;
    BOOL off = TRUE;
    EXPECT_TRUE(::GetSystemTimeAdjustment(&adj, &inc, &off));
    return std::chrono::nanoseconds{static_cast<std::int64_t>(inc) * 100};
}

TEST(WindowsSelf, ProcessTimesRiseByAtLeastWhatABurnUsed) {
    const auto before = proctimes::this_process::times();
    ASSERT_TRUE(before) << before.error().message();
    const auto used = wintest::burn(200ms);
    const auto after = proctimes::this_process::times();
    ASSERT_TRUE(after) << after.error().message();
    // Windows: the process total is the sum of its threads' totals, in the
    // same clock-interrupt ticks. Wine reads the process's total and the
    // thread's from two Linux sources, each scaled and rounded to ticks its
    // own way: the process's was measured up to 2 ticks behind the thread's
    // after a 200 ms burn.
    const auto slack = wintest::under_wine() ? 3 * expected_tick() : 0ns;
    EXPECT_GE(after->cpu() - before->cpu(), used - slack);
    EXPECT_GE(after->kernel, before->kernel);
    EXPECT_GE(after->user, before->user);
    EXPECT_EQ(after->precision.source, proctimes::cpu_source::os_times);
    EXPECT_EQ(after->precision.resolution, expected_tick());
    EXPECT_EQ(after->precision.total_resolution, expected_tick());
    EXPECT_EQ(after->state, proctimes::task_state::running);
    EXPECT_FALSE(after->exit);
    EXPECT_LT(after->creation, wintest::now());
}

TEST(WindowsSelf, ThreadTimesRiseByWhatTheThreadBurned) {
    const auto before = proctimes::this_thread::times();
    ASSERT_TRUE(before) << before.error().message();
    const auto used = wintest::burn(100ms);
    const auto after = proctimes::this_thread::times();
    ASSERT_TRUE(after);
    // One clock (GetThreadTimes of this thread) read before and after the burn's own readings.
    EXPECT_GE(after->cpu() - before->cpu(), used);
    EXPECT_EQ(after->precision.source, proctimes::cpu_source::os_times);
    EXPECT_EQ(proctimes::this_thread::id(), static_cast<pid_t>(::GetCurrentThreadId()));
    EXPECT_EQ(proctimes::this_process::id(), static_cast<pid_t>(::GetCurrentProcessId()));
}

TEST(WindowsSelf, OpenSelfIsTheSameProcess) {
    auto p = proctimes::process::open_self();
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(p->id(), static_cast<pid_t>(::GetCurrentProcessId()));
    FILETIME c{}, e{}, k{}, u{};
    ASSERT_TRUE(::GetProcessTimes(::GetCurrentProcess(), &c, &e, &k, &u));
    // Start ticks: the creation FILETIME, counted from the Unix epoch.
    EXPECT_EQ(p->identity().start_ticks, wintest::ticks(c) - proctimes::filetime_unix_epoch);
    auto back = proctimes::instant_from_start_ticks(p->identity().start_ticks);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, p->creation());
    EXPECT_EQ(proctimes::filetime_from_time(p->creation())->ticks, wintest::ticks(c));
    auto name = p->name();
    ASSERT_TRUE(name) << name.error().message();
    EXPECT_EQ(*name, "windows_system_tests.exe");
    auto parent = p->parent_id();
    ASSERT_TRUE(parent) << parent.error().message();
    if (wintest::under_wine())
        EXPECT_EQ(*parent, 0);  // started from Linux: Wine knows no Windows parent
    else
        EXPECT_GT(*parent, 0);
    auto ids = p->thread_ids();
    ASSERT_TRUE(ids);
    EXPECT_NE(std::find(ids->begin(), ids->end(), static_cast<pid_t>(::GetCurrentThreadId())), ids->end());
    EXPECT_TRUE(std::is_sorted(ids->begin(), ids->end()));
}

// What the Win32 API gives of a process: its working set grows by what it
// touches, its handles count the one it opens (Wine: none); the rest is
// named missing.
TEST(WindowsResources, MemoryIoAndHandlesOfThisProcess) {
    proctimes::resource_options o;
    o.families = proctimes::resource_family::memory | proctimes::resource_family::io |
                 proctimes::resource_family::files | proctimes::resource_family::switches;
    const auto before = proctimes::read_process_resources(static_cast<pid_t>(::GetCurrentProcessId()), o);
    ASSERT_TRUE(before) << before.error().message();
    ASSERT_TRUE(before->memory && before->io && before->open_files);
    EXPECT_GT(before->memory->resident_bytes, 0u);
    EXPECT_FALSE(before->switches);
    EXPECT_FALSE(before->open_files_limit);
    EXPECT_EQ(before->missing, proctimes::resource_family::switches | proctimes::resource_family::files);
    std::vector<char> touched(32u << 20, 1);
    const HANDLE ev = ::CreateEventW(nullptr, TRUE, FALSE, nullptr);
    ASSERT_NE(ev, nullptr);
    const auto after = proctimes::read_process_resources(static_cast<pid_t>(::GetCurrentProcessId()), o);
    ::CloseHandle(ev);
    ASSERT_TRUE(after) << after.error().message();
    EXPECT_GE(after->memory->resident_bytes, before->memory->resident_bytes + (touched.size() * 9 / 10));
    if (wintest::under_wine())
        EXPECT_EQ(*after->open_files, 0u);  // Wine counts no handles (docs/WINDOWS.md)
    else
        EXPECT_GE(*after->open_files, *before->open_files + 1);
    EXPECT_EQ(proctimes::read_process_resources(0, o).error(), errc::invalid_argument);
}

TEST(WindowsHandles, AnIdNoProcessHasAnswersNoSuchProcess) {
    // The highest id Windows can hand out: OpenProcess answers
    // ERROR_INVALID_PARAMETER, "no such process" the Windows way.
    auto p = proctimes::process::open(static_cast<pid_t>(0xFFFFFFFCu));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::no_such_process);
    EXPECT_EQ(p.error(), std::errc::no_such_process);
    auto t = proctimes::thread::open(static_cast<pid_t>(0xFFFFFFFCu));
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error(), errc::no_such_thread);
    EXPECT_EQ(proctimes::process::open(0).error(), errc::invalid_argument);
    EXPECT_EQ(proctimes::process::open(static_cast<pid_t>(0x100000000LL)).error(), errc::invalid_argument);
}

TEST(WindowsHandles, AnEndedProcessWhoseHandlesAreClosed) {
    pid_t pid = 0;
    {
        auto c = proctimes::child::spawn({.argv = {wintest::self_path(), "child", "burn", "0", "0"}});
        ASSERT_TRUE(c) << c.error().message();
        pid = c->id();
        ASSERT_TRUE(c->wait());
    }  // every handle to it closed
    auto p = proctimes::process::open(pid);
    if (wintest::under_wine()) {
        // Wine 8 keeps the ended process's object: OpenProcess succeeds, and
        // the handle is already signalled.
        ASSERT_TRUE(p) << p.error().message();
        auto t = p->times();
        ASSERT_TRUE(t);
        EXPECT_EQ(t->state, proctimes::task_state::exited);
    } else {
        ASSERT_FALSE(p);
        EXPECT_EQ(p.error(), errc::no_such_process);
    }
}

TEST(WindowsHandles, AThreadHandleSeesItsEndAndKeepsItsFinalValues) {
    std::atomic<pid_t> tid{0};
    std::atomic<bool> go{false};
    const auto before = wintest::now();
    std::thread worker([&] {
        tid = static_cast<pid_t>(::GetCurrentThreadId());
        while (!go) ::Sleep(1);
        wintest::burn(50ms);
    });
    while (tid == 0) ::Sleep(1);
    auto t = proctimes::thread::open(proctimes::this_process::id(), tid);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(proctimes::thread::open(4, tid).error(), errc::no_such_thread);  // not its process
    auto running = t->times();
    ASSERT_TRUE(running);
    EXPECT_EQ(running->state, proctimes::task_state::running);
    EXPECT_GE(running->creation + 1ms, before);  // FILETIME creation: 100 ns, tick-stamped on old systems
    go = true;
    auto w = proctimes::wait_for_exit(*t, 30s);
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_TRUE(*w);
    const auto after = wintest::now();
    worker.join();
    auto ended = t->times();
    ASSERT_TRUE(ended);
    EXPECT_EQ(ended->state, proctimes::task_state::exited);
    ASSERT_TRUE(ended->exit);
    EXPECT_LE(*ended->exit, after);
    EXPECT_GE(*ended->exit, running->sampled_at);
    auto again = t->times();
    ASSERT_TRUE(again);
    EXPECT_EQ(again->exit, ended->exit);
    if (wintest::under_wine()) {
        // Wine 8 reads a thread's times from Linux, which forgets an ended
        // thread: GetThreadTimes on its handle gives its final values until
        // the Linux thread is gone (the handle is signalled before), then 0
        // kernel and 0 user (both measured).
        for (const auto& r : {*ended, *again}) {
            EXPECT_TRUE(r.cpu() == 0ns || r.cpu() >= 50ms) << r.cpu().count();
        }
        if (ended->cpu() == 0ns) {
            EXPECT_EQ(again->cpu(), 0ns);  // never back from 0
        }
    } else {
        EXPECT_GE(ended->cpu(), 50ms);
        EXPECT_EQ(again->cpu(), ended->cpu());
    }
}

TEST(WindowsHandles, AnIdIsTheProcesssOwnOrNamesNoProcess) {
    // Windows and Wine ignore an id's low two bits: OpenProcess of this
    // process's id + 1 opens this process. No handle claims such an id.
    const DWORD self = ::GetCurrentProcessId();
    const DWORD tid = ::GetCurrentThreadId();
    for (DWORD low = 1; low < 4; ++low) {
        HANDLE h = ::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, self + low);
        ASSERT_NE(h, nullptr) << "the system no longer opens process " << self << " for id " << self + low;
        EXPECT_EQ(::GetProcessId(h), self);
        ::CloseHandle(h);
        auto p = proctimes::process::open(static_cast<pid_t>(self) + low);
        ASSERT_FALSE(p) << "opened as " << p->id() << ", identity " << p->identity().id;
        EXPECT_EQ(p.error(), errc::no_such_process);
        auto t = proctimes::thread::open(static_cast<pid_t>(tid) + low);
        ASSERT_FALSE(t) << "opened as " << t->id();
        EXPECT_EQ(t.error(), errc::no_such_thread);
    }
    auto p = proctimes::process::open(static_cast<pid_t>(self));
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(p->id(), static_cast<pid_t>(self));
}

TEST(WindowsHandles, AnEndedProcessHasItsExitStatus) {
    auto c = proctimes::child::spawn({.argv = {wintest::self_path(), "child", "sleep", "1500"}});
    ASSERT_TRUE(c) << c.error().message();
    auto burner = proctimes::child::spawn({.argv = {wintest::self_path(), "child", "burn", "0", "9"}});
    ASSERT_TRUE(burner) << burner.error().message();
    // Handles of the library's own, not the children's: what a program that
    // opens a pid has.
    auto p = proctimes::process::open(c->id());
    ASSERT_TRUE(p) << p.error().message();
    auto running = p->exit_status();
    ASSERT_TRUE(running) << running.error().message();
    EXPECT_FALSE(*running) << "it sleeps 1.5 s";
    // Ended, seen by a wait on the handle.
    auto w = proctimes::wait_for_exit(*p, 60s);
    ASSERT_TRUE(w && *w);
    auto st = p->exit_status();
    ASSERT_TRUE(st) << st.error().message();
    ASSERT_TRUE(*st);
    EXPECT_EQ(**st, (proctimes::exit_status{0, 0, false}));
    // Ended before the handle was opened, and seen by no wait.
    auto b = proctimes::wait_for_exit(burner->handle(), 60s);
    ASSERT_TRUE(b && *b);
    auto q = proctimes::process::open(burner->id());  // the child's handle keeps it openable
    ASSERT_TRUE(q) << q.error().message();
    auto code = q->exit_status();
    ASSERT_TRUE(code) << code.error().message();
    ASSERT_TRUE(*code);
    EXPECT_EQ((*code)->code, 9);
    EXPECT_EQ((*code)->signal, 0);
    ASSERT_TRUE(c->wait());
    ASSERT_TRUE(burner->wait());
}

// The CPU this process has used on every processor, by its own clock.
std::chrono::nanoseconds process_cpu() {
    FILETIME c{}, e{}, k{}, u{};
    ::GetProcessTimes(::GetCurrentProcess(), &c, &e, &k, &u);
    return std::chrono::nanoseconds{static_cast<std::int64_t>(wintest::ticks(k) + wintest::ticks(u)) * 100};
}

TEST(WindowsHandles, AnExitIsNeverLaterThanTheWaitThatSawIt) {
    const auto n = static_cast<unsigned>(std::max<DWORD>(::GetActiveProcessorCount(ALL_PROCESSOR_GROUPS), 1));
    if (wintest::under_wine()) {
        // Wine answers GetProcessTimes on another process with the caller's
        // times: this process burns a second per processor first, so that
        // a child's creation + that CPU / processors lies past its end.
        std::vector<std::thread> burners;
        const auto target = std::chrono::nanoseconds{1s} * n;
        for (unsigned i = 0; i < n; ++i)
            burners.emplace_back([&] {
                const auto start = std::chrono::steady_clock::now();
                while (process_cpu() < target && std::chrono::steady_clock::now() - start < 30s) wintest::burn(20ms);
            });
        for (auto& t : burners) t.join();
        ASSERT_GE(process_cpu(), target);
    }
    auto c = proctimes::child::spawn({.argv = {wintest::self_path(), "child", "sleep", "100"}});
    ASSERT_TRUE(c) << c.error().message();
    auto p = proctimes::process::open(c->id());
    ASSERT_TRUE(p) << p.error().message();
    auto w = proctimes::wait_for_exit(*p, 60s);
    const auto seen = wintest::now();
    ASSERT_TRUE(w && *w);
    auto e = c->wait();
    const auto reaped = wintest::now();
    ASSERT_TRUE(e) << e.error().message();
    const auto check = [](const proctimes::task_times& t, proctimes::instant by) {
        ASSERT_TRUE(t.exit);
        ASSERT_TRUE(t.exit_earliest);
        EXPECT_LE(*t.exit, by) << "the exit is " << (*t.exit - by).count() << " ns after the wait that saw it";
        EXPECT_GE(*t.exit_earliest, t.creation);
        EXPECT_LE(*t.exit_earliest, *t.exit);
        EXPECT_EQ(t.precision.exit_source, proctimes::exit_source::observed);
        EXPECT_EQ(t.precision.exit_resolution, *t.exit - *t.exit_earliest);
    };
    auto t = p->times();
    ASSERT_TRUE(t) << t.error().message();
    check(*t, seen);
    check(e->times, reaped);
}

TEST(WindowsHandles, CoreIsSelfKnowsThisProcessAndThread) {
    auto self = proctimes::process::open(static_cast<pid_t>(::GetCurrentProcessId()));
    ASSERT_TRUE(self) << self.error().message();
    EXPECT_TRUE(proctimes::detail::core_is_self(*self));
    auto me = proctimes::thread::open(static_cast<pid_t>(::GetCurrentThreadId()));
    ASSERT_TRUE(me) << me.error().message();
    EXPECT_TRUE(proctimes::detail::core_is_self(*me));
    auto c = proctimes::child::spawn({.argv = {wintest::self_path(), "child", "sleep", "0"}});
    ASSERT_TRUE(c) << c.error().message();
    auto other = proctimes::process::open(c->id());
    ASSERT_TRUE(other) << other.error().message();
    EXPECT_FALSE(proctimes::detail::core_is_self(*other));
    ASSERT_TRUE(c->wait());
}

TEST(WindowsCycles, HardwareCounterAndCounts) {
    auto st = proctimes::hardware_cycle_counter_status();
    if (wintest::under_wine()) {
        // Wine 8: QueryThreadCycleTime fails with ERROR_CALL_NOT_IMPLEMENTED.
        ASSERT_FALSE(st);
        EXPECT_EQ(st.error(), errc::not_supported);
    } else {
        EXPECT_TRUE(st) << st.error().message();
    }
    const auto& rate = proctimes::get_tsc_rate();
    EXPECT_EQ(rate.source, proctimes::tsc_rate_source::calibrated);
    EXPECT_GT(rate.hz, 100'000'000u);  // every x86-64 TSC runs above 100 MHz
    const auto a = proctimes::this_thread::cycles();
    wintest::burn(30ms);
    const auto b = proctimes::this_thread::cycles();
    EXPECT_GT(b, a);
    // 30 ms of CPU at the rate, less one tick's worth where the count comes
    // from tick-counted thread times (Wine).
    const auto least = wintest::under_wine() ? 20ms : 30ms;
    EXPECT_GE(b - a, proctimes::cycles_from_cpu_time(least, rate.hz) / 2);
    EXPECT_GE(proctimes::this_process::cycles(), b - a);
}

TEST(WindowsCivil, UtcOffsetIsTheTimeZoneSettings) {
    TIME_ZONE_INFORMATION tz{};
    const DWORD which = ::GetTimeZoneInformation(&tz);
    ASSERT_NE(which, TIME_ZONE_ID_INVALID);
    LONG bias = tz.Bias;
    if (which == TIME_ZONE_ID_DAYLIGHT) bias += tz.DaylightBias;
    if (which == TIME_ZONE_ID_STANDARD) bias += tz.StandardBias;
    auto off = proctimes::current_utc_offset();
    ASSERT_TRUE(off) << off.error().message();
    EXPECT_EQ(off->count(), -static_cast<std::int64_t>(bias) * 60);
}

TEST(WindowsErrors, ErrnoAndWindowsCodesMean) {
    // An errno value from the library is generic: Windows' system category
    // holds GetLastError() codes, where 12 (ENOMEM) is ERROR_INVALID_ACCESS.
    EXPECT_EQ(proctimes::detail::errno_code(ENOMEM), std::errc::not_enough_memory);
    EXPECT_EQ(proctimes::detail::errno_code(ESRCH), std::errc::no_such_process);
    // proctimes codes map to the portable conditions.
    EXPECT_EQ(proctimes::make_error_code(errc::no_such_process), std::errc::no_such_process);
    EXPECT_EQ(proctimes::make_error_code(errc::access_denied), std::errc::permission_denied);
    EXPECT_EQ(proctimes::exit_records_status(), errc::not_supported);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::string(argv[1]) == "child") return wintest::child_main(argc, argv);
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
