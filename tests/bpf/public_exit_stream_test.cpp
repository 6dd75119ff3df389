// SPDX-License-Identifier: MIT
// The public exit_stream (proctimes/ledger.hpp) on its eBPF source: exact
// ends of tasks nobody held, the source named, losses counted exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_skip.hpp"
#include "burn.hpp"
#include "linux/bpf/exit_ring_reader.hpp"
#include "proctimes/clock.hpp"
#include "proctimes/ledger.hpp"

using namespace proctimes;
using namespace std::chrono_literals;
using std::chrono::nanoseconds;

namespace {

instant now() { return std::chrono::time_point_cast<nanoseconds>(std::chrono::system_clock::now()); }

}  // namespace

TEST(PublicExitStream, EndedTaskFromAnEbpfEnd) {
    detail::bpf_task_end e;
    e.pid = e.tid = 4242;
    e.parent_pid = 1;
    e.uid = 1000;
    e.name.assign("worker");
    e.start_ticks = 123;
    e.creation = instant{} + 1000s;
    e.exit = instant{} + 1002s;
    e.released = instant{} + 1003s;
    e.released_since_boot = 50s;
    e.kernel = 3ms;
    e.user = 7ms;
    e.group_kernel = 4ms;
    e.group_user = 9ms;
    e.status.code = 5;
    e.threads_known = true;
    const ended_task t = detail::to_ended_task(e);
    EXPECT_TRUE(t.exact);
    EXPECT_EQ(t.tid, 4242);
    EXPECT_EQ(t.pid, 4242);
    EXPECT_EQ(t.uid, 1000u);
    EXPECT_EQ(t.name.str(), "worker");
    EXPECT_EQ(t.cpu(), 10ms);
    EXPECT_EQ(t.process_kernel, 4ms);
    EXPECT_EQ(t.process_user, 9ms);
    EXPECT_TRUE(t.process_ended);
    EXPECT_TRUE(t.whole_process);
    EXPECT_EQ(t.received_since_boot, 50s);
    EXPECT_EQ(t.received_since_boot - t.elapsed, 47s) << "its exact start since boot";
    ASSERT_TRUE(t.exit && t.creation && t.status);
    EXPECT_EQ(*t.exit, instant{} + 1002s);
    EXPECT_EQ(*t.creation, instant{} + 1000s);
    EXPECT_EQ(t.status->code, 5);
    EXPECT_EQ(t.start_ticks, 123u);

    e.had_threads = true;  // a second thread once: its own values are not the process's
    EXPECT_FALSE(detail::to_ended_task(e).whole_process);
    e.threads_known = false;
    e.had_threads = false;  // unknown counts as not
    EXPECT_FALSE(detail::to_ended_task(e).whole_process);
    e.tid = 4243;  // a thread: no process values
    const ended_task th = detail::to_ended_task(e);
    EXPECT_FALSE(th.process_ended);
    EXPECT_EQ(th.process_kernel + th.process_user, 0ns);
}

TEST(PublicExitStream, MovedFromSaysNothing) {
    exit_stream s;
    EXPECT_FALSE(s.source());
    EXPECT_FALSE(s.lost());
    EXPECT_EQ(s.native_handle(), -1);
    std::vector<ended_task> out;
    EXPECT_EQ(s.read(out).error(), errc::invalid_handle);
}

TEST(PublicExitStream, EbpfSourceGivesExactEndOfAProcessReapedByItsParent) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    auto auto_pick = exit_stream::open();
    ASSERT_TRUE(auto_pick) << auto_pick.error().message();
    EXPECT_EQ(auto_pick->source(), proctimes::exit_stream_source::bpf) << "automatic prefers eBPF where it can be used";
    auto_pick = exit_stream{};

    auto s = exit_stream::open(exit_stream_source::bpf);
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->source(), proctimes::exit_stream_source::bpf);
    ASSERT_TRUE(s->lost());
    const std::uint64_t lost0 = *s->lost();
    constexpr auto burned = 30ms;
    // Under load the kernel now and then runs no sched_process_free program
    // for a task (docs/BPF.md, Losses): the stream counts that end lost (found
    // when the task's address is reused, or by the sweep 10-11 s on), and no
    // stream can deliver it. A try whose child was lost that way is repeated.
    instant t0, t1;
    pid_t kid = -1;
    std::vector<ended_task> got;
    const ended_task* mine = nullptr;
    bool complete = true;
    for (int attempt = 1; attempt <= 3 && !mine; ++attempt) {
        const std::uint64_t lost_before = *s->lost();
        t0 = now();
        kid = ::fork();
        ASSERT_GE(kid, 0);
        if (kid == 0) {
            testing_helpers::burn_thread_cpu(burned);
            ::_exit(5);
        }
        ASSERT_EQ(::waitpid(kid, nullptr, 0), kid);
        t1 = now();
        got.clear();
        for (int i = 0; i < 200 && !mine; ++i) {
            auto w = s->wait(50ms);
            ASSERT_TRUE(w) << w.error().message();
            if (*w) {
                pollfd pf{s->native_handle(), POLLIN, 0};
                EXPECT_EQ(::poll(&pf, 1, 0), 1) << "wait() said records wait: the handle is readable";
            }
            auto r = s->read(got);
            ASSERT_TRUE(r) << r.error().message();
            complete = complete && *r;
            for (const auto& e : got)
                if (e.tid == kid) mine = &e;
        }
        if (!mine && *s->lost() > lost_before)
            std::printf("try %d: the end of %d was counted lost (the kernel ran no free program for it); once more\n",
                        attempt, kid);
        else
            break;
    }
    ASSERT_NE(mine, nullptr) << "no end for " << kid << (complete ? "" : " (ends were lost)");
    EXPECT_TRUE(mine->exact);
    EXPECT_EQ(mine->pid, kid);
    EXPECT_EQ(mine->parent_pid, ::getpid());
    EXPECT_TRUE(mine->process_ended);
    EXPECT_GE(mine->cpu(), burned);
    EXPECT_GE(mine->process_kernel + mine->process_user, burned);
    ASSERT_TRUE(mine->status);
    EXPECT_EQ(mine->status->code, 5);
    ASSERT_TRUE(mine->exit && mine->creation);
    EXPECT_LE(t0, *mine->creation);
    EXPECT_LE(*mine->creation + burned, *mine->exit);
    EXPECT_LE(*mine->exit, t1);
    EXPECT_GT(mine->start_ticks, 0u);
    // No record arrived twice, and with nothing lost, read() said so.
    if (*s->lost() == lost0) EXPECT_TRUE(complete);
    std::vector<ended_task> none;
    auto again = s->read(none);
    ASSERT_TRUE(again);
    for (const auto& e : none) EXPECT_NE(e.tid, kid);
}

// settle(): a zombie (not reaped) is not waited for; once it returns true,
// one read() without waiting holds the end of every child that exited and
// was reaped in the window, or the stream counted it lost.
TEST(PublicExitStream, SettleHoldsEveryReleasedEndOfTheWindow) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    auto s = exit_stream::open(exit_stream_source::bpf);
    ASSERT_TRUE(s) << s.error().message();
    const auto since_boot = [] {
        timespec ts{};
        ::clock_gettime(CLOCK_BOOTTIME, &ts);
        return std::chrono::seconds(ts.tv_sec) + nanoseconds(ts.tv_nsec);
    };
    std::vector<ended_task> got;
    ASSERT_TRUE(s->read(got));
    got.clear();

    const nanoseconds from = since_boot();
    const pid_t zombie = ::fork();
    ASSERT_GE(zombie, 0);
    if (zombie == 0) ::_exit(0);
    std::this_thread::sleep_for(20ms);  // it has exited: a zombie
    const nanoseconds mid = since_boot();
    auto t0 = std::chrono::steady_clock::now();
    auto settled = s->settle(from, mid, 3s);
    ASSERT_TRUE(settled) << settled.error().message();
    EXPECT_TRUE(*settled) << "a zombie is not waited for";
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);

    const std::uint64_t lost0 = *s->lost();
    std::vector<pid_t> kids;
    for (int wave = 0; wave < 4; ++wave) {
        std::vector<pid_t> w;
        for (int i = 0; i < 50; ++i) {
            const pid_t k = ::fork();
            ASSERT_GE(k, 0);
            if (k == 0) ::_exit(0);
            w.push_back(k);
        }
        for (const pid_t k : w) ASSERT_EQ(::waitpid(k, nullptr, 0), k);
        kids.insert(kids.end(), w.begin(), w.end());
    }
    const nanoseconds to = since_boot();
    t0 = std::chrono::steady_clock::now();
    settled = s->settle(mid, to, 3s);
    const auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_TRUE(settled) << settled.error().message();
    ASSERT_TRUE(s->read(got));
    std::size_t found = 0;
    bool zombie_seen = false;
    for (const auto& e : got) {
        if (e.tid == zombie) zombie_seen = true;
        for (const pid_t k : kids)
            if (e.tid == k && e.process_ended) ++found;
    }
    const std::uint64_t lost = *s->lost() - lost0;
    std::printf("settle took %.1f ms (%s): %zu of %zu ends read at once, %llu lost\n",
                std::chrono::duration<double, std::milli>(took).count(), *settled ? "settled" : "timed out", found,
                kids.size(), static_cast<unsigned long long>(lost));
    EXPECT_FALSE(zombie_seen) << "a zombie has no end yet";
    // A free program that never ran (docs/BPF.md, "Losses") holds settle()
    // to its bound, and that end is counted only later: nothing to check then.
    if (*settled) EXPECT_GE(found + lost, kids.size()) << "an end released in the window came after settle()";
    ASSERT_EQ(::waitpid(zombie, nullptr, 0), zombie);

    EXPECT_EQ(exit_stream{}.settle(from, to, 1ms).error(), errc::invalid_handle);
}

TEST(PublicExitStream, TaskstatsCanStillBeChosen) {
    auto s = exit_stream::open(exit_stream_source::taskstats);
    if (!s) GTEST_SKIP() << "no taskstats listener here: " << s.error().message();
    EXPECT_EQ(s->source(), proctimes::exit_stream_source::taskstats);
    EXPECT_FALSE(s->lost()) << "taskstats cannot say how many were lost";
    EXPECT_GE(s->native_handle(), 0);
}

namespace {

// Starts `argv` (fork + execv) and reaps it; returns its pid.
pid_t run_to_end(const std::vector<std::string>& argv) {
    std::vector<char*> a;
    a.reserve(argv.size() + 1);
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    const pid_t kid = ::fork();
    if (kid == 0) {
        ::execv(a[0], a.data());
        ::_exit(127);
    }
    if (kid > 0) ::waitpid(kid, nullptr, 0);
    return kid;
}

// The end of process `pid` from `s`, waiting up to 10 s; nullopt if it
// never came (then `lost` says whether the stream counted ends lost).
std::optional<ended_task> end_of(exit_stream& s, pid_t pid) {
    std::vector<ended_task> got;
    for (int i = 0; i < 200; ++i) {
        (void)s.wait(50ms);
        got.clear();
        if (!s.read(got)) return std::nullopt;
        for (auto& e : got)
            if (e.tid == pid && e.process_ended) return std::move(e);
    }
    return std::nullopt;
}

}  // namespace

// A process that exec'd while the stream was open ends with the command line
// of its last exec, whole: what a reader grouping by command line needs for
// a process it never saw alive.
TEST(PublicExitStream, AnExecdProcessEndsWithItsLastExecsCommandLine) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    auto s = exit_stream::open(exit_stream_source::bpf);
    ASSERT_TRUE(s) << s.error().message();
    const std::uint64_t lost0 = *s->lost();

    const pid_t one = run_to_end({"/bin/sh", "-c", "exit 3", "pt arg"});
    ASSERT_GT(one, 0);
    auto e = end_of(*s, one);
    if (!e && *s->lost() > lost0) GTEST_SKIP() << "its end was lost (counted); nothing to check";
    ASSERT_TRUE(e) << "no end for " << one;
    ASSERT_TRUE(e->command_line);
    EXPECT_EQ(*e->command_line, std::string("/bin/sh\0-c\0exit 3\0pt arg\0", 25));

    // Two execs: the last one's, not the first's.
    const pid_t two = run_to_end({"/bin/sh", "-c", "exec /bin/true second"});
    ASSERT_GT(two, 0);
    e = end_of(*s, two);
    ASSERT_TRUE(e) << "no end for " << two;
    ASSERT_TRUE(e->command_line);
    EXPECT_EQ(*e->command_line, std::string("/bin/true\0second\0", 17));
    EXPECT_EQ(e->name.view(), "true");

    // An argument area over 8 KiB is not cut: no command line at all.
    const pid_t big = run_to_end({"/bin/sh", "-c", "exit 0", std::string(9000, 'x')});
    ASSERT_GT(big, 0);
    e = end_of(*s, big);
    ASSERT_TRUE(e) << "no end for " << big;
    EXPECT_FALSE(e->command_line) << e->command_line->size() << " bytes";

    // Forked, never exec'd: it runs its parent's program, whose command line
    // the stream did not see (this test was started before it opened).
    const pid_t forked = ::fork();
    ASSERT_GE(forked, 0);
    if (forked == 0) ::_exit(0);
    ASSERT_EQ(::waitpid(forked, nullptr, 0), forked);
    e = end_of(*s, forked);
    ASSERT_TRUE(e) << "no end for " << forked;
    EXPECT_TRUE(e->forked_no_exec);
    EXPECT_FALSE(e->command_line);
}

// An exec record the ring buffer has no room for leaves its process with no
// command line, not with an earlier exec's: here the ring is one page, so
// the second exec's record (a 5,000-byte argument) can never fit, while the
// first's (a short one) and the end record do.
TEST(PublicExitStream, ALostExecRecordLeavesNoCommandLineRatherThanAnEarlierOne) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page != 4096) GTEST_SKIP() << "the page is " << page << " bytes: a 5,000-byte record would fit";
    ::setenv("PROCTIMES_BPF_EXIT_RING_KIB", "4", 1);
    auto s = exit_stream::open(exit_stream_source::bpf);
    ::unsetenv("PROCTIMES_BPF_EXIT_RING_KIB");
    ASSERT_TRUE(s) << s.error().message();
    for (int attempt = 1; attempt <= 5; ++attempt) {
        // The long argument is made by the first program, not given to it.
        const pid_t kid = run_to_end({"/bin/sh", "-c", "exec /bin/sh -c 'exit 0' \"$(printf '%5000s' '')\""});
        ASSERT_GT(kid, 0);
        const auto e = end_of(*s, kid);
        if (!e) {  // its end did not fit either (other ends filled the page): once more
            std::printf("try %d: the end of %d was lost to the one-page ring; once more\n", attempt, kid);
            continue;
        }
        EXPECT_FALSE(e->command_line) << "an earlier exec's command line: " << e->command_line->substr(0, 40);
        return;
    }
    GTEST_SKIP() << "no end came through the one-page ring in 5 tries (a busy machine)";
}

namespace {

// Context switches of the threads of this process other than those in `not_these`.
long switches_of_threads_but(const std::vector<std::string>& not_these, std::vector<std::string>* tids = nullptr) {
    long n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
        const std::string tid = e.path().filename().string();
        if (std::find(not_these.begin(), not_these.end(), tid) != not_these.end()) continue;
        if (tids) tids->push_back(tid);
        std::ifstream f(e.path() / "status");
        for (std::string line; std::getline(f, line);)
            if (line.find("ctxt_switches:") != std::string::npos) n += std::stol(line.substr(line.find(':') + 1));
    }
    return n;
}

std::vector<std::string> thread_ids() {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) out.push_back(e.path().filename());
    return out;
}

}  // namespace

// A reader on its own schedule (serve's scrape) asks for on_read: every end
// still reaches read(), exact, but the kernel no longer wakes the stream's
// thread for each (40 children ending 5 ms apart: a pushed stream's thread
// wakes for most of them).
TEST(PublicExitStream, OnReadDeliveryGivesEveryEndAtReadWithoutAWakeUpEach) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    const auto before = thread_ids();
    auto s = exit_stream::open(exit_stream_source::bpf, exit_stream_delivery::on_read);
    ASSERT_TRUE(s) << s.error().message();
    ASSERT_EQ(s->source(), exit_stream_source::bpf);
    std::vector<std::string> stream_threads;
    const long switches0 = switches_of_threads_but(before, &stream_threads);
    ASSERT_FALSE(stream_threads.empty()) << "the stream's thread";
    ASSERT_TRUE(s->lost());
    const std::uint64_t lost0 = *s->lost();
    constexpr int kids = 40;
    std::vector<pid_t> pids;
    for (int i = 0; i < kids; ++i) {
        const pid_t k = ::fork();
        ASSERT_GE(k, 0);
        if (k == 0) ::_exit(i);
        ASSERT_EQ(::waitpid(k, nullptr, 0), k);
        pids.push_back(k);
        std::this_thread::sleep_for(5ms);
    }
    std::this_thread::sleep_for(100ms);  // their frees, an RCU grace period on
    const long switches1 = switches_of_threads_but(before);
    // read() takes them from the kernel itself (the stream's thread may have
    // taken some at a look of its own: read() gives those too). An end whose
    // free program the kernel never ran (about one in 200-500 with both cores
    // busy, docs/BPF.md "Losses") is counted in lost() by a sweep 10-11 s
    // after its task is gone: until then, each end is read or counted.
    std::vector<ended_task> got;
    int found = 0;
    const auto lost_since = [&] { return static_cast<int>(*s->lost() - lost0); };
    const auto until = std::chrono::steady_clock::now() + 15s;
    while (found + lost_since() < kids && std::chrono::steady_clock::now() < until) {
        ASSERT_TRUE(s->read(got));
        found = 0;
        for (std::size_t i = 0; i < pids.size(); ++i)
            for (const ended_task& e : got)
                if (e.tid == pids[i] && e.process_ended) {
                    ++found;
                    EXPECT_TRUE(e.exact);
                    ASSERT_TRUE(e.status.has_value());
                    EXPECT_EQ(e.status->code, static_cast<int>(i));
                    EXPECT_TRUE(e.exit.has_value());
                    break;
                }
        if (found < kids) std::this_thread::sleep_for(20ms);
    }
    // lost() counts any task of the system: ours are at most that many.
    EXPECT_GE(found + lost_since(), kids) << found << " ends read, " << lost_since() << " counted lost";
    std::printf("on_read: the stream's thread switched %ld times while %d children ended; %d read, %d lost\n",
                switches1 - switches0, kids, found, lost_since());
    // It looks at least every 5 s, and the run above takes well under 1 s
    // (more on a loaded machine: a few looks). A pushed stream wakes for
    // about every end here.
    EXPECT_LT(switches1 - switches0, kids / 4);
}
