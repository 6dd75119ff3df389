// SPDX-License-Identifier: MIT
// The eBPF walk's memory and open-files limit of a process
// (snapshot_process::memory, ::open_files_limit) against its /proc files and
// prlimit(2): what spares serve every file of a member that did not run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bpf_skip.hpp"
#include "file_text.hpp"
#include "proctimes/snapshot.hpp"

using namespace proctimes;

namespace {

using testing_helpers::file_text;

// What /proc/<pid>/stat (rss, vsize) and status (VmSwap) say, and prlimit's
// soft limit of open files; empty when the process is gone.
struct proc_view {
    process_memory memory;
    std::uint64_t limit = 0;
    friend bool operator==(const proc_view&, const proc_view&) = default;
};
std::optional<proc_view> read_proc(pid_t pid) {
    const std::string dir = "/proc/" + std::to_string(pid);
    const std::string stat = file_text(dir + "/stat"), status = file_text(dir + "/status");
    if (stat.empty() || status.empty()) return std::nullopt;
    std::istringstream in(stat.substr(stat.rfind(')') + 2));
    std::string t;
    std::uint64_t vsize = 0, rss = 0;
    for (int field = 3; field <= 24; ++field) {
        in >> t;
        if (field == 23) vsize = std::stoull(t);
        if (field == 24) rss = std::stoull(t);
    }
    std::uint64_t swap_kb = 0;
    if (const auto at = status.find("\nVmSwap:"); at != std::string::npos) swap_kb = std::stoull(status.substr(at + 8));
    rlimit lim{};
    if (::prlimit(pid, RLIMIT_NOFILE, nullptr, &lim) != 0) return std::nullopt;
    proc_view v;
    v.memory = {rss * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)), vsize, swap_kb * 1024};
    v.limit = lim.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(lim.rlim_cur);
    return v;
}

}  // namespace

// A child that holds 16 MiB and sleeps (python3, exec'd: no code of this
// test program, whose sanitizer runtime would wake in it), its soft limit
// of open files set to 777 from here, and pid 1: each one's walk values are
// its files', read before and after the walk while they did not move (a try
// where they moved is repeated). This process is not among them: taking a
// snapshot allocates. A kernel thread has no address space: no memory.
TEST(BpfSnapshot, ProcessMemoryAndFilesLimitAreThoseOfItsProcFiles) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
    constexpr std::uint64_t held = 16u << 20;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::execl("/usr/bin/python3", "python3", "-c", "import time\nb = b'x' * (16 << 20)\ntime.sleep(100000)",
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    const auto stop_child = [child] {
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
    };
    // Its 16 MiB resident, and it asleep.
    bool ready = false;
    for (int i = 0; i < 1000 && !ready; ++i) {
        const auto v = read_proc(child);
        const std::string stat = file_text("/proc/" + std::to_string(child) + "/stat");
        ready = v && v->memory.resident_bytes >= held && stat.size() > stat.rfind(')') + 2 &&
                stat[stat.rfind(')') + 2] == 'S';
        if (!ready) ::usleep(10'000);
    }
    if (!ready) stop_child();
    ASSERT_TRUE(ready) << "the child did not come to hold 16 MiB asleep";
    rlimit lim{};
    ASSERT_EQ(::prlimit(child, RLIMIT_NOFILE, nullptr, &lim), 0);
    lim.rlim_cur = 777;
    ASSERT_EQ(::prlimit(child, RLIMIT_NOFILE, &lim, nullptr), 0);
    auto bpf = snapshotter::open({.source = snapshot_source::bpf});
    ASSERT_TRUE(bpf) << bpf.error().message();
    const std::vector<pid_t> pids{child, 1};
    bool compared = false;
    for (int attempt = 0; attempt < 10 && !compared; ++attempt) {
        std::vector<std::optional<proc_view>> before, after;
        for (const pid_t p : pids) before.push_back(read_proc(p));
        auto s = bpf->take();
        for (const pid_t p : pids) after.push_back(read_proc(p));
        ASSERT_TRUE(s) << s.error().message();
        ASSERT_EQ(s->source, snapshot_source::bpf);
        if (before != after) continue;  // one moved between the reads: once more
        for (std::size_t k = 0; k < pids.size(); ++k) {
            const snapshot_process* p = s->find(pids[k]);
            if (!before[k] || !p) continue;  // pid 1 outside this namespace
            ASSERT_TRUE(p->memory) << "pid " << pids[k];
            EXPECT_EQ(p->memory->resident_bytes, before[k]->memory.resident_bytes) << "pid " << pids[k];
            EXPECT_EQ(p->memory->virtual_bytes, before[k]->memory.virtual_bytes) << "pid " << pids[k];
            EXPECT_EQ(p->memory->swap_bytes, before[k]->memory.swap_bytes) << "pid " << pids[k];
            ASSERT_TRUE(p->open_files_limit) << "pid " << pids[k];
            EXPECT_EQ(*p->open_files_limit, before[k]->limit) << "pid " << pids[k];
        }
        const snapshot_process* c = s->find(child);
        ASSERT_NE(c, nullptr);
        ASSERT_TRUE(c->memory);
        EXPECT_GE(c->memory->resident_bytes, held);
        EXPECT_EQ(c->open_files_limit, std::optional<std::uint64_t>{777});
        compared = true;
    }
    EXPECT_TRUE(compared) << "the processes' memory moved between every read";
    stop_child();
    // kthreadd (pid 2 in the initial namespace) has no address space.
    if (auto s = bpf->take(); s)
        if (const snapshot_process* k = s->find(2); k && k->kernel_thread) {
            EXPECT_FALSE(k->memory);
            EXPECT_TRUE(k->open_files_limit);
        }
}
