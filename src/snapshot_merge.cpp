// SPDX-License-Identifier: MIT
// Merging the records of a snapshot's walkers into one snapshot in pid order.
// See src/snapshot_records.hpp.
#include "snapshot_records.hpp"

#include <algorithm>

namespace proctimes::inline v1::detail {

void merge_walks(snapshot& out, std::span<walk_output* const> parts) {
    out.vanished = 0;
    out.reused_threads = 0;
    const std::size_t used = parts.size();
    if (used == 1) {
        // The common case: hand over the vectors; `out`'s old ones become the
        // walker's buffers for the next walk.
        walk_output& w = *parts.front();
        std::swap(out.processes, w.procs);
        std::swap(out.threads, w.threads);
        std::swap(out.failures, w.failures);
        out.vanished = w.vanished;
        out.reused_threads = w.reused;
        w.clear();
        return;
    }
    std::size_t np = 0, nt = 0, nf = 0;
    for (const walk_output* w : parts) {
        np += w->procs.size();
        nt += w->threads.size();
        nf += w->failures.size();
        out.vanished += w->vanished;
        out.reused_threads += w->reused;
        for (const auto& block : w->deferred) nt += block->slots.size();
    }
    out.processes.clear();
    out.threads.clear();
    out.failures.clear();
    out.processes.reserve(np);
    out.threads.reserve(nt);
    out.failures.reserve(nf);
    // Each walker's processes ascend (pids are taken in order); merge them.
    std::vector<std::size_t> pos(used, 0);
    for (;;) {
        std::size_t best = used;
        for (std::size_t i = 0; i < used; ++i) {
            if (pos[i] < parts[i]->procs.size() &&
                (best == used || parts[i]->procs[pos[i]].pid() < parts[best]->procs[pos[best]].pid()))
                best = i;
        }
        if (best == used) break;
        const walk_output& w = *parts[best];
        snapshot_process p = w.procs[pos[best]++];
        if (p.first_thread == deferred_threads) {
            const thread_block& block = *w.deferred[p.thread_entries];
            p.first_thread = out.threads.size();
            for (std::size_t k = 0; k < block.slots.size(); ++k)
                if (block.present[k]) out.threads.push_back(block.slots[k]);
            p.thread_entries = out.threads.size() - p.first_thread;
        } else {
            const auto* t = w.threads.data() + p.first_thread;
            p.first_thread = out.threads.size();
            out.threads.insert(out.threads.end(), t, t + p.thread_entries);
        }
        out.processes.push_back(p);
    }
    for (const walk_output* w : parts) out.failures.insert(out.failures.end(), w->failures.begin(), w->failures.end());
    std::stable_sort(out.failures.begin(), out.failures.end(),
                     [](const snapshot_failure& a, const snapshot_failure& b) {
                         return a.pid != b.pid ? a.pid < b.pid : a.tid < b.tid;
                     });
    for (walk_output* w : parts) w->clear();
}

}  // namespace proctimes::inline v1::detail
