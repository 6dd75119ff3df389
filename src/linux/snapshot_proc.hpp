// SPDX-License-Identifier: MIT
// Internals of the /proc snapshot source, shared by its two files:
// src/linux/snapshot_read.cpp reads one task's records, and
// src/linux/snapshot.cpp walks /proc and shares the reads out over
// walkers. Linux only.
//
// Identity without pidfds. Each per-task read goes through ONE descriptor
// opened by pid number; a successful pread proves the task it was opened on
// was still alive at that moment, so the number could not yet name another
// task. Everything else looked up by number — the task/ directory, the
// directory owner, the process CPU clock — is therefore taken between that
// open and that pread. Descriptors of task/ and of files under it stay bound
// to their process (lookups through them fail once it is gone).
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

#include "linux/sys.hpp"
#include "snapshot_records.hpp"

namespace proctimes::inline v1::detail::proc_snapshot {

inline constexpr std::size_t dents_buffer_size = std::size_t{64} * 1024;
// A process with at least this many threads has them read by all walkers
// (phase 2) instead of by the walker that found it: one big process would
// otherwise leave the other walkers idle.
inline constexpr std::size_t big_process_threads = 64;
// At most this many task/ descriptors are kept open for phase 2.
inline constexpr std::size_t max_big_processes = 64;

inline ssize_t getdents(int fd, char* buf, std::size_t cap) noexcept {
    long n;
    do {
        n = ::syscall(SYS_getdents64, fd, buf, cap);
    } while (n < 0 && errno == EINTR);
    return static_cast<ssize_t>(n);
}

// Everything the walk needs that does not change during it.
struct walk_config {
    int proc_fd = -1;
    bool procfs = false;  // proc_root is a procfs mount (file owners are real)
    bool live = false;    // ... and the caller's own (pids are the caller's)
    bool threads = false;
    bool precise_processes = false;
    bool precise_threads = false;
    bool defer_big = false;  // hand the threads of big processes to phase 2
    // The previous take() whose idle processes' threads may be copied
    // (snapshot_options::reuse_idle_threads_for), or null.
    const snapshot* reuse_from = nullptr;
    boot_id boot{};
    instant taken{};  // the snapshot's timestamp: every entry's sampled_at
    std::int64_t tick_ns = 10'000'000;
    cpu_precision ticks{}, clock{}, sched{};
};

// A process with many threads, whose threads all walkers read together in
// phase 2 through its kept task/ descriptor (slots[k] is tids[k]).
struct big_process : thread_block {
    pid_t pid = 0;
    unique_fd task;
    std::vector<pid_t> tids;
};

// One walker's reused state and output.
struct worker {
    char buf[small_file_max];
    std::unique_ptr<char[]> dents;
    std::vector<pid_t> tids;
    walk_output out;

    bool ensure_buffer() noexcept {
        if (!dents) dents.reset(new (std::nothrow) char[dents_buffer_size]);
        return dents != nullptr;
    }
};

enum class read_status { ok, vanished, failed };

// Phase 1: reads process `pid` into w.out, and its threads unless it is big
// enough to share out (then it goes to w.out.deferred; big_count counts those
// across walkers).
void read_process(worker& w, const walk_config& c, pid_t pid, std::atomic<std::size_t>& big_count);

// Reads thread `tid` of `pid` through the process's task/ descriptor into `t`;
// a failure is recorded in w.out.
read_status read_thread(worker& w, const walk_config& c, int task_fd, pid_t pid, pid_t tid, snapshot_thread& t);

}  // namespace proctimes::inline v1::detail::proc_snapshot
