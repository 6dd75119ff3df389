// SPDX-License-Identifier: MIT
// proctimes::child: children start, their exit status and exit instant are
// recorded, their own CPU time is told apart from their descendants', and
// nothing leaks: no zombies, no descriptors. Also process::exit_status() for
// processes proctimes did not start.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "in_child.hpp"
#include "proctimes/error.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/spawn.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;

namespace {
spawn_options burner(int user_ms, int status = 0, int kernel_ms = 0, int sleep_ms = 0) {
    spawn_options o;
    o.argv = {PROCTIMES_CPU_BURNER, std::to_string(user_ms), std::to_string(status), std::to_string(kernel_ms),
              std::to_string(sleep_ms)};
    return o;
}

child spawn_ok(const spawn_options& o) {
    auto r = child::spawn(o);
    EXPECT_TRUE(r) << r.error().message();
    return r ? std::move(*r) : child{};
}

bool exists(pid_t pid) { return ::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0; }

// Still a process of ours (running or a zombie)? A reused pid has another parent.
bool ours(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) return false;
    const auto close = line.rfind(')');
    if (close == std::string::npos) return false;
    char state = 0;
    long ppid = 0;
    std::sscanf(line.c_str() + close + 1, " %c %ld", &state, &ppid);
    return ppid == ::getpid();
}

// Does this process have an unreaped child?
bool has_zombie_child() {
    siginfo_t si{};
    if (::waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0) return false;  // ECHILD: no children at all
    return si.si_pid != 0;
}

std::uint64_t status_bits(pid_t pid, const char* key) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(key, 0) == 0) return std::stoull(line.substr(line.find('\t') + 1), nullptr, 16);
    ADD_FAILURE() << key << " not found";
    return ~0ULL;
}
}  // namespace

TEST(Child, TrueExitsZeroAndIsReaped) {
    auto c = spawn_ok({.argv = {"true"}});
    ASSERT_TRUE(c.valid());
    auto e = c.wait();
    ASSERT_TRUE(e) << e.error().message();
    EXPECT_EQ(e->status, (exit_status{0, 0, false}));
    EXPECT_FALSE(e->status.value().signaled());
    EXPECT_FALSE(exists(c.id()));                   // reaped by wait, not a zombie
    EXPECT_EQ(c.wait().value().status, e->status);  // the same values again
}

TEST(Child, OwnCpuAndExitInstantBracketedByTheChildsLastInstant) {
    // The exit instant must fall within 2 ms after the child's last instant.
    // On a shared machine the observer can be descheduled for longer, so the
    // bound must hold in one of up to ten runs (it stops at the first that
    // meets it); everything else in each of them.
    // The user:kernel split is not asserted: the kernel scales it from tick
    // samples, and on an overloaded machine a busy loop was seen split 0.8 ms
    // user / 190 ms kernel. The total is exact.
    nanoseconds best = nanoseconds::max();
    for (int attempt = 0; attempt < 10 && best > 2ms; ++attempt) {
        int p[2];
        ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
        auto o = burner(150, 0, 40);
        o.argv.push_back("report");
        o.stdout_fd = p[1];
        const auto before = system_clock::now();
        auto c = spawn_ok(o);
        ::close(p[1]);
        ASSERT_TRUE(c.valid());
        std::string text;
        char buf[64];
        ssize_t n;
        while ((n = ::read(p[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
        ::close(p[0]);
        auto e = c.wait();
        const auto after = system_clock::now();
        ASSERT_TRUE(e) << e.error().message();
        ASSERT_FALSE(text.empty());
        const instant last{nanoseconds{std::stoll(text)}};

        EXPECT_EQ(e->status, (exit_status{0, 0, false}));
        const auto& t = e->times;
        SCOPED_TRACE("attempt " + std::to_string(attempt) + ": user " + std::to_string(t.user.count()) +
                     " ns, kernel " + std::to_string(t.kernel.count()) + " ns, source " +
                     std::string(to_string(t.precision.source)));
        EXPECT_EQ(t.state, task_state::exited);
        // No descendants: the µs split of the wait rusage is the child's own.
        EXPECT_EQ(t.precision.source, cpu_source::wait_rusage);
        EXPECT_EQ(e->children_user + e->children_kernel, 0ns);
        EXPECT_GE(t.cpu(), 190ms);                     // 150 + 40 ms measured by the child's own clock (exact total)
        EXPECT_LE(t.cpu(), last - t.creation + 10ms);  // one thread: CPU ≤ wall (creation floored to 10 ms)
        // The exit instant: after the child's last instant, before the wait returned.
        ASSERT_TRUE(t.exit);
        EXPECT_GE(last, before);
        EXPECT_GE(*t.exit, last);
        EXPECT_LE(*t.exit, after);
        EXPECT_GE(t.creation, before - 11ms);
        best = std::min(best, *t.exit - last);
        // The handle answers the same after the reaping.
        auto again = c.handle().times();
        ASSERT_TRUE(again) << again.error().message();
        EXPECT_EQ(again->exit, t.exit);
        EXPECT_EQ(again->kernel, t.kernel);
        EXPECT_EQ(again->user, t.user);
        EXPECT_EQ(c.handle().exit_status().value(), std::optional<exit_status>(e->status));
    }
    RecordProperty("best_exit_latency_us", std::to_string(duration_cast<microseconds>(best).count()));
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    // (A sanitized child runs its sanitizer's finalization between its last
    // instant and its exit, which can take longer.)
    EXPECT_LE(best, 2ms) << "exit stamped " << duration_cast<microseconds>(best).count()
                         << " µs after the child's last instant at best";
#endif
}

TEST(Child, UserTimeAgreesWithTheChildsOwnMeasurement) {
    // Issue contract: 200 ms of user time, reported within 5% + 1 ms of what
    // the child measured itself (getrusage in the child, just before exit).
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    auto o = burner(200);
    o.argv.push_back("usage");
    o.stdout_fd = p[1];
    auto c = spawn_ok(o);
    ::close(p[1]);
    std::string text;
    char buf[64];
    ssize_t n;
    while ((n = ::read(p[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    ::close(p[0]);
    auto e = c.wait();
    ASSERT_TRUE(e) << e.error().message();
    ASSERT_FALSE(text.empty()) << "read ended with " << n << " errno " << errno << " status "
                               << (e->status ? e->status->shell_code() : -1);
    const nanoseconds own{std::stoll(text)};
    // 200 ms of CPU, the total exact. Its user:kernel split is the kernel's
    // tick samples scaled to it: nearly all user, but when no sampled tick
    // found the task in user mode the kernel puts it all in kernel mode. On a
    // loaded virtual machine the child once measured 0 ns of user time after
    // its 200 ms (why no tick was in user mode, not measured; its clock reads
    // are system calls). Either way what is reported must be what the child
    // measured.
    EXPECT_GE(e->times.cpu(), 200ms);
    if (own < 150ms)
        std::printf("the child measured %lld ns of user time: its ticks fell in the kernel\n",
                    static_cast<long long>(own.count()));
    const nanoseconds diff = e->times.user > own ? e->times.user - own : own - e->times.user;
    EXPECT_LE(diff, own / 20 + 1ms) << "reported " << e->times.user.count() << " ns, measured " << own.count();
    EXPECT_EQ(e->times.precision.source, cpu_source::wait_rusage);
}

TEST(Child, DescendantsCpuIsNotItsOwn) {
    // sh waits for the burner (a grandchild of the test), then exits.
    auto c = spawn_ok({.argv = {"sh", "-c", "\"$0\" 150 0 20; exit 5", PROCTIMES_CPU_BURNER}});
    ASSERT_TRUE(c.valid());
    auto e = c.wait();
    ASSERT_TRUE(e) << e.error().message();
    EXPECT_EQ(e->status.value().code, 5);
    // The total is exact (the burner's own clock measured 150 + 20 ms); its
    // user:kernel split is the kernel's tick sampling, not asserted.
    EXPECT_GE(e->children_user + e->children_kernel, 165ms);
    EXPECT_LT(e->times.cpu(), 60ms);  // the shell's own: fork, exec, wait
    EXPECT_NE(e->times.precision.source, cpu_source::wait_rusage);
    EXPECT_TRUE(e->times.exit);
}

TEST(Child, ExitStatusAndSignal) {
    auto c = spawn_ok(burner(0, 7));
    auto e = c.wait();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->status, (exit_status{7, 0, false}));
    EXPECT_EQ(e->status.value().shell_code(), 7);

    auto q = spawn_ok(burner(0, 0, 0, 10'000));
    ASSERT_TRUE(q.valid());
    auto none = q.wait_for(20ms);
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
    EXPECT_EQ(q.handle().exit_status().value(), std::nullopt);  // still running
    ASSERT_EQ(::kill(q.id(), SIGKILL), 0);
    auto k = q.wait();
    ASSERT_TRUE(k);
    EXPECT_EQ(k->status.value().signal, SIGKILL);
    EXPECT_TRUE(k->status.value().signaled());
    EXPECT_EQ(k->status.value().shell_code(), 128 + SIGKILL);
    EXPECT_TRUE(k->times.exit);
    EXPECT_EQ(q.handle().exit_status().value(), std::optional<exit_status>(k->status));
}

TEST(Child, TimesNeverDecreaseWhileItRunsAndExits) {
    auto c = spawn_ok(burner(120, 0, 30));
    ASSERT_TRUE(c.valid());
    nanoseconds k{0}, u{0};
    bool saw_running = false, saw_exited = false;
    while (!saw_exited) {
        auto t = c.handle().times();
        ASSERT_TRUE(t) << t.error().message();
        ASSERT_GE(t->kernel, k);
        ASSERT_GE(t->user, u);
        k = t->kernel;
        u = t->user;
        (t->state == task_state::running ? saw_running : saw_exited) = true;
        std::this_thread::sleep_for(2ms);
    }
    EXPECT_TRUE(saw_running);
    auto e = c.wait();
    ASSERT_TRUE(e);
    // The end becomes visible (pidfd readable, zombie) a few instructions
    // before the task's last switch-out: a read made then can miss the tail
    // of its exit path (0.15 ms was seen with the other core busy). The
    // wait's values are the final ones: never lower, and only that tail more.
    EXPECT_GE(e->times.cpu(), k + u);
    EXPECT_LE(e->times.cpu() - (k + u), 10ms);
    auto after = c.handle().times();
    ASSERT_TRUE(after);
    EXPECT_EQ(after->cpu(), e->times.cpu());  // the handle now answers the final values
}

TEST(Child, WaitTimesOutWhileRunning) {
    auto c = spawn_ok(burner(0, 0, 0, 300));
    ASSERT_TRUE(c.valid());
    const auto t0 = steady_clock::now();
    auto r = c.wait_for(50ms);
    ASSERT_TRUE(r);
    EXPECT_FALSE(*r);
    EXPECT_GE(steady_clock::now() - t0, 50ms);
    EXPECT_FALSE(c.handle().times().value().exit);
    EXPECT_TRUE(c.wait());
}

TEST(Child, ProgramNotFoundOrNotExecutable) {
    auto a = child::spawn({.argv = {"proctimes-no-such-program-4711"}});
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error(), std::errc::no_such_file_or_directory);
    auto b = child::spawn({.argv = {"/nonexistent/dir/prog"}});
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error(), std::errc::no_such_file_or_directory);
    char path[] = "/tmp/proctimes-noexec-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    auto c = child::spawn({.argv = {path}});
    ::unlink(path);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error(), std::errc::permission_denied);
    EXPECT_EQ(child::spawn({}).error(), std::errc::invalid_argument);
}

TEST(Child, ProgramOtherThanArgv0IsNotSearched) {
    // `program` names the file; argv[0] is only what the child sees.
    auto c = spawn_ok({.argv = {"not-a-program", "-c", "test \"$0\" = not-a-program && exit 4"}, .program = "/bin/sh"});
    ASSERT_TRUE(c.valid());
    EXPECT_EQ(c.wait().value().status.value().code, 4);
    auto bare = child::spawn({.argv = {"sh"}, .program = "sh"});  // not looked up in PATH
    ASSERT_FALSE(bare);
    EXPECT_EQ(bare.error(), std::errc::no_such_file_or_directory);
}

TEST(Child, WorkingDirectoryEnvironmentAndArguments) {
    char dir[] = "/tmp/proctimes-spawn-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    spawn_options o;
    o.argv = {"sh", "-c", "pwd > out; printf '%s|%s|%s' \"$FOO\" \"$1\" \"$HOME\" >> out", "sh", "a b"};
    o.environment = std::vector<std::string>{"FOO=bar baz", "PATH=/usr/bin:/bin"};
    o.working_directory = dir;
    auto c = spawn_ok(o);
    ASSERT_TRUE(c.valid());
    EXPECT_EQ(c.wait().value().status.value().code, 0);
    std::ifstream in(std::string(dir) + "/out");
    std::string line1, line2;
    std::getline(in, line1);
    std::getline(in, line2);
    char real[4096];
    ASSERT_NE(::realpath(dir, real), nullptr);
    EXPECT_EQ(line1, real);
    EXPECT_EQ(line2, "bar baz|a b|");  // HOME not inherited: the environment was replaced
    ::unlink((std::string(dir) + "/out").c_str());
    ::rmdir(dir);
}

TEST(Child, RelativeProgramIsResolvedAgainstTheCallersDirectory) {
    // "./true" with a different child working directory still means the caller's ./true.
    char dir[] = "/tmp/proctimes-rel-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    char cwd[4096];
    ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
    ASSERT_EQ(::chdir("/bin"), 0);
    auto r = child::spawn({.argv = {"./true"}, .working_directory = dir});
    ASSERT_EQ(::chdir(cwd), 0);
    ::rmdir(dir);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->wait().value().status.value().code, 0);
}

TEST(Child, SignalsAreInheritedAsExecKeepsThemOrReset) {
    // Ignore SIGTERM and block SIGUSR1 here.
    struct sigaction ign {
    }, old{};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGTERM, &ign, &old);
    sigset_t usr1, oldmask;
    ::sigemptyset(&usr1);
    ::sigaddset(&usr1, SIGUSR1);
    ::pthread_sigmask(SIG_BLOCK, &usr1, &oldmask);
    auto inherit = spawn_ok(burner(0, 0, 0, 10'000));
    auto fresh = child::spawn([] {
        auto o = burner(0, 0, 0, 10'000);
        o.default_signals = true;
        return o;
    }());
    ::pthread_sigmask(SIG_SETMASK, &oldmask, nullptr);
    ::sigaction(SIGTERM, &old, nullptr);
    ASSERT_TRUE(inherit.valid());
    ASSERT_TRUE(fresh) << fresh.error().message();
    const std::uint64_t term = 1ULL << (SIGTERM - 1), user1 = 1ULL << (SIGUSR1 - 1);
    // Default: what exec keeps.
    EXPECT_NE(status_bits(inherit.id(), "SigIgn:") & term, 0u);
    EXPECT_NE(status_bits(inherit.id(), "SigBlk:") & user1, 0u);
    // default_signals: nothing ignored, nothing blocked (standard signals 1..31).
    EXPECT_EQ(status_bits(fresh->id(), "SigIgn:") & 0x7FFF'FFFFULL, 0u);
    EXPECT_EQ(status_bits(fresh->id(), "SigBlk:"), 0u);
    ::kill(fresh->id(), SIGTERM);
    EXPECT_EQ(fresh->wait().value().status.value().signal, SIGTERM);
    ::kill(inherit.id(), SIGKILL);
    EXPECT_EQ(inherit.wait().value().status.value().signal, SIGKILL);
}

TEST(Child, NewProcessGroup) {
    auto own = child::spawn([] {
        auto o = burner(0, 0, 0, 10'000);
        o.new_process_group = true;
        return o;
    }());
    auto same = spawn_ok(burner(0, 0, 0, 10'000));
    ASSERT_TRUE(own) << own.error().message();
    EXPECT_EQ(::getpgid(own->id()), own->id());
    EXPECT_EQ(::getpgid(same.id()), ::getpgrp());
    ::kill(own->id(), SIGKILL);
    ::kill(same.id(), SIGKILL);
    EXPECT_TRUE(own->wait());
    EXPECT_TRUE(same.wait());
}

TEST(Child, ReapedEvenWhenNobodyWaits) {
    pid_t pid;
    {
        auto c = spawn_ok(burner(0, 3));
        ASSERT_TRUE(c.valid());
        pid = c.id();
    }
    const auto deadline = steady_clock::now() + 10s;
    while (ours(pid) && steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    EXPECT_FALSE(ours(pid));
    EXPECT_FALSE(has_zombie_child());
}

// A thousand in the main build; 250 under a sanitizer (scripts/sanitize.sh),
// where a thousand took 97 s of CPU the builds running beside need.
TEST(Child, AThousandSpawnsLeaveNoZombiesAndNoDescriptors) {
    {  // warm up: the exit monitor's thread and epoll descriptor are created once
        auto c = spawn_ok(burner(0));
        ASSERT_TRUE(c.wait());
    }
    const int n = std::getenv("PROCTIMES_SANITIZER") ? 250 : 1000;
    // The warm-up child's descriptors are released when the monitor is done
    // with its end, which may be after wait() returned (CI once counted 11
    // here and 8 at the end).
    const int before = testing_helpers::settled_fd_count();
    std::vector<pid_t> pids;
    pids.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        auto c = spawn_ok(burner(0, i % 7));
        ASSERT_TRUE(c.valid());
        pids.push_back(c.id());
        if (i % 2 == 0) {  // half waited for, half dropped while they run
            auto e = c.wait();
            ASSERT_TRUE(e);
            ASSERT_EQ(e->status.value().code, i % 7);
        }
    }
    auto bad = child::spawn({.argv = {"/nonexistent"}});
    EXPECT_FALSE(bad);
    // Dropped children are reaped by the exit monitor when they exit, which
    // then releases their descriptors. The wait ends as soon as all are; the
    // bound is for a ThreadSanitizer build on a loaded 2-core machine, where
    // 30 s was once not enough.
    const auto deadline = steady_clock::now() + 120s;
    auto settled = [&] {
        if (testing_helpers::open_fd_count() != before || has_zombie_child()) return false;
        for (pid_t pid : pids)
            if (ours(pid)) return false;
        return true;
    };
    while (!settled() && steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
    EXPECT_EQ(testing_helpers::open_fd_count(), before);
    EXPECT_FALSE(has_zombie_child());
    int left = 0;
    for (pid_t pid : pids) left += ours(pid) ? 1 : 0;
    EXPECT_EQ(left, 0);
}

// ---- process::exit_status() for processes proctimes did not start -------------

TEST(ExitStatus, ReadFromTheZombieOfANonChildAndKeptAfterTheReaping) {
    testing_helpers::forked ch([] { return 3; });
    auto h = process::open(ch.pid());
    ASSERT_TRUE(h) << h.error().message();
    EXPECT_EQ(h->exit_status().value(), std::nullopt);  // running
    ch.start();
    ch.wait_exited_unreaped();
    EXPECT_EQ(h->exit_status().value(), std::optional<exit_status>({3, 0, false}));
    const int raw = ch.reap();
    EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 3);
    EXPECT_EQ(h->exit_status().value(), std::optional<exit_status>({3, 0, false}));
}

TEST(ExitStatus, SignalDeathOfANonChild) {
    testing_helpers::forked ch([] {
        ::raise(SIGKILL);
        return 0;
    });
    auto h = process::open(ch.pid());
    ASSERT_TRUE(h);
    ch.start();
    ASSERT_TRUE(wait_for_exit(*h).value());
    ch.wait_exited_unreaped();
    auto t = h->times();  // the zombie, read by this query or already by the exit monitor
    ASSERT_TRUE(t);
    EXPECT_EQ(t->state, task_state::exited);
    ch.reap();
    EXPECT_EQ(h->exit_status().value(), std::optional<exit_status>({0, SIGKILL, false}));
}

TEST(ExitStatus, UnknownWhenReapedBeforeAnyoneCouldReadIt) {
    set_exit_monitor_enabled(false);  // nothing watches handles opened now
    testing_helpers::forked ch([] { return 9; });
    auto h = process::open(ch.pid());
    set_exit_monitor_enabled(true);
    ASSERT_TRUE(h);
    ch.start();
    ch.reap();
    auto s = h->exit_status();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), errc::not_supported);
}

TEST(ExitStatus, MainThreadEndingFirstIsNotTheProcessEnding) {
    // The main thread calls pthread_exit; another thread runs on, then exits
    // the process with 6. Meanwhile the main thread is a zombie in /proc.
    int go[2];
    ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
    testing_helpers::forked ch([r = go[0], w = go[1]] {
        ::close(w);  // the test's end: closing it there ends the wait below
        std::thread([r] {
            char c;
            (void)!::read(r, &c, 1);  // until the test closes its end
            ::_exit(6);
        }).detach();
        // Only the calling thread ends, without unwinding (pthread_exit would
        // unwind through the test framework's frames).
        ::syscall(SYS_exit, 0);
        return 0;
    });
    ::close(go[0]);
    auto h = process::open(ch.pid());
    ASSERT_TRUE(h);
    ch.start();
    // Until the main thread is a zombie ('Z' in its own stat) under the live process.
    const std::string main_stat = "/proc/" + std::to_string(ch.pid()) + "/task/" + std::to_string(ch.pid()) + "/stat";
    const auto main_state = [&main_stat] {
        std::ifstream f(main_stat);
        std::string line;
        std::getline(f, line);
        const auto close = line.rfind(')');
        return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
    };
    for (const auto deadline = steady_clock::now() + 20s; main_state() != 'Z' && steady_clock::now() < deadline;)
        std::this_thread::sleep_for(1ms);
    ASSERT_EQ(main_state(), 'Z');
    auto t = h->times();
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->state, task_state::running);
    EXPECT_FALSE(t->exit);
    EXPECT_EQ(h->exit_status().value(), std::nullopt);  // still running
    ::close(go[1]);
    ASSERT_TRUE(wait_for_exit(*h).value());
    ch.wait_exited_unreaped();
    // The main thread's field 52 says 0; the process ended with 6: not trusted.
    auto s = h->exit_status();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), errc::not_supported);
    const int raw = ch.reap();
    EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 6);
}

// ---- what happens after a successful exec -------------------------------------

namespace {
// Checks in a forked child that a command whose handle could not be opened is
// still started, waited for and reported on: exit status 3, the wait's values.
std::string check_reported_without_handle(std::optional<std::errc> expected_why) {
    const auto before = system_clock::now();
    auto c = child::spawn({.argv = {"sh", "-c", "exit 3"}});
    if (!c) return "spawn failed for a command that ran: " + c.error().message();
    if (!c->handle_error()) return "the handle opened: the limit left room for it";
    if (c->handle().valid()) return "a handle together with a handle error";
    if (expected_why && c->handle_error() != *expected_why)
        return "handle error " + c->handle_error().message() + ", expected " +
               std::make_error_code(*expected_why).message();
    auto e = c->wait();
    const auto after = system_clock::now();
    if (!e) return "wait failed: " + e.error().message();
    if (!e->status || e->status->code != 3) return "exit status not 3";
    if (e->times_error != c->handle_error()) return "times_error does not say why";
    const auto& t = e->times;
    if (t.precision.source != cpu_source::wait_rusage) return "source not wait_rusage";
    if (t.state != task_state::exited || !t.exit) return "no exit instant";
    // The creation bracket lies between the clock reads around spawn, the
    // exit instant between it and the end of the wait.
    if (t.creation < before || t.creation + t.precision.creation_resolution > after) return "creation outside spawn";
    if (*t.exit < t.creation || *t.exit > after) return "exit instant outside the bracket";
    if (e->max_rss_kib <= 0) return "no rusage";
    if (c->wait().value().status != e->status) return "a second wait differs";
    return "";
}
}  // namespace

TEST(Child, CommandIsReportedWhenDescriptorsRunOutAfterTheExec) {
    if (test_in_child::descriptor_exhaustion_skip_reason)
        GTEST_SKIP() << test_in_child::descriptor_exhaustion_skip_reason;
    // The error pipe and the pidfd fit; the handle's descriptors do not.
    const auto r = test_in_child::run([] {
        if (!test_in_child::leave_free_descriptors(3)) return std::string("descriptors not contiguous");
        return check_reported_without_handle(std::errc::too_many_files_open);
    });
    EXPECT_TRUE(r.ok()) << r.why();
}

TEST(Child, CommandIsReportedWithoutProc) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for a private mount namespace without /proc";
    const auto r = test_in_child::run([] {
        if (::unshare(CLONE_NEWNS) != 0) return std::string("skip: unshare: ") + std::strerror(errno);
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 || ::umount2("/proc", MNT_DETACH) != 0)
            return std::string("skip: cannot hide /proc: ") + std::strerror(errno);
        return check_reported_without_handle(std::nullopt);
    });
    if (r.text.rfind("skip: ", 0) == 0) GTEST_SKIP() << r.text;
    EXPECT_TRUE(r.ok()) << r.why();
}

TEST(Child, ExitStatusIsUnknownWhenSigchldIsIgnored) {
    // The kernel reaps the children of a process that ignores SIGCHLD: the
    // status is lost, and must not come back as 0.
    const auto r = test_in_child::run([] {
        std::signal(SIGCHLD, SIG_IGN);
        auto c = child::spawn({.argv = {"sh", "-c", "exit 4"}});
        if (!c) return "spawn: " + c.error().message();
        auto e = c->wait();
        // What was recorded, with the status unknown (or 4, when the exit
        // monitor read it from the dying task before the kernel released it);
        // or no_such_process when nothing recorded its end. Never a made-up 0.
        if (e && e->status && e->status->shell_code() != 4)
            return "a made-up status: " + std::to_string(e->status->shell_code());
        if (!e && e.error() != std::errc::no_such_process) return "wait: " + e.error().message();
        // The handle agrees: unknown — or 4, if the exit monitor read it from
        // the dying task before the kernel released it (a real observation).
        // (No handle when the kernel released it before the handle opened.)
        if (c->handle().valid()) {
            auto st = c->handle().exit_status();
            if (st && !(*st && (*st)->code == 4 && !(*st)->signaled()))
                return "exit_status() made up: " + (*st ? std::to_string((*st)->shell_code()) : std::string("running"));
            if (!st && st.error() != make_error_code(errc::not_supported))
                return "exit_status(): " + st.error().message();
        }
        std::signal(SIGCHLD, SIG_DFL);  // with the default back, the same command's status is known again
        auto d = child::spawn({.argv = {"sh", "-c", "exit 4"}});
        if (!d) return "spawn: " + d.error().message();
        auto f = d->wait();
        if (!f || !f->status || f->status->code != 4) return std::string("status not 4 with SIGCHLD at default");
        return std::string();
    });
    EXPECT_TRUE(r.ok()) << r.why();
}

TEST(Child, ExecutableWithoutInterpreterLineRunsWithSh) {
    char path[] = "/tmp/proctimes-script-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    const std::string body = "test \"$1\" = arg && test \"$0\" = \"" + std::string(path) + "\" && exit 7\nexit 1\n";
    ASSERT_EQ(::write(fd, body.data(), body.size()), static_cast<ssize_t>(body.size()));
    ::fchmod(fd, 0755);
    ::close(fd);
    auto c = child::spawn({.argv = {path, "arg"}});
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->wait().value().status.value().code, 7);  // $0 is the script, $1 its argument
    auto refused = child::spawn({.argv = {path, "arg"}, .run_scripts_with_sh = false});
    ::unlink(path);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error(), std::errc::executable_format_error);
}

TEST(Child, OpenFilesSoftLimitIsSetForTheCommand) {
    rlimit rl{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max < 100) GTEST_SKIP() << "hard limit below 100";
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    auto c = child::spawn({.argv = {"sh", "-c", "ulimit -Sn"}, .stdout_fd = p[1], .open_files_soft_limit = 100});
    ::close(p[1]);
    ASSERT_TRUE(c) << c.error().message();
    std::string text;
    char buf[64];
    ssize_t n;
    while ((n = ::read(p[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    ::close(p[0]);
    EXPECT_EQ(c->wait().value().status.value().code, 0);
    EXPECT_EQ(text, "100\n");
    rlimit now{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
    EXPECT_EQ(now.rlim_cur, rl.rlim_cur);  // this process's own limit is untouched
}
