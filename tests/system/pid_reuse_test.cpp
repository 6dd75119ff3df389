// SPDX-License-Identifier: MIT
// A handle to a reaped process must never report the process that gets its pid
// next. Forcing the reuse needs root (/proc/sys/kernel/ns_last_pid).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

using namespace proctimes;
using testing_helpers::forked;

namespace {
// Makes the next fork() get `pid`: write pid-1 to ns_last_pid under its lock.
bool fork_with_pid(pid_t pid, pid_t& out) {
    int fd = ::open("/proc/sys/kernel/ns_last_pid", O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    if (::flock(fd, LOCK_EX) != 0) {
        ::close(fd);
        return false;
    }
    const std::string v = std::to_string(pid - 1);
    bool ok = ::write(fd, v.data(), v.size()) == static_cast<ssize_t>(v.size());
    out = ok ? ::fork() : -1;
    if (out == 0) {
        ::pause();
        ::_exit(0);
    }
    ::flock(fd, LOCK_UN);
    ::close(fd);
    return ok && out > 0;
}
// Forks a process that gets pid `want` again: true when `out` is that
// process, false when the pid could not be had, empty when ns_last_pid cannot
// be written. Another process that forks between the write and this fork (a
// build beside the tests forks compilers all the time) may take the pid
// first: then it is tried again, and given up at once when that process
// still holds it (the caller starts over with a new process).
std::optional<bool> fork_with_pid_again(pid_t want, pid_t& out) {
    for (int attempt = 0; attempt < 50; ++attempt) {
        if (!fork_with_pid(want, out)) return std::nullopt;
        if (out == want) return true;
        ::kill(out, SIGKILL);
        ::waitpid(out, nullptr, 0);
        out = -1;
        if (::kill(want, 0) == 0 || errno != ESRCH) return false;  // another process has it now
    }
    return false;
}

// Kills and reaps the reused-pid process however the test ends.
struct reaper {
    pid_t& pid;
    ~reaper() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
};

// Runs `check` with a process of its own that was reaped and whose pid now
// names another, running process (`reused`); with a new process each round
// while another program took the pid first, up to 20 rounds.
template <class Handle, class Check>
void with_reused_pid(Check check) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to write ns_last_pid";
    std::vector<pid_t> lost;
    for (int round = 0; round < 20; ++round) {
        forked a([] { return 0; });
        auto h = Handle::open(a.pid()).value();
        const auto old_creation = h.creation();
        a.start();
        a.reap();
        pid_t reused = -1;
        reaper cleanup{reused};
        const auto got = fork_with_pid_again(a.pid(), reused);
        if (!got) GTEST_SKIP() << "ns_last_pid not writable";
        if (!*got) {
            lost.push_back(a.pid());
            continue;
        }
        check(h, old_creation, reused);
        return;
    }
    std::string pids;
    for (pid_t p : lost) pids += " " + std::to_string(p);
    FAIL() << "another process took the pid first, 20 times:" << pids;
}
}  // namespace

TEST(PidReuse, HandleNeverReportsTheNewProcess) {
    with_reused_pid<process>([](process& h, auto old_creation, pid_t reused) {
        const auto old_identity = h.identity();
        // The handle answers with what it recorded of ITS process's end (or
        // an error when nothing was recorded) — never the new, running process.
        auto t = h.times();
        if (t) {
            EXPECT_NE(t->state, task_state::running);
            EXPECT_EQ(t->creation, old_creation);
            ASSERT_TRUE(t->exit.has_value());
            EXPECT_GE(*t->exit, old_creation);
        } else {
            EXPECT_EQ(t.error(), errc::no_such_process);
        }
        // Live queries fail: they would otherwise read the new process.
        EXPECT_EQ(h.name().error(), errc::no_such_process);
        EXPECT_EQ(h.parent_id().error(), errc::no_such_process);
        EXPECT_EQ(h.thread_ids().error(), errc::no_such_process);
        EXPECT_TRUE(wait_for_exit(h, std::chrono::seconds{0}).value()) << "the old process has exited";

        auto fresh = process::open(reused).value();
        EXPECT_EQ(fresh.id(), old_identity.id);
        EXPECT_NE(fresh.identity(), old_identity) << "same pid, different process: identities must differ";
        EXPECT_EQ(fresh.times().value().state, task_state::running);
    });
}

TEST(PidReuse, ThreadHandleNeverReportsTheNewTask) {
    // The main thread of the child.
    with_reused_pid<thread>([](thread& h, auto old_creation, pid_t) {
        auto t = h.times();
        if (t) {
            EXPECT_NE(t->state, task_state::running);
            EXPECT_EQ(t->creation, old_creation);
        } else {
            EXPECT_EQ(t.error(), errc::no_such_thread);
        }
        EXPECT_EQ(h.name().error(), errc::no_such_thread);
    });
}
