// A handle to a reaped process must never report the process that gets its pid
// next. Forcing the reuse needs root (/proc/sys/kernel/ns_last_pid).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <cstdio>
#include <string>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

using namespace proctimes;
using testing_helpers::child;

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
}  // namespace

TEST(PidReuse, HandleNeverReportsTheNewProcess) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to write ns_last_pid";
    child a([] { return 0; });
    auto h = process::open(a.pid()).value();
    const auto old_identity = h.identity();
    a.start();
    a.reap();

    pid_t reused = -1;
    bool got = false;
    for (int attempt = 0; attempt < 20 && !got; ++attempt) {
        if (!fork_with_pid(a.pid(), reused)) GTEST_SKIP() << "ns_last_pid not writable";
        got = reused == a.pid();
        if (!got) {
            ::kill(reused, SIGKILL);
            ::waitpid(reused, nullptr, 0);
        }
    }
    ASSERT_TRUE(got) << "could not get pid " << a.pid() << " again";

    auto t = h.times();
    ASSERT_FALSE(t) << "a handle to a reaped process answered after its pid was reused";
    EXPECT_EQ(t.error(), errc::no_such_process);
    EXPECT_FALSE(h.name());
    EXPECT_FALSE(h.parent_id());
    EXPECT_FALSE(h.thread_ids());

    auto fresh = process::open(reused).value();
    EXPECT_EQ(fresh.id(), old_identity.id);
    EXPECT_NE(fresh.identity(), old_identity) << "same pid, different process: identities must differ";
    ::kill(reused, SIGKILL);
    ::waitpid(reused, nullptr, 0);
}

TEST(PidReuse, ThreadHandleNeverReportsTheNewTask) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to write ns_last_pid";
    child a([] { return 0; });
    auto h = thread::open(a.pid()).value();  // the main thread of the child
    a.start();
    a.reap();
    pid_t reused = -1;
    bool got = false;
    for (int attempt = 0; attempt < 20 && !got; ++attempt) {
        if (!fork_with_pid(a.pid(), reused)) GTEST_SKIP() << "ns_last_pid not writable";
        got = reused == a.pid();
        if (!got) {
            ::kill(reused, SIGKILL);
            ::waitpid(reused, nullptr, 0);
        }
    }
    ASSERT_TRUE(got);
    auto t = h.times();
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error(), errc::no_such_thread);
    ::kill(reused, SIGKILL);
    ::waitpid(reused, nullptr, 0);
}
