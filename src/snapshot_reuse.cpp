// SPDX-License-Identifier: MIT
// Copying an idle process's threads from the previous snapshot instead of
// reading them again (snapshot_options::reuse_idle_threads_for). See
// src/snapshot_records.hpp.
#include "snapshot_records.hpp"

namespace proctimes::inline v1::detail {

bool copy_idle_threads(const snapshot& previous, snapshot_process& p, std::chrono::nanoseconds total, cpu_source exact,
                       std::span<const pid_t> tids, instant taken, walk_output& out) {
    const snapshot_process* before = previous.find(p.pid());
    // Only an exact total proves the process has not run: equal tick counts
    // hide up to 10 ms of work.
    if (!before || before->identity != p.identity || before->times.precision.source != exact ||
        before->times.kernel + before->times.user != total)
        return false;
    const auto threads = previous.threads_of(*before);
    if (threads.size() != tids.size()) return false;
    for (std::size_t i = 0; i < threads.size(); ++i)
        if (threads[i].tid() != tids[i]) return false;
    for (snapshot_thread t : threads) {
        t.times.sampled_at = taken;
        out.threads.push_back(t);
    }
    out.reused += threads.size();
    p.thread_entries = threads.size();
    p.threads_copied = true;
    out.procs.push_back(p);
    return true;
}

}  // namespace proctimes::inline v1::detail
