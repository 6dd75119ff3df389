// SPDX-License-Identifier: MIT
// Raw task records as one walker of a snapshot source produces them, and the
// portable steps that turn walkers' records into one snapshot: the merge into
// pid order (src/snapshot_merge.cpp) and the copy of an idle process's
// threads from the previous snapshot (src/snapshot_reuse.cpp). No I/O and no
// platform code: a source fills walk_output, these functions do the rest.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <system_error>
#include <vector>

#include "proctimes/snapshot.hpp"

namespace proctimes::inline v1::detail {

/// The threads of one process read after it, by every walker together (a
/// process too big for one walker). slots[k] holds thread k once read;
/// present[k] says whether it was (0: it vanished or failed). A source may
/// derive from it to keep what it needs to read the threads.
struct thread_block {
    std::vector<snapshot_thread> slots;
    std::vector<unsigned char> present;
    virtual ~thread_block() = default;
};

/// snapshot_process::first_thread of a process whose threads are in a
/// thread_block of the same walk_output (thread_entries: its index in
/// walk_output::deferred) until the merge.
inline constexpr std::size_t deferred_threads = static_cast<std::size_t>(-1);

/// One walker's output. procs ascend by pid; each process's threads are
/// threads[first_thread, first_thread + thread_entries) (or deferred, above).
struct walk_output {
    std::vector<snapshot_process> procs;
    std::vector<snapshot_thread> threads;
    std::vector<snapshot_failure> failures;
    std::vector<std::unique_ptr<thread_block>> deferred;
    std::size_t vanished = 0;  // tasks that ended while being read
    std::size_t reused = 0;    // threads copied by copy_idle_threads()
    std::error_code fatal;     // the walker stopped (ENOMEM): the take fails

    /// Empties the output, keeping the vectors' capacity.
    void clear() noexcept {
        procs.clear();
        threads.clear();
        failures.clear();
        deferred.clear();
        vanished = 0;
        reused = 0;
        fatal = {};
    }
    void fail(pid_t pid, pid_t tid, snapshot_item item, std::error_code ec) {
        failures.push_back(snapshot_failure{pid, tid, item, ec});
    }
};

/// Assembles the walkers' outputs into `out`: processes in ascending pid
/// order with their threads contiguous, failures ordered by (pid, tid),
/// vanished and reused_threads summed. Every part is cleared; with one part
/// the vectors are swapped, not copied (out's old buffers become the part's).
/// Throws std::bad_alloc.
void merge_walks(snapshot& out, std::span<walk_output* const> parts);

/// Copies the threads of process `p` (just read, with CPU total `total` from
/// a source of cpu_source `exact`, thread ids `tids` ascending) from
/// `previous` into out when the process has not run since: same identity,
/// the same total to the nanosecond from the same exact source, the same
/// thread ids. The previous total was read before the previous thread reads,
/// so nothing those reads saw has moved. The copies get sampled_at = `taken`;
/// p is appended to out.procs with threads_copied set. Returns whether it
/// copied (if not, nothing was appended). Throws std::bad_alloc.
bool copy_idle_threads(const snapshot& previous, snapshot_process& p, std::chrono::nanoseconds total, cpu_source exact,
                       std::span<const pid_t> tids, instant taken, walk_output& out);

}  // namespace proctimes::inline v1::detail
