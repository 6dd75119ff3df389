// Tests that run inside a prepared environment (tests/hostile/run_in.sh):
//   PROCTIMES_TEST_ENV=hidepid       /proc remounted with hidepid=2, running as nobody
//   PROCTIMES_TEST_ENV=noproc        /proc unmounted in a private mount namespace
//   PROCTIMES_TEST_ENV=unprivileged  running as nobody, /proc as usual
// Each suite skips itself when started in another environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

using namespace std::chrono_literals;
using namespace proctimes;

namespace {
bool in_env(const char* name) {
    const char* e = std::getenv("PROCTIMES_TEST_ENV");
    return e && std::strcmp(e, name) == 0;
}
}  // namespace

TEST(HiddenProc, OtherUsersProcessesAreAccessDeniedNotZero) {
    if (!in_env("hidepid")) GTEST_SKIP() << "needs tests/hostile/run_in.sh hidepid";
    ASSERT_NE(::getuid(), 0u);
    // pid 1 belongs to root: it exists, /proc hides it.
    auto p = process::open(1);
    ASSERT_FALSE(p) << "a hidden process must not be opened (would it report zero times?)";
    EXPECT_EQ(p.error(), errc::access_denied);
    EXPECT_EQ(p.error(), std::errc::permission_denied);
    auto t = thread::open(1);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error(), errc::access_denied);
    // A pid that does not exist at all is still "no such process".
    EXPECT_EQ(process::open(4'000'000).error(), errc::no_such_process);
    // Our own processes stay visible, with real values.
    auto self = process::open_self();
    ASSERT_TRUE(self) << self.error().message();
    testing_helpers::burn_thread_cpu(20ms);
    EXPECT_GE(self->times().value().cpu(), 20ms);
    EXPECT_TRUE(this_thread::times());
}

TEST(NoProc, ClearErrorsAndNoCrash) {
    if (!in_env("noproc")) GTEST_SKIP() << "needs tests/hostile/run_in.sh noproc";
    auto p = process::open(1);
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::proc_unavailable) << p.error().message();
    EXPECT_EQ(thread::open(1).error(), errc::proc_unavailable);
    EXPECT_EQ(process::open_self().error(), errc::proc_unavailable);
    auto me = this_process::times();
    ASSERT_FALSE(me);
    EXPECT_EQ(me.error(), errc::proc_unavailable);
    EXPECT_EQ(this_thread::times().error(), errc::proc_unavailable);
    EXPECT_EQ(get_boot_anchor().error(), errc::proc_unavailable);
    // What needs no /proc still works.
    const auto t0 = thread_cpu_clock::now();
    testing_helpers::burn_thread_cpu(5ms);
    EXPECT_GE(thread_cpu_clock::now() - t0, 5ms);
    EXPECT_TRUE(filetime_from_time(std::chrono::system_clock::now()).has_value());
}

TEST(Unprivileged, OtherUsersProcessesHaveRealValues) {
    if (!in_env("unprivileged")) GTEST_SKIP() << "needs tests/hostile/run_in.sh unprivileged";
    ASSERT_NE(::getuid(), 0u);
    // pid 1 is root's; without hidepid its times are public (as with ps).
    auto p = process::open(1);
    ASSERT_TRUE(p) << p.error().message();
    auto t = p->times();
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_GT(t->cpu(), 0ns);
    EXPECT_LE(t->creation, std::chrono::system_clock::now());
    // Our own child: spawned, measured, reaped.
    auto c = child::spawn({.argv = {"sh", "-c", "exit 3"}});
    ASSERT_TRUE(c) << c.error().message();
    auto e = c->wait();
    ASSERT_TRUE(e) << e.error().message();
    EXPECT_EQ(e->status.value().code, 3);
    ASSERT_TRUE(e->times.exit.has_value());
    EXPECT_GE(*e->times.exit, e->times.creation);
}
