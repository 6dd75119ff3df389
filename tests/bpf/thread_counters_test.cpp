// SPDX-License-Identifier: MIT
// The eBPF snapshot's per-thread counters (snapshot_thread::counters) against
// the thread's own /proc files, and serve's use of them: a thread's faults,
// switches and storage I/O come from the walk, and only its wait channel is
// read; and the process-wide counters, which spare serve its status and io.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bpf_skip.hpp"
#include "file_text.hpp"
#include "proctimes/resources.hpp"
#include "proctimes/snapshot.hpp"

using namespace proctimes;

namespace {

using testing_helpers::file_text;

// Field n (proc(5) numbering, n >= 3) of a stat file.
std::uint64_t stat_field(const std::string& text, int n) {
    std::istringstream in(text.substr(text.rfind(')') + 2));
    std::string t;
    for (int i = 3; i <= n; ++i) in >> t;
    return std::stoull(t);
}

// The value after "key" in a "key: value" or "key:\tvalue" file.
std::uint64_t keyed(const std::string& text, const std::string& key) {
    const auto at = text.find("\n" + key);
    const std::size_t from = at == std::string::npos ? (text.rfind(key, 0) == 0 ? 0 : std::string::npos) : at + 1;
    if (from == std::string::npos) return UINT64_MAX;
    return std::stoull(text.substr(text.find(':', from) + 1));
}

// Touches `n` fresh pages: `n` minor faults of the calling thread.
void fault_in_pages(std::size_t n) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* m = ::mmap(nullptr, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    for (std::size_t i = 0; i < n; ++i) static_cast<volatile char*>(m)[i * page] = 1;
    ::munmap(m, n * page);
}

// A thread that faults in 512 fresh pages, sleeps 20 times (20 voluntary
// switches at least), writes a file, then waits on a pipe until released:
// while it waits, none of its counters can move.
class parked_thread {
public:
    parked_thread() {
        if (::pipe(fds_) != 0 || ::pipe(ready_) != 0) throw std::runtime_error("pipe");
        t_ = std::thread([this] {
            tid_ = ::gettid();
            fault_in_pages(512);
            for (int i = 0; i < 20; ++i) {
                const timespec ts{0, 100'000};
                ::nanosleep(&ts, nullptr);
            }
            char c = 0;
            (void)::write(ready_[1], &c, 1);
            (void)::read(fds_[0], &c, 1);
        });
    }
    ~parked_thread() {
        char c = 0;
        (void)::write(fds_[1], &c, 1);
        t_.join();
        for (int fd : {fds_[0], fds_[1], ready_[0], ready_[1]}) ::close(fd);
    }
    // Waits until it is parked (blocked in read) and returns its tid.
    pid_t wait_parked() {
        char c = 0;
        (void)::read(ready_[0], &c, 1);
        const std::string stat = "/proc/self/task/" + std::to_string(tid_) + "/stat";
        for (int i = 0; i < 2000; ++i) {
            const std::string s = file_text(stat);
            if (s.size() > s.rfind(')') + 2 && s[s.rfind(')') + 2] == 'S') break;
            ::usleep(1000);
        }
        return tid_;
    }

private:
    int fds_[2] = {-1, -1};
    int ready_[2] = {-1, -1};
    std::atomic<pid_t> tid_{0};
    std::thread t_;
};

}  // namespace

TEST(BpfSnapshot, ThreadCountersAreThoseOfItsProcFiles) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    parked_thread parked;
    const pid_t tid = parked.wait_parked();
    auto s = snapshotter::open({.source = snapshot_source::bpf, .threads = true});
    ASSERT_TRUE(s) << s.error().message();
    auto snap = s->take();
    ASSERT_TRUE(snap) << snap.error().message();
    const snapshot_process* me = snap->find(::getpid());
    ASSERT_NE(me, nullptr);
    const snapshot_thread* t = nullptr;
    for (const auto& th : snap->threads_of(*me))
        if (th.tid() == tid) t = &th;
    ASSERT_NE(t, nullptr);
    ASSERT_TRUE(t->counters.has_value());
    const task_counters& c = *t->counters;

    // It has not run since it parked: each counter is exactly its file's.
    const std::string dir = "/proc/self/task/" + std::to_string(tid) + "/";
    const std::string stat = file_text(dir + "stat"), status = file_text(dir + "status"), io = file_text(dir + "io");
    EXPECT_EQ(c.minor_faults, stat_field(stat, 10));
    EXPECT_EQ(c.major_faults, stat_field(stat, 12));
    EXPECT_EQ(c.voluntary_switches, keyed(status, "voluntary_ctxt_switches"));
    EXPECT_EQ(c.involuntary_switches, keyed(status, "nonvoluntary_ctxt_switches"));
    ASSERT_TRUE(c.read_bytes.has_value());  // Debian's kernels count storage I/O
    EXPECT_EQ(*c.read_bytes, keyed(io, "read_bytes"));
    EXPECT_EQ(*c.write_bytes, keyed(io, "write_bytes"));
    // And they are its own: the pages it touched, the sleeps it took.
    EXPECT_GE(c.minor_faults, 512u);
    EXPECT_GE(c.voluntary_switches, 20u);
    // The walk's other threads have theirs too; /proc's walk reads none.
    for (const auto& th : snap->threads_of(*me)) EXPECT_TRUE(th.counters.has_value()) << th.tid();
    auto procfs = take_snapshot({.source = snapshot_source::procfs, .threads = true});
    ASSERT_TRUE(procfs);
    for (const auto& th : procfs->threads) EXPECT_FALSE(th.counters.has_value()) << th.tid();
}

TEST(Resources, KnownThreadsAreTakenAndOnlyTheirWaitChannelRead) {
    parked_thread parked;
    const pid_t tid = parked.wait_parked();
    // What the caller says it knows of the thread: values no file holds, so
    // that taking them shows no file of the thread's but wchan was read.
    resource_thread known;
    known.id = tid;
    known.start_ticks = 7;
    known.name = "known-thread";
    known.state = 'S';
    known.user_ticks = 11;
    known.system_ticks = 13;
    known.minor_faults = 123456789;
    known.major_faults = 17;
    known.switches = resource_switches{1000001, 1000003};
    known.io = resource_io{19, 23, {}, {}, {}, {}};
    const std::vector<resource_thread> list{known};

    resource_options o;
    o.families = resource_family::threads | resource_family::thread_io;
    o.known_threads = &list;
    // It waits in a pipe read; on a loaded machine it may not be back there
    // at once after its wake-up check, so the read is retried for a while.
    auto parked_wchan = [&](const process_resources& pr) {
        for (const auto& t : pr.threads)
            if (t.id == tid && t.wait_channel && t.wait_channel->find("pipe") != std::string::npos) return true;
        return false;
    };
    auto r = read_process_resources(::getpid(), o);
    for (int i = 0; i < 200 && r && !parked_wchan(*r); ++i) {
        ::usleep(10'000);
        r = read_process_resources(::getpid(), o);
    }
    ASSERT_TRUE(r) << r.error().message();
    bool saw_known = false, saw_other = false;
    for (const auto& t : r->threads) {
        if (t.id == tid) {
            saw_known = true;
            EXPECT_EQ(t.minor_faults, 123456789u);
            EXPECT_EQ(t.name, "known-thread");
            EXPECT_EQ(t.start_ticks, 7u);
            ASSERT_TRUE(t.switches);
            EXPECT_EQ(t.switches->voluntary, 1000001u);
            ASSERT_TRUE(t.io);
            EXPECT_EQ(t.io->write_bytes, 23u);
            // Its wait channel is read: it waits in a pipe read.
            ASSERT_TRUE(t.wait_channel);
            EXPECT_NE(t.wait_channel->find("pipe"), std::string::npos) << *t.wait_channel;
        } else {
            saw_other = true;  // every other thread is read from its files
            EXPECT_LT(t.minor_faults, 123456789u);
            EXPECT_TRUE(t.switches);
        }
    }
    EXPECT_TRUE(saw_known);
    EXPECT_TRUE(saw_other);
    // Without wait channels asked for, nothing of the known thread is read.
    o.families = resource_family::threads;
    r = read_process_resources(::getpid(), o);
    ASSERT_TRUE(r);
    for (const auto& t : r->threads)
        if (t.id == tid) EXPECT_FALSE(t.wait_channel.has_value());
}

// A process's counters (snapshot_process::counters) as its own /proc files
// give them: faults and I/O of all its threads, the ended ones' included
// (what the kernel keeps in signal_struct), and its main thread's switches.
// This process's main thread runs while the snapshot is taken, so each value
// lies between the files read before and after it.
TEST(BpfSnapshot, ProcessCountersAreThoseOfItsProcFiles) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    // A thread that faults in 512 pages and writes 64 KiB, then ends: only
    // the process's totals keep what it did.
    std::atomic<pid_t> ended{0};
    std::atomic<std::uint64_t> ended_written{0};  // its own io write_bytes as it ends (0 on tmpfs)
    std::thread([&ended, &ended_written] {
        ended = ::gettid();
        fault_in_pages(512);
        char name[] = "pt-counters-XXXXXX";
        const int fd = ::mkstemp(name);
        if (fd >= 0) {
            const std::string block(65536, 'x');
            (void)::write(fd, block.data(), block.size());
            ::unlink(name);
            ::close(fd);
        }
        ended_written = keyed(file_text("/proc/thread-self/io"), "write_bytes");
    }).join();
    // The join returns before the kernel has released the thread and added
    // its counters to the process's: wait until its task entry is gone.
    const std::string gone = "/proc/self/task/" + std::to_string(ended.load());
    for (int i = 0; i < 2000 && ::access(gone.c_str(), F_OK) == 0; ++i) ::usleep(1000);
    ASSERT_NE(::access(gone.c_str(), F_OK), 0) << "the ended thread was never released";
    parked_thread parked;
    parked.wait_parked();
    auto s = snapshotter::open({.source = snapshot_source::bpf, .threads = true});
    ASSERT_TRUE(s) << s.error().message();

    const std::string stat0 = file_text("/proc/self/stat"), status0 = file_text("/proc/self/status"),
                      io0 = file_text("/proc/self/io");
    auto snap = s->take();
    ASSERT_TRUE(snap) << snap.error().message();
    const std::string stat1 = file_text("/proc/self/stat"), status1 = file_text("/proc/self/status"),
                      io1 = file_text("/proc/self/io");
    const snapshot_process* me = snap->find(::getpid());
    ASSERT_NE(me, nullptr);
    ASSERT_TRUE(me->counters.has_value());
    const task_counters& c = *me->counters;
    auto between = [](std::uint64_t v, std::uint64_t lo, std::uint64_t hi) { return lo <= v && v <= hi; };
    EXPECT_PRED3(between, c.minor_faults, stat_field(stat0, 10), stat_field(stat1, 10));
    EXPECT_PRED3(between, c.major_faults, stat_field(stat0, 12), stat_field(stat1, 12));
    EXPECT_PRED3(between, c.voluntary_switches, keyed(status0, "voluntary_ctxt_switches"),
                 keyed(status1, "voluntary_ctxt_switches"));
    EXPECT_PRED3(between, c.involuntary_switches, keyed(status0, "nonvoluntary_ctxt_switches"),
                 keyed(status1, "nonvoluntary_ctxt_switches"));
    ASSERT_TRUE(c.read_bytes.has_value());  // Debian's kernels count storage I/O
    EXPECT_PRED3(between, *c.read_bytes, keyed(io0, "read_bytes"), keyed(io1, "read_bytes"));
    EXPECT_PRED3(between, *c.write_bytes, keyed(io0, "write_bytes"), keyed(io1, "write_bytes"));

    // The switches are the main thread's own; the faults and I/O are more
    // than the live threads' by what the ended ones did.
    std::uint64_t live_faults = 0, live_written = 0;
    for (const auto& th : snap->threads_of(*me)) {
        ASSERT_TRUE(th.counters.has_value());
        live_faults += th.counters->minor_faults;
        live_written += th.counters->write_bytes.value_or(0);
        if (th.tid() == ::getpid()) EXPECT_EQ(th.counters->voluntary_switches, c.voluntary_switches);
    }
    EXPECT_GE(c.minor_faults, live_faults + 512);
    EXPECT_GE(*c.write_bytes, live_written + ended_written.load());
    // /proc's snapshot reads none of them.
    auto procfs = take_snapshot({.source = snapshot_source::procfs});
    ASSERT_TRUE(procfs);
    for (const auto& p : procfs->processes) EXPECT_FALSE(p.counters.has_value()) << p.pid();
}

TEST(Resources, KnownProcessValuesAreTakenAndStatusAndIoNotRead) {
    // Values no file holds: a read that returns them took them.
    resource_known known;
    known.switches = resource_switches{1000001, 1000003};
    known.io = resource_io{19, 23, 1, 2, 3, 4};
    known.swap_bytes = 29;
    resource_options o;
    o.families = resource_family::memory | resource_family::switches | resource_family::io;
    o.known = &known;
    auto r = read_process_resources(::getpid(), o);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->switches && r->memory && r->io);
    EXPECT_EQ(r->switches->voluntary, 1000001u);
    EXPECT_EQ(r->switches->involuntary, 1000003u);
    EXPECT_EQ(r->memory->swap_bytes, 29u);
    EXPECT_GT(r->memory->resident_bytes, 0u);  // still stat's
    EXPECT_EQ(r->io->read_bytes, 19u);
    EXPECT_EQ(r->io->write_bytes, 23u);
    EXPECT_FALSE(r->io->read_chars || r->io->write_chars || r->io->read_calls || r->io->write_calls);
    EXPECT_EQ(r->missing, resource_family::none);

    // The owner is only in status: then status is read, and its switches are taken.
    o.families |= resource_family::owner;
    r = read_process_resources(::getpid(), o);
    ASSERT_TRUE(r && r->switches && r->owner);
    EXPECT_LT(r->switches->voluntary, 1000001u);
    EXPECT_EQ(r->owner->effective, ::geteuid());
    // So it is without the swap known while memory is asked.
    known.swap_bytes.reset();
    o.families = resource_family::memory | resource_family::switches;
    r = read_process_resources(::getpid(), o);
    ASSERT_TRUE(r && r->switches && r->memory);
    EXPECT_LT(r->switches->voluntary, 1000001u);
    EXPECT_NE(r->memory->swap_bytes, 29u);
    // Without memory asked, the switches alone are enough.
    o.families = resource_family::switches;
    r = read_process_resources(::getpid(), o);
    ASSERT_TRUE(r && r->switches);
    EXPECT_EQ(r->switches->voluntary, 1000001u);
}
