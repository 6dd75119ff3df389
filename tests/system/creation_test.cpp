// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

extern char** environ;

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;
using testing_helpers::forked;

namespace {

struct probe_result {
    std::uint64_t filetime = 0;
    int source = -1;
};

// Runs creation_probe for `pid` with `extra_env` ("NAME=value" or empty) added.
probe_result run_probe(pid_t pid, const std::string& extra_env = {}) {
    int p[2];
    EXPECT_EQ(::pipe(p), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    std::string pid_s = std::to_string(pid);
    char* argv[] = {const_cast<char*>(PROCTIMES_CREATION_PROBE), pid_s.data(), nullptr};
    std::vector<char*> env;
    for (char** e = environ; *e; ++e) env.push_back(*e);
    std::string extra = extra_env;
    if (!extra.empty()) env.push_back(extra.data());
    env.push_back(nullptr);
    pid_t c = -1;
    EXPECT_EQ(posix_spawn(&c, PROCTIMES_CREATION_PROBE, &fa, nullptr, argv, env.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(p[1]);
    char buf[128] = {};
    // A probe that blocks (on a FIFO planted at the anchor path, say) fails
    // the test after 20 s instead of hanging it.
    pollfd pf{p[0], POLLIN, 0};
    ssize_t n = ::poll(&pf, 1, 20'000) == 1 ? ::read(p[0], buf, sizeof buf - 1) : -1;
    if (n < 0) {
        ADD_FAILURE() << "creation_probe blocked";
        ::kill(c, SIGKILL);
    }
    ::close(p[0]);
    int status = 0;
    ::waitpid(c, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    probe_result r;
    if (n > 0) std::sscanf(buf, "%lu %d", &r.filetime, &r.source);
    return r;
}

}  // namespace

TEST(Creation, ChildCreationLiesBetweenTwoClockSamples) {
    for (int i = 0; i < 20; ++i) {
        const auto before = system_clock::now();
        forked c([] { return 0; });
        const auto after = system_clock::now();
        auto h = process::open(c.pid()).value();
        // Floored to the 10 ms start tick; 1 ms slack for the anchor measurement.
        EXPECT_GE(h.creation(), before - 11ms);
        EXPECT_LE(h.creation(), after + 1ms);
    }
}

TEST(Creation, BitIdenticalAcrossCallsAndHandles) {
    auto h = process::open_self().value();
    const auto first = h.times().value().creation;
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(h.times().value().creation, first);
        ASSERT_EQ(this_process::times().value().creation, first);
    }
    for (int i = 0; i < 20; ++i) ASSERT_EQ(process::open_self().value().creation(), first);
    auto init = process::open(1);
    if (init) {
        EXPECT_EQ(init->creation(), process::open(1).value().creation());
    }
}

TEST(Creation, BitIdenticalAcrossSeparateProcesses) {
    const auto mine = filetime_from_time(process::open_self().value().creation()).value();
    for (int i = 0; i < 3; ++i) {
        const auto theirs = run_probe(::getpid());
        EXPECT_EQ(theirs.filetime, mine.ticks);
    }
    auto init = process::open(1);
    if (init) {
        EXPECT_EQ(run_probe(1).filetime, filetime_from_time(init->creation())->ticks);
    }
}

TEST(Creation, AnchorIsPublishedOnceAndSharedThroughTheAnchorDir) {
    const auto dir = std::filesystem::temp_directory_path() / ("proctimes-anchor-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string env = "PROCTIMES_ANCHOR_DIR=" + dir.string();
    const auto a = run_probe(1, env);
    const auto b = run_probe(1, env);
    const auto c = run_probe(1, env);
    EXPECT_EQ(a.source, static_cast<int>(anchor_source::published));
    EXPECT_EQ(b.source, static_cast<int>(anchor_source::shared_trusted));
    EXPECT_EQ(a.filetime, b.filetime);
    EXPECT_EQ(b.filetime, c.filetime);
    // The anchor is within a few µs of ours (both measure the same kernel offset).
    const auto ours = filetime_from_time(process::open(1).value().creation())->ticks;
    EXPECT_LE(a.filetime > ours ? a.filetime - ours : ours - a.filetime, 10'000u);  // 1 ms
    std::filesystem::remove_all(dir);
}

TEST(Creation, CorruptOrForeignAnchorFileIsNotBelieved) {
    const auto dir = std::filesystem::temp_directory_path() / ("proctimes-anchor-bad-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto boot = get_boot_anchor().value();
    const auto path = dir / ("proctimes-boot-anchor-" + boot.id.to_string());
    {
        // A group-writable file is not trusted, and its value is 1 h off: rejected.
        std::FILE* f = std::fopen(path.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fprintf(f, "proctimes-boot-anchor 1 %s %lld\n", boot.id.to_string().c_str(),
                     static_cast<long long>(boot.boot.time_since_epoch().count() + 3'600'000'000'000LL));
        std::fclose(f);
        std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                               std::filesystem::perms::group_write |
                                               std::filesystem::perms::others_read);
    }
    const auto r = run_probe(1, "PROCTIMES_ANCHOR_DIR=" + dir.string());
    EXPECT_EQ(r.source, static_cast<int>(anchor_source::measured_private));
    const auto ours = filetime_from_time(process::open(1).value().creation())->ticks;
    EXPECT_LE(r.filetime > ours ? r.filetime - ours : ours - r.filetime, 10'000u);
    std::filesystem::remove_all(dir);
}

TEST(Creation, SpecialFileAtTheAnchorPathIsIgnoredWithoutBlocking) {
    // Any user may create the anchor's name in /dev/shm before the first use
    // on a boot. A FIFO there made open(2) wait for a writer forever.
    const auto boot = get_boot_anchor().value();
    const auto ours = filetime_from_time(process::open(1).value().creation())->ticks;
    for (const char* kind : {"fifo", "fifo-with-idle-writer", "directory", "socket"}) {
        SCOPED_TRACE(kind);
        const auto dir = std::filesystem::temp_directory_path() /
                         ("proctimes-anchor-special-" + std::to_string(::getpid()) + "-" + kind);
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        const auto path = dir / ("proctimes-boot-anchor-" + boot.id.to_string());
        int held = -1;
        if (std::string(kind) == "directory") {
            std::filesystem::create_directory(path);
        } else if (std::string(kind) == "socket") {
            held = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_un a{};
            a.sun_family = AF_UNIX;
            std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
            ASSERT_EQ(::bind(held, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        } else {
            ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
            if (std::string(kind) != "fifo") held = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        }
        const auto r = run_probe(1, "PROCTIMES_ANCHOR_DIR=" + dir.string());
        // Treated as absent; the name is taken, so the probe keeps its own
        // measurement, within a tick of ours.
        EXPECT_EQ(r.source, static_cast<int>(anchor_source::measured_private));
        EXPECT_LE(r.filetime > ours ? r.filetime - ours : ours - r.filetime, 10'000u);
        if (held >= 0) ::close(held);
        std::filesystem::remove_all(dir);
    }
}

TEST(Creation, AnchorReportsNoClockStep) {
    auto a = get_boot_anchor();
    ASSERT_TRUE(a) << a.error().message();
    // Unless the clock was stepped during the test run, the offset is unchanged.
    EXPECT_LT(abs(a->clock_step()), 5ms);
    // btime (whole seconds, truncated) agrees to within a second.
    std::FILE* f = std::fopen("/proc/stat", "r");
    ASSERT_NE(f, nullptr);
    char line[256];
    long long btime = 0;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "btime %lld", &btime) == 1) break;
    std::fclose(f);
    const auto boot_s = duration_cast<seconds>(a->boot.time_since_epoch()).count();
    EXPECT_LE(std::llabs(boot_s - btime), 1);
}
