// SPDX-License-Identifier: MIT
// The CPU ledger (proctimes/ledger.hpp): portable, pure over snapshots, exit
// records and /proc/stat readings.
#include "proctimes/ledger.hpp"

#include <algorithm>
#include <map>
#include <new>
#include <utility>

#include "proctimes/boot.hpp"
#include "proctimes/error.hpp"

namespace proctimes::inline v1 {
namespace {

using std::chrono::nanoseconds;

nanoseconds clamp0(nanoseconds d) noexcept { return d < nanoseconds{0} ? nanoseconds{0} : d; }

// The records of one life of a process id, in arrival order; `end` is the
// record of its last thread.
struct life {
    std::vector<const ended_task*> records;
    const ended_task* end = nullptr;
    const ended_task* leader = nullptr;
};

// What one ended process used in the interval, by mode, from its threads'
// records and what `before` read of it.
void account(const life& l, const snapshot& before, const snapshot_process* seen, nanoseconds tick,
             ended_process& out) {
    nanoseconds rec_k{}, rec_u{};
    for (const ended_task* r : l.records) {
        rec_k += r->kernel;
        rec_u += r->user;
    }
    // eBPF's end of a process carries the whole process's final totals (its
    // signal_struct's, every thread included, 1 ns): exact, where its
    // threads' records alone miss the threads that ended in earlier
    // intervals.
    const bool totals =
        l.end->exact && l.end->process_ended && (l.end->process_kernel + l.end->process_user) > nanoseconds{0};
    if (!seen) {
        out.kernel = out.final_kernel = totals ? l.end->process_kernel : rec_k;
        out.user = out.final_user = totals ? l.end->process_user : rec_u;
        return;
    }
    out.seen_before = true;
    out.start_ticks = seen->identity.start_ticks;
    out.name = seen->name;
    if (seen->uid != snapshot_process::unknown_uid) out.uid = seen->uid;
    const auto threads = before.threads_of(*seen);
    if (!threads.empty()) {
        // Exact: each thread that ended in the interval used its record minus
        // what `before` read of it (0 for a thread started since).
        for (const ended_task* r : l.records) {
            nanoseconds bk{}, bu{};
            for (const auto& t : threads)
                if (t.identity.id == r->tid) {
                    bk = t.times.kernel;
                    bu = t.times.user;
                    break;
                }
            const nanoseconds used = clamp0(r->cpu() - bk - bu);
            const nanoseconds k = std::min(clamp0(r->kernel - bk), used);
            out.kernel += k;
            out.user += used - k;
        }
    } else if (totals) {
        const nanoseconds used =
            clamp0(l.end->process_kernel + l.end->process_user - seen->times.kernel - seen->times.user);
        const nanoseconds k = std::min(clamp0(l.end->process_kernel - seen->times.kernel), used);
        out.kernel = k;
        out.user = used - k;
    } else if (l.end->whole_process && l.records.size() == 1) {
        const nanoseconds used = clamp0(l.end->cpu() - seen->times.kernel - seen->times.user);
        const nanoseconds k = std::min(clamp0(l.end->kernel - seen->times.kernel), used);
        out.kernel = k;
        out.user = used - k;
    } else {
        // Threads that ended before `before` are inside its reading but sent
        // no record here: records − reading is only a lower bound, of the
        // total: the records' split (each thread's ticks) is not the
        // reading's (the process's), so mode by mode one side can exceed it
        // while the other falls short.
        out.exact = false;
        const nanoseconds used = clamp0(rec_k + rec_u - seen->times.kernel - seen->times.user);
        out.kernel = std::min(clamp0(rec_k - seen->times.kernel), used);
        out.user = used - out.kernel;
    }
    (void)tick;
    out.final_kernel = seen->times.kernel + out.kernel;
    out.final_user = seen->times.user + out.user;
}

}  // namespace

result<cpu_ledger> compute_ledger(const snapshot& before, const snapshot& after, std::span<const ended_task> exits,
                                  const system_cpu_times& stat_before, const system_cpu_times& stat_after,
                                  nanoseconds reaped_children) noexcept {
    if (stat_after.since_boot < stat_before.since_boot) return make_error_code(errc::invalid_argument);
    auto delta = compute_delta(before, after);
    if (!delta) return delta.error();
    try {
        cpu_ledger l;
        l.interval = delta->interval;
        l.stat_interval = stat_after.since_boot - stat_before.since_boot;
        l.cpus = stat_after.cpus;
        l.busy = clamp0(stat_after.busy() - stat_before.busy());
        l.irq = clamp0(stat_after.irq - stat_before.irq);
        l.softirq = clamp0(stat_after.softirq - stat_before.softirq);
        l.steal = clamp0(stat_after.steal - stat_before.steal);
        l.guest = clamp0(stat_after.guest + stat_after.guest_nice - stat_before.guest - stat_before.guest_nice);
        l.reaped_children = reaped_children;
        for (const auto& d : delta->processes) l.live += d.cpu();

        const std::int64_t hz = clock_ticks_per_second();
        const nanoseconds tick{hz > 0 ? 1'000'000'000 / hz : 10'000'000};

        // Split each process id's records into lives: a life ends with the
        // record of its last thread. Records after the last end belong to a
        // process still running (its CPU is in `live`).
        std::map<pid_t, std::vector<life>> lives;
        std::vector<const ended_task*> in_window;
        in_window.reserve(exits.size());
        for (const auto& e : exits)
            if (e.received_since_boot > before.since_boot && e.received_since_boot <= after.since_boot)
                in_window.push_back(&e);
        std::stable_sort(in_window.begin(), in_window.end(), [](const ended_task* a, const ended_task* b) {
            return a->received_since_boot < b->received_since_boot;
        });
        for (const ended_task* e : in_window) {
            const pid_t pid = e->pid != 0 ? e->pid : (e->whole_process ? e->tid : 0);
            if (pid == 0) continue;  // a thread of an unknown process: cannot be placed
            auto& v = lives[pid];
            if (v.empty() || v.back().end) v.emplace_back();
            v.back().records.push_back(e);
            if (e->tid == pid) v.back().leader = e;
            if (e->process_ended) v.back().end = e;
        }

        std::vector<bool> matched(before.processes.size(), false);
        for (auto& [pid, v] : lives) {
            bool first = true;
            for (const auto& lf : v) {
                if (!lf.end) continue;
                const ended_task* dated = lf.leader ? lf.leader : lf.end;
                const nanoseconds start = dated->received_since_boot - dated->elapsed;
                const snapshot_process* seen = nullptr;
                const bool is_first = first;
                first = false;
                // The first life of a pid that `before` listed, begun before
                // `before` was taken, is that process: the pid was in use by it.
                // A life `before` did not list (begun after it, or during its
                // walk past that pid) counts whole: nobody counted any of it.
                if (is_first && start <= before.since_boot + tick) {
                    seen = before.find(pid);
                    if (seen) {
                        if (const auto* a = after.find(pid); a && a->identity.start_ticks == seen->identity.start_ticks)
                            continue;  // still alive: a stale end record cannot be its end
                        matched[static_cast<std::size_t>(seen - before.processes.data())] = true;
                    }
                }
                ended_process p;
                p.pid = pid;
                p.start_ticks = start > nanoseconds{0} ? static_cast<std::uint64_t>(start / tick) : 0;
                p.uid = dated->uid;
                p.name = dated->name;
                p.end_name = dated->name;
                p.parent_pid = lf.end->parent_pid != 0 ? lf.end->parent_pid : dated->parent_pid;
                p.ended_since_boot = lf.end->received_since_boot;
                p.creation = dated->creation;
                p.forked_no_exec = lf.leader != nullptr && lf.leader->forked_no_exec;
                p.command_line = lf.end->command_line;
                p.exit = lf.end->exit;
                for (const ended_task* r : lf.records)
                    if (!r->exit || !p.exit) {
                        p.exit.reset();
                        break;
                    } else if (*r->exit > *p.exit) {
                        p.exit = r->exit;
                    }
                account(lf, before, seen, tick, p);
                if (p.parent_pid == 0 && seen) p.parent_pid = seen->parent_pid;
                l.ended += p.cpu();
                l.processes.push_back(std::move(p));
            }
        }
        // Processes of `before` that are gone (not in `after` with the same
        // identity) and whose end no record gave.
        for (std::size_t i = 0; i < before.processes.size(); ++i) {
            if (matched[i]) continue;
            const auto& b = before.processes[i];
            const auto* a = after.find(b.pid());
            if (!a || a->identity.start_ticks != b.identity.start_ticks) ++l.ended_without_record;
        }
        l.unattributed = l.busy - l.attributed();
        return l;
    } catch (const std::bad_alloc&) {
        return std::error_code(ENOMEM, std::generic_category());
    }
}

}  // namespace proctimes::inline v1
