// SPDX-License-Identifier: MIT
// A handle to a reaped process must never report the process that gets its pid
// next. Forcing the reuse needs root (/proc/sys/kernel/ns_last_pid).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <cstdio>
#include <optional>
#include <string>

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
// Forks a process that gets pid `want` again, trying up to 20 times: true
// when `out` is that process, false when the pid could not be had, empty when
// ns_last_pid cannot be written.
std::optional<bool> fork_with_pid_again(pid_t want, pid_t& out) {
    for (int attempt = 0; attempt < 20; ++attempt) {
        if (!fork_with_pid(want, out)) return std::nullopt;
        if (out == want) return true;
        ::kill(out, SIGKILL);
        ::waitpid(out, nullptr, 0);
        out = -1;
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
}  // namespace

TEST(PidReuse, HandleNeverReportsTheNewProcess) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to write ns_last_pid";
    forked a([] { return 0; });
    auto h = process::open(a.pid()).value();
    const auto old_identity = h.identity();
    const auto old_creation = h.creation();
    a.start();
    a.reap();

    pid_t reused = -1;
    reaper cleanup{reused};
    const auto got = fork_with_pid_again(a.pid(), reused);
    if (!got) GTEST_SKIP() << "ns_last_pid not writable";
    ASSERT_TRUE(*got) << "could not get pid " << a.pid() << " again";

    // The handle answers with what it recorded of ITS process's end (or an
    // error when nothing was recorded) — never the new, running process.
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
}

TEST(PidReuse, ThreadHandleNeverReportsTheNewTask) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to write ns_last_pid";
    forked a([] { return 0; });
    auto h = thread::open(a.pid()).value();  // the main thread of the child
    const auto old_creation = h.creation();
    a.start();
    a.reap();
    pid_t reused = -1;
    reaper cleanup{reused};
    const auto got = fork_with_pid_again(a.pid(), reused);
    if (!got) GTEST_SKIP() << "ns_last_pid not writable";
    ASSERT_TRUE(*got) << "could not get pid " << a.pid() << " again";
    auto t = h.times();
    if (t) {
        EXPECT_NE(t->state, task_state::running);
        EXPECT_EQ(t->creation, old_creation);
    } else {
        EXPECT_EQ(t.error(), errc::no_such_thread);
    }
    EXPECT_EQ(h.name().error(), errc::no_such_thread);
}
