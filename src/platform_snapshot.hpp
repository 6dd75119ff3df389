// SPDX-License-Identifier: MIT
// The platform seam, snapshots: what a backend supplies so that the portable
// snapshotter (src/snapshot.cpp) can take whole-system snapshots. Included by
// src/platform.hpp. Portable code includes this header, never a header of a
// backend's folder.
//
// The model. A *snapshot source* reads one snapshot's raw task records —
// every process, and on request every thread, with their ids, names, owner,
// creation tick and CPU times — into a proctimes::snapshot. The portable part
// owns everything around that: when a snapshot is taken, whether the threads
// of an idle process may be copied from the previous snapshot
// (snapshot_options::reuse_idle_threads_for), clearing a snapshot whose take
// failed, and the deltas between two snapshots (src/snapshot_delta.cpp).
// Portable helpers a source may use: src/worker_pool.hpp (share a walk out
// over threads), src/snapshot_records.hpp (per-walker output, the merge into
// pid order, the copy of an idle process's threads).
//
// Sources today:
//  - /proc (src/linux/snapshot_walk.cpp): one walk over /proc, optionally by
//    two walkers; the default on Linux.
//  - stub (src/stub/snapshot.cpp): no source; open_snapshot_source answers
//    errc::not_supported.
// A further source (e.g. a BPF task iterator reading every task in one read)
// implements snapshot_source next to /proc: the same records, the same
// snapshot fields, the same contract below; open_snapshot_source (or a
// caller that chooses among sources) returns it. Nothing portable changes.
#pragma once

#include <memory>

#include "proctimes/result.hpp"
#include "proctimes/snapshot.hpp"

namespace proctimes::inline v1::detail {

/// One source of whole-system snapshots. A snapshotter owns one and calls it
/// from one thread at a time; a source need not be thread-safe itself (it may
/// use threads inside take()).
class snapshot_source {
public:
    virtual ~snapshot_source() = default;

    /// Stamps the snapshot about to be taken: out.taken (the instant every
    /// entry's sampled_at shares), out.since_boot (the same instant on the
    /// boot-relative clock that start ticks count), out.boot. Called first in
    /// every take. Errors: the boot anchor is unknown (error of
    /// get_boot_anchor()).
    [[nodiscard]] virtual result<void> stamp(snapshot& out) noexcept = 0;

    /// Whether this source's process CPU totals are exact to the nanosecond
    /// (a CPU clock, not 10 ms ticks), with this snapshotter's options. Only
    /// then does an unchanged total prove that a process has not run, so that
    /// its threads may be copied from the previous snapshot.
    [[nodiscard]] virtual bool exact_process_totals() const noexcept = 0;

    /// Reads every task into `out` (stamped by stamp()): out.processes in
    /// ascending pid order, their threads (when out.has_threads) contiguous in
    /// out.threads at first_thread, in ascending tid order; out.failures in
    /// (pid, tid) order; out.vanished, out.reused_threads, out.workers,
    /// out.walk_duration. `reuse_from`, when not null, is the previous
    /// snapshot of this snapshotter (same boot, taken with threads): a process
    /// whose identity, exact total and thread ids are unchanged since it may
    /// have its threads copied from it (see copy_idle_threads()) instead of
    /// read. Returns an error only when the walk as a whole failed (ENOMEM, an
    /// unreadable root); per-task problems go to out.failures. `out`'s vectors
    /// may be swapped with the source's buffers (capacity is kept, contents
    /// are not).
    [[nodiscard]] virtual result<void> take(snapshot& out, const snapshot* reuse_from) noexcept = 0;
};

/// The backend's hook: opens the snapshot source for `options` (proc_root,
/// threads, cpu, workers). Errors as snapshotter::open() documents; the stub
/// backend returns errc::not_supported.
[[nodiscard]] result<std::unique_ptr<snapshot_source>> open_snapshot_source(const snapshot_options& options) noexcept;

}  // namespace proctimes::inline v1::detail
