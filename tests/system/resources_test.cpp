// SPDX-License-Identifier: MIT
// read_process_resources on a real child whose memory, I/O and context
// switches the test drives: each family moves by what the child did.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "proctimes/resources.hpp"

using namespace proctimes;

namespace {

constexpr std::size_t touched = 64u << 20;  // bytes the child touches
constexpr int writes = 256;                 // write(2) calls of 4 KiB each
constexpr int sleeps = 40;                  // nanosleeps: each a voluntary switch

// A child that waits for a byte on `go`, then touches memory, writes and
// sleeps, reports a byte on `done`, and waits to be killed.
pid_t start_child(int go, int done) {
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    char c = 0;
    if (::read(go, &c, 1) != 1) ::_exit(1);
    auto* mem = static_cast<char*>(::malloc(touched));
    if (!mem) ::_exit(2);
    for (std::size_t i = 0; i < touched; i += 4096) mem[i] = 1;
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    char buf[4096] = {};
    for (int i = 0; i < writes; ++i)
        if (::write(null, buf, sizeof buf) != static_cast<ssize_t>(sizeof buf)) ::_exit(3);
    for (int i = 0; i < sleeps; ++i) ::usleep(1000);
    if (::write(done, &c, 1) != 1) ::_exit(4);
    for (;;) ::pause();
}

// Kills and reaps the child when the test ends early (a failed assertion), so
// that no child is left paused holding the test's output.
struct child_guard {
    pid_t pid = 0;
    explicit child_guard(pid_t p) : pid(p) {}
    child_guard(const child_guard&) = delete;
    child_guard& operator=(const child_guard&) = delete;
    ~child_guard() {
        if (pid <= 0) return;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

resource_options everything() {
    resource_options o;
    o.families = resource_family::memory | resource_family::switches | resource_family::io | resource_family::files |
                 resource_family::proportional | resource_family::wait_channel | resource_family::threads;
    return o;
}

}  // namespace

TEST(Resources, FollowWhatAChildDoes) {
    int go[2], done[2];
    ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(done, O_CLOEXEC), 0);
    const pid_t pid = start_child(go[0], done[1]);
    ASSERT_GT(pid, 0);
    child_guard guard{pid};
    ::usleep(50 * 1000);  // let it block on `go`
    auto before = read_process_resources(pid, everything());
    ASSERT_TRUE(before) << before.error().message();
    EXPECT_EQ(before->state, 'S');  // waiting for `go`
    ASSERT_TRUE(before->memory && before->io && before->switches && before->open_files);

    char c = 'x';
    ASSERT_EQ(::write(go[1], &c, 1), 1);
    ASSERT_EQ(::read(done[0], &c, 1), 1);
    resource_options same = everything();
    same.start_ticks = before->start_ticks;
    auto after = read_process_resources(pid, same);
    ASSERT_TRUE(after) << after.error().message();
    ASSERT_TRUE(after->memory && after->io && after->switches && after->open_files);
    EXPECT_GE(after->memory->resident_bytes, before->memory->resident_bytes + touched * 9 / 10);
    EXPECT_GE(after->memory->virtual_bytes, before->memory->virtual_bytes + touched);
    ASSERT_TRUE(after->io->write_chars && before->io->write_chars && after->io->write_calls);
    EXPECT_GE(*after->io->write_chars - *before->io->write_chars, std::uint64_t{writes} * 4096);
    EXPECT_GE(*after->io->write_calls - *before->io->write_calls, std::uint64_t{writes});
    EXPECT_GE(after->switches->voluntary - before->switches->voluntary, std::uint64_t{sleeps});
    EXPECT_EQ(*after->open_files, *before->open_files + 1);  // /dev/null
    EXPECT_GE(after->minor_faults - before->minor_faults, touched / 4096 / 2);
    ASSERT_TRUE(after->proportional);
    EXPECT_GE(after->proportional->pss_bytes, touched * 9 / 10);
    // The child's one thread, and under a sanitizer (TSan) the thread its
    // runtime starts again in a forked child.
    ASSERT_FALSE(after->threads.empty());
    EXPECT_LE(after->threads.size(), 2u);
    EXPECT_EQ(after->threads[0].id, pid);
    EXPECT_EQ(after->missing, resource_family::none);

    ::kill(pid, SIGKILL);
    int status = 0;
    guard.pid = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    // Reaped: gone, whatever is asked.
    EXPECT_EQ(read_process_resources(pid, same).error(), errc::no_such_process);
    for (const int fd : {go[0], go[1], done[0], done[1]}) ::close(fd);
}
