// The minimal spawner: children start, their exit is stamped and their final
// times kept after they are reaped; nothing leaks.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/spawn_min.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;
using detail::spawn_options;
using detail::spawned_process;

namespace {
spawn_options burner(int user_ms, int status = 0, int kernel_ms = 0, int sleep_ms = 0) {
    spawn_options o;
    o.program = PROCTIMES_CPU_BURNER;
    o.argv = {PROCTIMES_CPU_BURNER, std::to_string(user_ms), std::to_string(status), std::to_string(kernel_ms),
              std::to_string(sleep_ms)};
    return o;
}

std::shared_ptr<spawned_process> spawn_ok(const spawn_options& o) {
    auto r = spawned_process::spawn(o);
    EXPECT_TRUE(r) << r.error().message();
    return r ? *r : nullptr;
}

bool exists(pid_t pid) { return ::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0; }
}  // namespace

TEST(Spawn, TrueExitsZeroAndIsReaped) {
    auto p = spawn_ok(spawn_options{"true", true, {}, std::nullopt, "", false});
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->wait_for(-1ns));
    auto e = p->exit_info();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->how, CLD_EXITED);
    EXPECT_EQ(e->status, 0);
    EXPECT_TRUE(e->final_times);
    EXPECT_FALSE(exists(p->id()));  // reaped by the watcher, not a zombie
}

TEST(Spawn, FinalTimesCoverTheChildsCpuAndExitIsBracketed) {
    const auto before = system_clock::now();
    auto p = spawn_ok(burner(150, 0, 40));
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->wait_for(-1ns));
    const auto after = system_clock::now();
    auto t = p->times();
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_TRUE(t->exit);
    EXPECT_EQ(t->precision.source, cpu_source::wait_rusage);
    EXPECT_GE(t->user, 120ms);           // the busy loop, in user mode (split sampled in 10 ms ticks)
    EXPECT_GE(t->cpu(), 190ms);          // 150 + 40 ms measured by the child's own clock
    EXPECT_GE(t->kernel, 10ms);          // at least some of the /dev/zero reads
    EXPECT_GE(t->creation, before - 11ms);
    EXPECT_LE(*t->exit, after);
    EXPECT_GE(*t->exit, t->creation + 180ms);  // it ran ≥ 190 ms of CPU on one thread
    EXPECT_LE(t->cpu(), *t->exit - t->creation + 1ms);
    // Stable once exited.
    EXPECT_EQ(p->times().value(), *t);
}

TEST(Spawn, TimesNeverDecreaseAcrossTheExit) {
    auto p = spawn_ok(burner(120, 0, 30));
    ASSERT_TRUE(p);
    nanoseconds k{0}, u{0};
    bool saw_running = false, saw_exited = false;
    while (!saw_exited) {
        auto t = p->times();
        ASSERT_TRUE(t) << t.error().message();
        ASSERT_GE(t->kernel, k);
        ASSERT_GE(t->user, u);
        k = t->kernel;
        u = t->user;
        (t->exit ? saw_exited : saw_running) = true;
        std::this_thread::sleep_for(2ms);
    }
    EXPECT_TRUE(saw_running);
}

TEST(Spawn, ExitStatusAndSignal) {
    auto p = spawn_ok(burner(0, 7));
    ASSERT_TRUE(p && p->wait_for(-1ns));
    EXPECT_EQ(p->exit_info()->how, CLD_EXITED);
    EXPECT_EQ(p->exit_info()->status, 7);

    auto q = spawn_ok(burner(0, 0, 0, 10'000));
    ASSERT_TRUE(q);
    EXPECT_FALSE(q->wait_for(20ms));
    EXPECT_FALSE(q->exit_info());
    ASSERT_EQ(::kill(q->id(), SIGKILL), 0);
    ASSERT_TRUE(q->wait_for(10s));
    EXPECT_EQ(q->exit_info()->how, CLD_KILLED);
    EXPECT_EQ(q->exit_info()->status, SIGKILL);
    EXPECT_TRUE(q->times().value().exit);
}

TEST(Spawn, WaitTimesOutWhileRunning) {
    auto p = spawn_ok(burner(0, 0, 0, 300));
    ASSERT_TRUE(p);
    const auto t0 = steady_clock::now();
    EXPECT_FALSE(p->wait_for(50ms));
    EXPECT_GE(steady_clock::now() - t0, 50ms);
    EXPECT_FALSE(p->times().value().exit);
    EXPECT_TRUE(p->wait_for(30s));
}

TEST(Spawn, ProgramNotFoundOrNotExecutable) {
    auto a = spawned_process::spawn(spawn_options{"proctimes-no-such-program-4711", true, {}, std::nullopt, "", false});
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error(), std::errc::no_such_file_or_directory);
    auto b = spawned_process::spawn(spawn_options{"/nonexistent/dir/prog", true, {}, std::nullopt, "", false});
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error(), std::errc::no_such_file_or_directory);
    // A file without the execute bit.
    char path[] = "/tmp/proctimes-noexec-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    auto c = spawned_process::spawn(spawn_options{path, true, {}, std::nullopt, "", false});
    ::unlink(path);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error(), std::errc::permission_denied);
}

TEST(Spawn, WorkingDirectoryEnvironmentAndArguments) {
    char dir[] = "/tmp/proctimes-spawn-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    spawn_options o;
    o.program = "sh";
    o.argv = {"sh", "-c", "pwd > out; printf '%s|%s|%s' \"$FOO\" \"$1\" \"$HOME\" >> out", "sh", "a b"};
    o.environment = std::vector<std::string>{"FOO=bar baz", "PATH=/usr/bin:/bin"};
    o.working_directory = dir;
    auto p = spawn_ok(o);
    ASSERT_TRUE(p && p->wait_for(-1ns));
    EXPECT_EQ(p->exit_info()->status, 0);
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

TEST(Spawn, RelativeProgramIsResolvedAgainstTheCallersDirectory) {
    // "./x" with a different child working directory still means the caller's ./x.
    char dir[] = "/tmp/proctimes-rel-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    char cwd[4096];
    ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
    ASSERT_EQ(::chdir("/bin"), 0);
    spawn_options o;
    o.program = "./true";
    o.working_directory = dir;
    auto r = spawned_process::spawn(o);
    ASSERT_EQ(::chdir(cwd), 0);
    ::rmdir(dir);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE((*r)->wait_for(-1ns));
    EXPECT_EQ((*r)->exit_info()->status, 0);
}

TEST(Spawn, ChildStartsWithDefaultSignalsAndEmptyMask) {
    // Ignore SIGTERM and block SIGUSR1 here; the child must not inherit either.
    struct sigaction ign {}, old {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGTERM, &ign, &old);
    sigset_t usr1, oldmask;
    ::sigemptyset(&usr1);
    ::sigaddset(&usr1, SIGUSR1);
    ::pthread_sigmask(SIG_BLOCK, &usr1, &oldmask);
    auto p = spawn_ok(burner(0, 0, 0, 10'000));
    ::pthread_sigmask(SIG_SETMASK, &oldmask, nullptr);
    ::sigaction(SIGTERM, &old, nullptr);
    ASSERT_TRUE(p);
    std::ifstream status("/proc/" + std::to_string(p->id()) + "/status");
    std::string line, sigign, sigblk;
    while (std::getline(status, line)) {
        if (line.rfind("SigIgn:", 0) == 0) sigign = line;
        if (line.rfind("SigBlk:", 0) == 0) sigblk = line;
    }
    // Standard signals 1..31 only: glibc's posix_spawn leaves its two internal
    // real-time signals (32, 33) ignored in every child.
    auto bits = [](const std::string& l) { return std::stoull(l.substr(l.find('\t') + 1), nullptr, 16) & 0x7FFF'FFFFULL; };
    ASSERT_FALSE(sigblk.empty());
    ASSERT_FALSE(sigign.empty());
    EXPECT_EQ(bits(sigblk), 0u) << sigblk;
    EXPECT_EQ(bits(sigign), 0u) << sigign;
    ::kill(p->id(), SIGTERM);
    ASSERT_TRUE(p->wait_for(10s));
    EXPECT_EQ(p->exit_info()->how, CLD_KILLED);
}

TEST(Spawn, MainThreadTimesSurviveTheExit) {
    auto p = spawn_ok(burner(80));
    ASSERT_TRUE(p && p->wait_for(-1ns));
    auto t = p->main_thread_times();
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_TRUE(t->exit);
    EXPECT_EQ(*t->exit, *p->times().value().exit);
    EXPECT_GE(t->cpu(), 75ms);
    EXPECT_GE(t->creation, p->creation());
    // A single-threaded child: the main thread has (about) all of the process's CPU.
    EXPECT_NEAR(duration<double>(t->cpu()).count(), duration<double>(p->times().value().cpu()).count(), 0.005);
}

TEST(Spawn, ReapedEvenWhenNobodyHoldsIt) {
    pid_t pid;
    {
        auto p = spawn_ok(burner(0, 3));
        ASSERT_TRUE(p);
        pid = p->id();
    }
    const auto deadline = steady_clock::now() + 10s;
    while (exists(pid) && steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    EXPECT_FALSE(exists(pid));
}

TEST(Spawn, FindReturnsTheLiveObject) {
    auto p = spawn_ok(burner(0, 0, 0, 100));
    ASSERT_TRUE(p);
    EXPECT_EQ(spawned_process::find(p->id()), p);
    const pid_t pid = p->id();
    ASSERT_TRUE(p->wait_for(-1ns));
    EXPECT_EQ(spawned_process::find(pid), p);  // exited, still referenced
    p.reset();
    // The watcher may still hold its reference for a moment after reaping.
    const auto deadline = steady_clock::now() + 5s;
    while (spawned_process::find(pid) && steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(spawned_process::find(pid), nullptr);
    EXPECT_EQ(spawned_process::find(::getpid()), nullptr);
}

TEST(Spawn, NoDescriptorsLeak) {
    {  // warm up: the watcher's epoll descriptor is created once
        auto p = spawn_ok(burner(0));
        ASSERT_TRUE(p && p->wait_for(-1ns));
    }
    const int before = testing_helpers::open_fd_count();
    for (int i = 0; i < 20; ++i) {
        auto p = spawn_ok(burner(0));
        ASSERT_TRUE(p && p->wait_for(-1ns));
        ASSERT_TRUE(p->times());
    }
    auto bad = spawned_process::spawn(spawn_options{"/nonexistent", true, {}, std::nullopt, "", false});
    EXPECT_FALSE(bad);
    // The watcher closes each child's descriptors before wait_for() returns.
    EXPECT_EQ(testing_helpers::open_fd_count(), before);
}
