// SPDX-License-Identifier: MIT
// The eBPF walk's memory and open-files limit of a process
// (snapshot_process::memory, ::open_files_limit) against its /proc files and
// prlimit(2): what spares serve every file of a member that did not run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
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

// This process (16 MiB more resident, a soft limit of 777 files), a child
// that sleeps with 8 MiB resident and an unlimited limit, and pid 1: each
// one's walk values are its files', read before and after the walk while
// they did not move (a try where they moved is repeated). A kernel thread
// has no address space: no memory.
TEST(BpfSnapshot, ProcessMemoryAndFilesLimitAreThoseOfItsProcFiles) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    constexpr std::size_t mine = 16u << 20;
    auto* mem = static_cast<char*>(::mmap(nullptr, mine, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(mem, MAP_FAILED);
    for (std::size_t i = 0; i < mine; i += 4096) mem[i] = 1;
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
    rlimit lim = saved;
    lim.rlim_cur = 777;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lim), 0);
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        rlimit inf{RLIM_INFINITY, RLIM_INFINITY};
        (void)::setrlimit(RLIMIT_NOFILE, &inf);  // root: raises the hard limit too; else stays
        auto* m = static_cast<char*>(::malloc(8u << 20));
        for (std::size_t i = 0; m && i < (8u << 20); i += 4096) m[i] = 2;
        char c = 0;
        (void)!::write(ready[1], &c, 1);
        for (;;) ::pause();
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    auto bpf = snapshotter::open({.source = snapshot_source::bpf});
    ASSERT_TRUE(bpf) << bpf.error().message();
    const std::vector<pid_t> pids{::getpid(), child, 1};
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
        const snapshot_process* self = s->find(::getpid());
        ASSERT_NE(self, nullptr);
        EXPECT_GE(self->memory->resident_bytes, mine);
        EXPECT_EQ(*self->open_files_limit, 777u);
        compared = true;
    }
    EXPECT_TRUE(compared) << "the processes' memory moved between every read";
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    (void)::setrlimit(RLIMIT_NOFILE, &saved);
    ::munmap(mem, mine);
    ::close(ready[0]);
    ::close(ready[1]);
    // kthreadd (pid 2 in the initial namespace) has no address space.
    if (auto s = bpf->take(); s)
        if (const snapshot_process* k = s->find(2); k && k->kernel_thread) {
            EXPECT_FALSE(k->memory);
            EXPECT_TRUE(k->open_files_limit);
        }
}
