// SPDX-License-Identifier: MIT
// Tests that run inside a prepared environment (tests/hostile/run_in.sh):
//   PROCTIMES_TEST_ENV=hidepid       /proc remounted with hidepid=2, running as nobody
//   PROCTIMES_TEST_ENV=hidepid1      /proc remounted with hidepid=1, running as nobody
//   PROCTIMES_TEST_ENV=subsetpid     /proc remounted with subset=pid (no /proc/sys)
//   PROCTIMES_TEST_ENV=pidns         pid 1 of a new pid namespace, with the host's /proc
//   PROCTIMES_TEST_ENV=noproc        /proc unmounted in a private mount namespace
//   PROCTIMES_TEST_ENV=unprivileged  running as nobody, /proc as usual
// Each suite skips itself when started in another environment.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"
#include "proctimes/windows.h"
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
    EXPECT_EQ(p.error(), errc::process_table_unavailable) << p.error().message();
    EXPECT_EQ(thread::open(1).error(), errc::process_table_unavailable);
    EXPECT_EQ(process::open_self().error(), errc::process_table_unavailable);
    auto me = this_process::times();
    ASSERT_FALSE(me);
    EXPECT_EQ(me.error(), errc::process_table_unavailable);
    EXPECT_EQ(this_thread::times().error(), errc::process_table_unavailable);
    EXPECT_EQ(get_boot_anchor().error(), errc::process_table_unavailable);
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

TEST(NoAccessProc, OtherUsersProcessesAreAccessDeniedNotEperm) {
    if (!in_env("hidepid1")) GTEST_SKIP() << "needs tests/hostile/run_in.sh hidepid1";
    ASSERT_NE(::getuid(), 0u);
    // hidepid=1 lists /proc/1 but answers EPERM inside it: the documented
    // error is access_denied, whatever errno the kernel chose.
    auto p = process::open(1);
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::access_denied) << p.error().message();
    EXPECT_EQ(p.error(), std::errc::permission_denied);
    EXPECT_EQ(thread::open(1).error(), errc::access_denied);
    EXPECT_EQ(thread::open(1, 1).error(), errc::access_denied);
    EXPECT_EQ(process::open(4'000'000).error(), errc::no_such_process);
    proctimes_SetLastError(0);
    EXPECT_EQ(proctimes_OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, 1), nullptr);
    EXPECT_EQ(proctimes_GetLastError(), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    // Our own processes stay readable.
    auto self = process::open_self();
    ASSERT_TRUE(self) << self.error().message();
    EXPECT_TRUE(self->times());
}

TEST(SubsetPidProc, MissingBootIdIsNamed) {
    if (!in_env("subsetpid")) GTEST_SKIP() << "needs tests/hostile/run_in.sh subsetpid";
    ASSERT_NE(::access("/proc/1/stat", R_OK), -1) << "the pid directories are there";
    ASSERT_EQ(::access("/proc/sys/kernel/random/boot_id", F_OK), -1) << "but not /proc/sys";
    // Creation instants and identities need the boot id: say that it is
    // missing, not "no such file" as if the process were.
    auto a = get_boot_anchor();
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error(), errc::boot_identity_unavailable);
    EXPECT_NE(a.error().message().find("/proc/sys/kernel/random/boot_id"), std::string::npos);
    auto p = process::open(1);
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::boot_identity_unavailable) << p.error().message();
    EXPECT_NE(p.error(), std::errc::no_such_process);
    EXPECT_EQ(thread::open_self().error(), errc::boot_identity_unavailable);
    EXPECT_EQ(this_process::times().error(), errc::boot_identity_unavailable);
    EXPECT_EQ(this_thread::times().error(), errc::boot_identity_unavailable);
    // The Win32 layer: "not supported here", not "no such process" (87).
    proctimes_SetLastError(0);
    EXPECT_EQ(proctimes_OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, 1), nullptr);
    EXPECT_EQ(proctimes_GetLastError(), static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    // The CPU clocks need no /proc.
    const auto t0 = thread_cpu_clock::now();
    testing_helpers::burn_thread_cpu(2ms);
    EXPECT_GE(thread_cpu_clock::now() - t0, 2ms);
}

TEST(ForeignPidNamespace, NoHandleOnAnotherNamespacesProcess) {
    if (!in_env("pidns")) GTEST_SKIP() << "needs tests/hostile/run_in.sh pidns";
    ASSERT_EQ(::getpid(), 1) << "run_in.sh pidns starts the tests as pid 1 of a new pid namespace";
    // /proc/1 is the host's init here: opening "pid 1" must not pair its
    // name and creation with our CPU clock (or anything else of ours).
    auto p = process::open(1);
    ASSERT_FALSE(p) << "opened the host's pid 1 as ours";
    EXPECT_EQ(p.error(), errc::foreign_namespace) << p.error().message();
    EXPECT_EQ(p.error(), std::errc::no_such_file_or_directory);
    EXPECT_EQ(process::open_self().error(), errc::foreign_namespace);
    EXPECT_EQ(thread::open(1).error(), errc::foreign_namespace);
    EXPECT_EQ(thread::open(1, 1).error(), errc::foreign_namespace);
    EXPECT_EQ(thread::open_self().error(), errc::foreign_namespace);
    // A thread of ours, by tid.
    std::atomic<pid_t> tid{0};
    std::atomic<bool> stop{false};
    std::thread th([&] {
        tid = static_cast<pid_t>(::gettid());
        while (!stop) std::this_thread::sleep_for(1ms);
    });
    while (tid == 0) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(thread::open(tid).error(), errc::foreign_namespace);
    stop = true;
    th.join();
    // The Win32 layer goes through the same core.
    proctimes_SetLastError(0);
    EXPECT_EQ(proctimes_OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, 1), nullptr);
    EXPECT_EQ(proctimes_GetLastError(), static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    // A child: its handle must not describe the host's process of the same
    // number. The command runs and is reported from its wait; the handle is
    // refused with the reason, never opened on the host's process.
    auto c = child::spawn({.argv = {"sh", "-c", "exit 5"}});
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->handle_error(), errc::foreign_namespace) << c->handle_error().message();
    auto e = c->wait();
    ASSERT_TRUE(e) << e.error().message();
    ASSERT_TRUE(e->status.has_value());
    EXPECT_EQ(e->status->code, 5);
    EXPECT_TRUE(e->times_error);
    // The calling process and thread are read through /proc/self, which is
    // ours in any procfs that shows us: their values stay right.
    const auto before = std::chrono::system_clock::now();
    testing_helpers::burn_thread_cpu(20ms);
    auto me = this_process::times();
    ASSERT_TRUE(me) << me.error().message();
    EXPECT_GE(me->cpu(), 20ms);
    EXPECT_LE(me->creation, before);
    auto mine = this_thread::times();
    ASSERT_TRUE(mine) << mine.error().message();
    EXPECT_GE(mine->cpu(), 20ms);
    EXPECT_LE(mine->creation, before);
}
