// SPDX-License-Identifier: MIT
// The eBPF snapshot source (docs/BPF.md): fills a proctimes::snapshot from one
// read of the bpf_iter/task program (task_iter.bpf.c). Used by the snapshotter
// (src/linux/snapshot.cpp) when snapshot_options::source allows it; built
// only with PROCTIMES_BPF (else src/linux/bpf/unavailable.cpp says so).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "proctimes/snapshot.hpp"

namespace proctimes::inline v1::detail {

/// The loaded and attached task iterator, shared by every snapshotter of the
/// process (loaded by the first, unloaded with the last: the link and the
/// programs belong to the process and go away with it, even after a crash;
/// nothing is pinned).
struct bpf_task_iter;

class bpf_snapshot_source {
public:
    /// For a snapshotter with `options` on the caller's live /proc (`live`):
    /// the source when options.source is automatic or bpf and the iterator
    /// can be used; an empty source (the /proc walk is used) otherwise, with
    /// the reason kept for bpf_snapshot_status(). ENOMEM when memory for
    /// either runs out.
    static result<bpf_snapshot_source> open(const snapshot_options& options, bool live) noexcept;

    bpf_snapshot_source() noexcept;
    bpf_snapshot_source(bpf_snapshot_source&&) noexcept;
    bpf_snapshot_source& operator=(bpf_snapshot_source&&) noexcept;
    ~bpf_snapshot_source();

    explicit operator bool() const noexcept { return iter_ != nullptr; }

    /// Overwrites `out` (reusing its capacity) with every task of the system.
    /// Errors: the boot anchor's, the iterator's read errno, malformed_data,
    /// ENOMEM.
    result<void> take(snapshot& out, const snapshot_options& options) noexcept;

    /// The size of the task walk's ring buffer (0: no walk, the iterator
    /// reads the tasks). Sized at load for four times the tasks there are,
    /// and loaded again larger after a walk that did not fit.
    [[nodiscard]] std::size_t walk_ring_bytes() const noexcept;

    struct buffers;

private:
    std::shared_ptr<bpf_task_iter> iter_;
    std::unique_ptr<buffers> buf_;
};

}  // namespace proctimes::inline v1::detail
