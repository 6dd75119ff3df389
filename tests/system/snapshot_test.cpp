// SPDX-License-Identifier: MIT
// Snapshots of the live system: real processes and threads started by the
// test, CPU burned between two snapshots, pid reuse, owners, zombies,
// processes that vanish mid-walk, hidepid.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;
using testing_helpers::burn_thread_cpu;
using testing_helpers::open_fd_count;

namespace {

// A forked child with `n` extra threads (named "snapw-<i>") that block until
// the object is destroyed. The parent learns every tid through a pipe.
class threaded_child {
public:
    explicit threaded_child(int n) {
        int report[2], hold[2];
        if (::pipe2(report, O_CLOEXEC) != 0 || ::pipe2(hold, O_CLOEXEC) != 0) std::abort();
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(report[0]);
            ::close(hold[1]);
            ::prctl(PR_SET_NAME, "snap child");
            std::vector<std::thread> ts;
            ts.reserve(static_cast<std::size_t>(n));
            for (int i = 0; i < n; ++i) {
                ts.emplace_back([i, w = report[1], r = hold[0]] {
                    char name[16];
                    std::snprintf(name, sizeof name, "snapw-%d", i);
                    ::pthread_setname_np(::pthread_self(), name);
                    const pid_t tid = static_cast<pid_t>(::gettid());
                    if (::write(w, &tid, sizeof tid) != sizeof tid) ::_exit(3);
                    char c;
                    while (::read(r, &c, 1) > 0) {
                    }
                });
            }
            char c;
            while (::read(hold[0], &c, 1) > 0) {
            }
            ::_exit(0);  // ends every thread
        }
        ::close(report[1]);
        ::close(hold[0]);
        hold_ = hold[1];
        for (int i = 0; i < n; ++i) {
            pid_t tid = 0;
            if (::read(report[0], &tid, sizeof tid) != sizeof tid) break;
            tids_.insert(tid);
        }
        ::close(report[0]);
        // A thread can still be between writing its tid and blocking in
        // read(), and the main thread still returning from the last creation:
        // tests that copy idle threads need a child that no longer runs.
        if (!testing_helpers::wait_until_idle(pid_)) ADD_FAILURE() << "child " << pid_ << " never became idle";
    }
    threaded_child(const threaded_child&) = delete;
    threaded_child& operator=(const threaded_child&) = delete;
    ~threaded_child() {
        ::close(hold_);
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    pid_t pid() const { return pid_; }
    const std::set<pid_t>& tids() const { return tids_; }
    /// Wakes one of the extra threads for a moment (it reads one byte).
    void wake_one() {
        if (::write(hold_, "x", 1) != 1) std::abort();
    }

private:
    pid_t pid_ = -1;
    int hold_ = -1;
    std::set<pid_t> tids_;
};

// The threads /proc/<pid>/task lists, read independently of the library. (A
// sanitizer runtime may add a thread of its own to every process.)
std::set<pid_t> listed_tids(pid_t pid) {
    std::set<pid_t> out;
    const std::string path = "/proc/" + std::to_string(pid) + "/task";
    if (DIR* d = ::opendir(path.c_str())) {
        while (dirent* e = ::readdir(d))
            if (e->d_name[0] >= '1' && e->d_name[0] <= '9') out.insert(std::atoi(e->d_name));
        ::closedir(d);
    }
    return out;
}

std::set<pid_t> thread_ids(const snapshot& s, pid_t pid) {
    std::set<pid_t> out;
    if (const auto* p = s.find(pid))
        for (const auto& t : s.threads_of(*p)) out.insert(t.tid());
    return out;
}

snapshot take(bool threads, unsigned workers = 0, snapshot_cpu cpu = snapshot_cpu::precise_processes) {
    snapshot_options o;
    o.threads = threads;
    o.workers = workers;
    o.cpu = cpu;
    auto s = take_snapshot(o);
    EXPECT_TRUE(s) << s.error().message();
    return s ? std::move(*s) : snapshot{};
}

task_identity without_inode(task_identity id) {
    id.serial = 0;
    return id;
}

}  // namespace

TEST(SnapshotLive, ChildWithFiftyThreadsAppearsWithAllOfThem) {
    threaded_child c(50);
    ASSERT_EQ(c.tids().size(), 50u);
    for (unsigned workers : {1u, 2u}) {
        const auto s = take(true, workers);
        const auto* p = s.find(c.pid());
        ASSERT_NE(p, nullptr) << "workers " << workers;
        const auto listed = listed_tids(c.pid());
        EXPECT_GE(listed.size(), 51u);
        EXPECT_EQ(p->thread_count, static_cast<int>(listed.size()));
        EXPECT_EQ(p->name, "snap child");
        auto got = thread_ids(s, c.pid());
        EXPECT_EQ(got, listed);
        EXPECT_TRUE(got.count(c.pid())) << "the main thread";
        for (pid_t tid : c.tids()) EXPECT_TRUE(got.count(tid)) << tid;
        int named = 0;
        for (const auto& t : s.threads_of(*p)) {
            EXPECT_EQ(t.pid, c.pid());
            EXPECT_GE(t.times.creation, p->times.creation);
            EXPECT_LE(t.times.creation, s.taken + 10ms);
            if (t.name.view().substr(0, 6) == "snapw-") ++named;
        }
        EXPECT_EQ(named, 50);
    }
}

TEST(SnapshotLive, BigProcessIsSharedBetweenWorkers) {
    // More threads than one worker keeps for itself: phase 2 reads them.
    threaded_child c(300);
    ASSERT_EQ(c.tids().size(), 300u);
    const auto one = take(true, 1);
    const auto two = take(true, 2);
    const auto listed = listed_tids(c.pid());
    EXPECT_GE(listed.size(), 301u);
    EXPECT_EQ(thread_ids(one, c.pid()), listed);
    EXPECT_EQ(thread_ids(two, c.pid()), listed);
    EXPECT_EQ(two.workers, 2u);
    // Both are complete, ordered snapshots.
    for (const auto* s : {&one, &two}) {
        std::size_t next = 0;
        for (const auto& p : s->processes) {
            EXPECT_EQ(p.first_thread, next);
            next += p.thread_entries;
            const auto th = s->threads_of(p);
            EXPECT_TRUE(std::is_sorted(th.begin(), th.end(), [](auto& a, auto& b) { return a.tid() < b.tid(); }));
        }
        EXPECT_EQ(next, s->threads.size());
        EXPECT_TRUE(std::is_sorted(s->processes.begin(), s->processes.end(),
                                   [](auto& a, auto& b) { return a.pid() < b.pid(); }));
    }
}

TEST(SnapshotLive, OwnProcessMatchesItsHandle) {
    auto self = process::open_self().value();
    const auto before = self.times().value();
    const auto s = take(false);
    const auto after = self.times().value();
    const auto* p = s.find(::getpid());
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->identity, without_inode(self.identity()));
    EXPECT_EQ(p->times.creation, self.creation()) << "bit-identical with handles";
    EXPECT_EQ(p->parent_pid, ::getppid());
    EXPECT_EQ(p->uid, ::geteuid());
    EXPECT_EQ(p->state, 'R');
    EXPECT_FALSE(p->kernel_thread);
    EXPECT_EQ(p->name, self.name().value());
    EXPECT_EQ(p->times.precision.source, cpu_source::cpu_clock_and_stat);
    EXPECT_EQ(p->times.precision.total_resolution, 1ns);
    EXPECT_GE(p->times.cpu(), before.cpu());
    EXPECT_LE(p->times.cpu(), after.cpu());
    EXPECT_LE(p->times.creation, s.taken);
}

TEST(SnapshotLive, KernelThreadsAreMarked) {
    const auto s = take(false);
    const auto* kthreadd = s.find(2);
    if (!kthreadd || kthreadd->name != "kthreadd") GTEST_SKIP() << "kthreadd not visible (pid namespace)";
    EXPECT_TRUE(kthreadd->kernel_thread);
    EXPECT_EQ(kthreadd->uid, 0u);
    int children = 0;
    for (const auto& p : s.processes)
        if (p.parent_pid == 2) {
            EXPECT_TRUE(p.kernel_thread) << p.pid() << " " << p.name.view();
            ++children;
        }
    EXPECT_GT(children, 0);
    EXPECT_FALSE(s.find(::getpid())->kernel_thread);
}

TEST(SnapshotLive, DeltaSeesTheCpuBurnedInTheInterval) {
    constexpr auto burn = 300ms;
    for (auto cpu : {snapshot_cpu::precise_processes, snapshot_cpu::ticks}) {
        int go[2], done[2];
        ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
        ASSERT_EQ(::pipe2(done, O_CLOEXEC), 0);
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(go[1]);
            ::close(done[0]);
            char c;
            if (::read(go[0], &c, 1) != 1) ::_exit(1);
            burn_thread_cpu(burn);
            if (::write(done[1], &c, 1) != 1) ::_exit(2);
            while (::read(go[0], &c, 1) > 0) {
            }
            ::_exit(0);
        }
        ::close(go[0]);
        ::close(done[1]);
        const auto a = take(false, 0, cpu);
        char c = 'g';
        ASSERT_EQ(::write(go[1], &c, 1), 1);
        ASSERT_EQ(::read(done[0], &c, 1), 1);
        const auto b = take(false, 0, cpu);
        ::close(go[1]);
        ::close(done[0]);
        ::waitpid(pid, nullptr, 0);

        auto d = compute_delta(a, b);
        ASSERT_TRUE(d);
        const auto* p = b.find(pid);
        ASSERT_NE(p, nullptr);
        const auto& e = d->processes[static_cast<std::size_t>(p - b.processes.data())];
        EXPECT_EQ(e.pid, pid);
        EXPECT_EQ(e.basis, delta_basis::both);
        EXPECT_GE(e.cpu(), burn * 9 / 10) << "cpu mode " << static_cast<int>(cpu);
        // Most of it in user mode: the split is the kernel's tick samples,
        // and the burn's clock reads are system calls (a ThreadSanitizer
        // build on a loaded machine once had 229 ms of 300 in user mode).
        EXPECT_GE(e.user, burn / 2);
        // One thread cannot use more than the time between its two reads: the
        // interval plus the second walk up to it (and a tick each side when
        // the totals are tick counts).
        EXPECT_LE(e.cpu(), d->interval + b.walk_duration + 20ms) << "one thread cannot use more than the interval";
        EXPECT_GE(d->interval, burn);
        EXPECT_NEAR(e.cpu_percent, 100.0 * duration<double>(e.cpu()) / duration<double>(d->interval), 1e-9);
        EXPECT_GE(d->total_cpu(), e.cpu());
    }
}

namespace {
// Makes the next fork() get `pid` by writing pid-1 to ns_last_pid (root).
pid_t fork_paused_with_pid(pid_t pid) {
    int fd = ::open("/proc/sys/kernel/ns_last_pid", O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    pid_t out = -1;
    if (::flock(fd, LOCK_EX) == 0) {
        const std::string v = std::to_string(pid - 1);
        if (::write(fd, v.data(), v.size()) == static_cast<ssize_t>(v.size())) {
            out = ::fork();
            if (out == 0) {
                ::pause();
                ::_exit(0);
            }
        }
        ::flock(fd, LOCK_UN);
    }
    ::close(fd);
    return out;
}
}  // namespace

TEST(SnapshotLive, ReusedPidIsNotTheSameProcess) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to write ns_last_pid";
    // The old process burns CPU so that mistaking the new one for it would show.
    int ready[2];
    ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    testing_helpers::forked old([w = ready[1]] {
        burn_thread_cpu(200ms);
        char c = 'r';
        if (::write(w, &c, 1) != 1) return 1;
        ::pause();
        return 0;
    });
    ::close(ready[1]);
    old.start();
    char c;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    std::this_thread::sleep_for(30ms);  // the reuse comes more than one 10 ms tick later
    const auto a = take(false);
    const auto* was = a.find(old.pid());
    ASSERT_NE(was, nullptr);
    ASSERT_GE(was->times.cpu(), 150ms);
    const auto old_identity = was->identity;
    ::kill(old.pid(), SIGKILL);
    old.reap();

    pid_t reused = -1;
    for (int attempt = 0; attempt < 20; ++attempt) {
        reused = fork_paused_with_pid(old.pid());
        if (reused < 0) GTEST_SKIP() << "ns_last_pid not writable";
        if (reused == old.pid()) break;
        ::kill(reused, SIGKILL);
        ::waitpid(reused, nullptr, 0);
    }
    ASSERT_EQ(reused, old.pid()) << "could not get the pid again";
    const auto b = take(false);
    ::kill(reused, SIGKILL);
    ::waitpid(reused, nullptr, 0);

    const auto* now = b.find(reused);
    ASSERT_NE(now, nullptr);
    EXPECT_NE(now->identity, old_identity);
    EXPECT_GT(now->identity.start_ticks, old_identity.start_ticks);
    auto d = compute_delta(a, b).value();
    const auto& e = d.processes[static_cast<std::size_t>(now - b.processes.data())];
    EXPECT_EQ(e.basis, delta_basis::created);
    EXPECT_LT(e.cpu(), 100ms) << "the old process's CPU must not be carried over";
    EXPECT_NE(std::find(d.exited.begin(), d.exited.end(), old_identity), d.exited.end());
}

TEST(SnapshotLive, OwnerOfANonDumpableProcessIsItsEffectiveUid) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to change uid";
    int hold[2], ready[2];
    ASSERT_EQ(::pipe2(hold, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(hold[1]);
        ::close(ready[0]);
        // Changing the effective uid makes the process non-dumpable.
        if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(1);
        char c = 'r';
        if (::write(ready[1], &c, 1) != 1) ::_exit(2);
        while (::read(hold[0], &c, 1) > 0) {
        }
        ::_exit(0);
    }
    ::close(hold[0]);
    ::close(ready[1]);
    char c;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    struct stat st {};
    const std::string stat_path = "/proc/" + std::to_string(pid) + "/stat";
    ASSERT_EQ(::stat(stat_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u) << "procfs gives a non-dumpable process's files to root";
    for (bool threads : {false, true}) {
        const auto s = take(threads);
        const auto* p = s.find(pid);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(p->uid, 65534u) << "threads " << threads;
    }
    ::close(hold[1]);
    ::waitpid(pid, nullptr, 0);
}

TEST(SnapshotLive, ZombieIsListedWithItsFinalTimes) {
    testing_helpers::forked z([] {
        burn_thread_cpu(60ms);
        return 0;
    });
    z.start();
    z.wait_exited_unreaped();
    const auto s = take(true);
    const auto* p = s.find(z.pid());
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->state, 'Z');
    EXPECT_EQ(p->times.state, task_state::exited);
    EXPECT_GE(p->times.cpu(), 50ms);
    EXPECT_FALSE(p->times.exit);
    z.reap();
}

TEST(SnapshotLive, ProcessWhoseMainThreadExitedStillRuns) {
    // The leader thread exits alone while another thread runs on:
    // /proc shows the process as 'Z' (the leader's state), but it is alive.
    int ready[2], hold[2];
    ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(hold, O_CLOEXEC), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(ready[0]);
        ::close(hold[1]);
        std::thread([r = hold[0]] {
            char c;
            while (::read(r, &c, 1) > 0) {
            }
            ::_exit(0);
        }).detach();
        char c = 'r';
        if (::write(ready[1], &c, 1) != 1) ::_exit(2);
        ::syscall(SYS_exit, 0);  // this thread only, without unwinding the test's frames
        ::_exit(3);
    }
    ::close(ready[1]);
    ::close(hold[0]);
    char c;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    snapshot s;
    for (int i = 0; i < 200; ++i) {  // until the leader is a zombie
        s = take(true);
        const auto* p = s.find(pid);
        if (p && p->state == 'Z') break;
        std::this_thread::sleep_for(5ms);
    }
    const auto* p = s.find(pid);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(p->state, 'Z');
    EXPECT_EQ(p->times.state, task_state::running);
    const auto th = s.threads_of(*p);
    ASSERT_EQ(th.size(), listed_tids(pid).size());
    ASSERT_GE(th.size(), 2u);
    EXPECT_EQ(th[0].tid(), pid);
    EXPECT_EQ(th[0].times.state, task_state::exited) << "the leader thread itself has ended";
    EXPECT_EQ(th[1].times.state, task_state::running);
    ::close(hold[1]);
    ::waitpid(pid, nullptr, 0);
}

TEST(SnapshotLive, ProcessesVanishingMidWalkAreSkippedCleanly) {
    // A churner forks short-lived children (each with a thread) as fast as it
    // can, until its pipe closes.
    const int fds = open_fd_count();
    int run[2];
    ASSERT_EQ(::pipe2(run, O_CLOEXEC), 0);
    const pid_t churner = ::fork();
    if (churner == 0) {
        ::close(run[1]);
        ::fcntl(run[0], F_SETFL, O_NONBLOCK);
        char c;
        while (::read(run[0], &c, 1) < 0 && errno == EAGAIN) {
            const pid_t k = ::fork();
            if (k == 0) {
                std::thread([] {}).join();
                ::_exit(0);
            }
            if (k > 0) ::waitpid(k, nullptr, 0);
        }
        ::_exit(0);
    }
    ::close(run[0]);
    std::size_t vanished = 0;
    for (int i = 0; i < 30; ++i) {
        const auto s = take(true, i % 2 ? 2 : 1);
        vanished += s.vanished;
        for (const auto& f : s.failures)
            ADD_FAILURE() << "failure on " << f.pid << "/" << f.tid << ": " << f.error.message();
        std::size_t next = 0;
        for (const auto& p : s.processes) {
            EXPECT_EQ(p.first_thread, next);
            next += p.thread_entries;
        }
        EXPECT_EQ(next, s.threads.size());
        EXPECT_NE(s.find(churner), nullptr);
    }
    ::close(run[1]);
    ::waitpid(churner, nullptr, 0);
    EXPECT_EQ(open_fd_count(), fds) << "no descriptor leaked";
    RecordProperty("vanished", static_cast<int>(vanished));
    std::printf("vanished mid-walk: %zu\n", vanished);
}

TEST(SnapshotLive, SnapshotterKeepsOnlyTheProcDirectoryOpen) {
    const int fds = open_fd_count();
    {
        auto taker = snapshotter::open({.threads = true, .workers = 2}).value();
        EXPECT_EQ(open_fd_count(), fds + 1);
        snapshot s;
        for (int i = 0; i < 3; ++i) ASSERT_TRUE(taker.take(s));
        EXPECT_EQ(open_fd_count(), fds + 1);
        EXPECT_NE(s.find(::getpid()), nullptr);
    }
    EXPECT_EQ(open_fd_count(), fds);
}

TEST(SnapshotLive, HidepidDeniesOthersButTheWalkGoesOn) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a procfs";
    int report[2];
    ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
    // The mount point; the mount itself lives in the child's namespace only.
    char dir[] = "/tmp/proctimes-hidepid-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(report[0]);
        // A private procfs mount with hidepid=1 ("noaccess"): other users'
        // /proc/<pid> directories are listed but cannot be read.
        auto fail = [](int code) { ::_exit(code); };
        if (::unshare(CLONE_NEWNS) != 0) fail(10);
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail(10);
        if (::mount("proc", dir, "proc", 0, "hidepid=1") != 0) fail(10);
        if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) fail(11);
        snapshot_options o;
        o.threads = true;
        o.proc_root = dir;
        auto s = take_snapshot(o);
        char line[256];
        int n;
        if (!s) {
            n = std::snprintf(line, sizeof line, "error %d\n", s.error().value());
        } else {
            int denied = 0, other = 0, init_denied = 0;
            for (const auto& f : s->failures) {
                if (f.error == errc::access_denied)
                    ++denied;
                else
                    ++other;
                if (f.pid == 1 && f.item == snapshot_item::process) init_denied = 1;
            }
            const auto* me = s->find(::getpid());
            n = std::snprintf(line, sizeof line, "ok %zu %d %d %d %d %zu\n", s->processes.size(), denied, other,
                              init_denied, me != nullptr, me ? s->threads_of(*me).size() : 0);
        }
        if (::write(report[1], line, static_cast<std::size_t>(n)) != n) fail(12);
        fail(0);
    }
    ::close(report[1]);
    char buf[256] = {};
    const ssize_t n = ::read(report[0], buf, sizeof buf - 1);
    ::close(report[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::rmdir(dir);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 10) GTEST_SKIP() << "cannot mount a private procfs here";
    ASSERT_GT(n, 0) << "child exit status " << status;
    std::size_t procs = 0;
    int denied = -1, other = -1, init_denied = -1, me = -1;
    std::size_t my_threads = 0;
    ASSERT_EQ(std::sscanf(buf, "ok %zu %d %d %d %d %zu", &procs, &denied, &other, &init_denied, &me, &my_threads), 6)
        << buf;
    EXPECT_GT(denied, 0) << "root's processes must be reported as denied";
    EXPECT_EQ(other, 0);
    EXPECT_EQ(init_denied, 1);
    EXPECT_EQ(me, 1) << "its own process is still listed";
    EXPECT_GE(my_threads, 1u) << "its own threads are readable";
    EXPECT_GE(procs, 1u);
}

TEST(SnapshotLive, ProcessesOnlyAndWithThreadsAgree) {
    threaded_child c(5);
    const auto a = take(false);
    const auto b = take(true);
    const auto* pa = a.find(c.pid());
    const auto* pb = b.find(c.pid());
    ASSERT_TRUE(pa && pb);
    EXPECT_EQ(pa->identity, pb->identity);
    EXPECT_EQ(pa->uid, pb->uid);
    EXPECT_EQ(pa->name, pb->name);
    EXPECT_EQ(pa->times.creation, pb->times.creation);
    EXPECT_EQ(thread_ids(b, c.pid()), listed_tids(c.pid()));
    EXPECT_GE(thread_ids(b, c.pid()).size(), 6u);
    EXPECT_TRUE(thread_ids(a, c.pid()).empty());
}

TEST(SnapshotLive, PreciseThreadsHaveNanosecondTotals) {
    std::atomic<pid_t> tid{0};
    std::atomic<bool> stop{false};
    std::thread t([&] {
        burn_thread_cpu(50ms);
        tid = static_cast<pid_t>(::gettid());
        while (!stop) std::this_thread::sleep_for(1ms);
    });
    while (tid == 0) std::this_thread::sleep_for(1ms);
    const auto s = take(true, 1, snapshot_cpu::precise);
    stop = true;
    t.join();
    const auto* p = s.find(::getpid());
    ASSERT_NE(p, nullptr);
    bool found = false;
    for (const auto& th : s.threads_of(*p)) {
        EXPECT_EQ(th.times.precision.source, cpu_source::schedstat_and_stat);
        if (th.tid() == tid) {
            found = true;
            EXPECT_GE(th.times.cpu(), 50ms);
            EXPECT_EQ(th.times.precision.total_resolution, 1ns);
        }
    }
    EXPECT_TRUE(found);
}

TEST(SnapshotLive, KernelThreadsHaveNoUserTime) {
    // kthreadd (pid 2) and its children never run in user mode; with too few
    // ticks sampled the split must give their CPU to the kernel, not to user.
    proctimes::snapshot_options o;
    auto s = proctimes::take_snapshot(o);
    ASSERT_TRUE(s) << s.error().message();
    int seen = 0;
    for (const auto& p : s->processes) {
        if (!p.kernel_thread) continue;
        ++seen;
        EXPECT_EQ(p.times.user.count(), 0) << "pid " << p.pid();
    }
    if (seen == 0) GTEST_SKIP() << "no kernel threads visible (a container's /proc)";
}

namespace {
snapshotter reusing_snapshotter(nanoseconds reuse_for, snapshot_cpu cpu = snapshot_cpu::precise_processes) {
    snapshot_options o;
    o.threads = true;
    o.cpu = cpu;
    o.workers = 1;
    o.reuse_idle_threads_for = reuse_for;
    return snapshotter::open(o).value();
}

}  // namespace

// ThreadSanitizer starts its own thread in a forked child that starts
// threads, and that thread wakes every 100 ms: the child is then never idle
// between two snapshots, so its threads are rightly read again.
#if defined(__SANITIZE_THREAD__)
#define SKIP_IF_CHILD_CANNOT_BE_IDLE() GTEST_SKIP() << "ThreadSanitizer's own thread in the child runs every 100 ms"
#else
#define SKIP_IF_CHILD_CANNOT_BE_IDLE() (void)0
#endif

TEST(SnapshotLive, SnapshotterCopiesTheThreadsOfIdleProcesses) {
    SKIP_IF_CHILD_CANNOT_BE_IDLE();
    threaded_child c(50);
    ASSERT_EQ(c.tids().size(), 50u);
    // precise: thread totals to the nanosecond, so a thread that ran shows it.
    auto sn = reusing_snapshotter(60s, snapshot_cpu::precise);
    const auto first = sn.take().value();
    EXPECT_EQ(first.reused_threads, 0u) << "nothing to copy from yet";
    const auto* p1 = first.find(c.pid());
    ASSERT_NE(p1, nullptr);
    EXPECT_FALSE(p1->threads_copied);
    ASSERT_EQ(p1->thread_entries, listed_tids(c.pid()).size());

    const auto second = sn.take().value();
    const auto* p2 = second.find(c.pid());
    ASSERT_NE(p2, nullptr);
    EXPECT_TRUE(p2->threads_copied) << "the child sleeps: its threads cannot have changed";
    EXPECT_GE(second.reused_threads, p2->thread_entries);
    EXPECT_EQ(p2->times.cpu(), p1->times.cpu());
    const auto before = first.threads_of(*p1);
    const auto after = second.threads_of(*p2);
    ASSERT_EQ(after.size(), before.size());
    for (std::size_t i = 0; i < after.size(); ++i) {
        // Exactly the previous entries, at the new snapshot's instant.
        snapshot_thread expected = before[i];
        expected.times.sampled_at = second.taken;
        EXPECT_EQ(after[i], expected) << after[i].tid();
    }
    // Copies sum up to what a complete walk counts.
    std::size_t copied = 0;
    for (const auto& p : second.processes)
        if (p.threads_copied) copied += p.thread_entries;
    EXPECT_EQ(copied, second.reused_threads);

    // Once the process runs (a byte wakes one of its threads), its threads are
    // read again, and the woken one shows the CPU it used.
    nanoseconds slept{0};
    for (const auto& t : before) slept += t.times.cpu();
    c.wake_one();
    bool seen = false;
    for (int attempt = 0; attempt < 100 && !seen; ++attempt) {
        std::this_thread::sleep_for(10ms);
        const auto s = sn.take().value();
        const auto* p = s.find(c.pid());
        ASSERT_NE(p, nullptr);
        nanoseconds sum{0};
        for (const auto& t : s.threads_of(*p)) sum += t.times.cpu();
        if (sum > slept) {
            EXPECT_FALSE(p->threads_copied);
            seen = true;
        }
    }
    EXPECT_TRUE(seen) << "a process that ran must have its threads read again";
}

TEST(SnapshotLive, SnapshotterReadsEveryThreadAgainAfterTheReuseLimit) {
    SKIP_IF_CHILD_CANNOT_BE_IDLE();
    threaded_child c(20);
    auto sn = reusing_snapshotter(200ms);
    (void)sn.take().value();
    const auto copied = sn.take().value();
    EXPECT_GT(copied.reused_threads, 20u);
    std::this_thread::sleep_for(250ms);
    const auto full = sn.take().value();
    EXPECT_EQ(full.reused_threads, 0u) << "the last complete walk is older than the limit";
    EXPECT_GT(sn.take().value().reused_threads, 20u);

    // Without the option nothing is copied.
    snapshot_options o;
    o.threads = true;
    auto plain = snapshotter::open(o).value();
    (void)plain.take().value();
    EXPECT_EQ(plain.take().value().reused_threads, 0u);
}

TEST(SnapshotLive, SnapshotterCopiesWithTwoWalkersToo) {
    SKIP_IF_CHILD_CANNOT_BE_IDLE();
    // A big process (its threads shared out between walkers when read) is
    // copied whole in phase 1 when idle; the snapshot stays complete and ordered.
    threaded_child c(300);
    snapshot_options o;
    o.threads = true;
    o.workers = 2;
    o.reuse_idle_threads_for = 60s;
    auto sn = snapshotter::open(o).value();
    const auto first = sn.take().value();
    const auto second = sn.take().value();
    const auto* p1 = first.find(c.pid());
    const auto* p2 = second.find(c.pid());
    ASSERT_NE(p1, nullptr);
    ASSERT_NE(p2, nullptr);
    EXPECT_FALSE(p1->threads_copied);
    EXPECT_TRUE(p2->threads_copied);
    EXPECT_EQ(thread_ids(second, c.pid()), listed_tids(c.pid()));
    std::size_t next = 0;
    for (const auto& p : second.processes) {
        EXPECT_EQ(p.first_thread, next);
        next += p.thread_entries;
        for (const auto& t : second.threads_of(p)) EXPECT_EQ(t.pid, p.pid());
    }
    EXPECT_EQ(next, second.threads.size());
}
