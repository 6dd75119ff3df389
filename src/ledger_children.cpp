// SPDX-License-Identifier: MIT
// The CPU ledger's reaped children (proctimes/ledger.hpp, compute_ledger with
// children_from_snapshots): the growth of each parent's cutime/cstime, less
// what other terms of the ledger (or earlier intervals) already hold.
#include <algorithm>
#include <new>
#include <unordered_map>

#include "proctimes/error.hpp"
#include "proctimes/ledger.hpp"

namespace proctimes::inline v1 {
namespace {

using std::chrono::nanoseconds;

nanoseconds clamp0(nanoseconds d) noexcept { return d < nanoseconds{0} ? nanoseconds{0} : d; }

}  // namespace

result<cpu_ledger> compute_ledger(const snapshot& before, const snapshot& after, std::span<const ended_task> exits,
                                  const system_cpu_times& stat_before, const system_cpu_times& stat_after,
                                  children_from_snapshots_t) noexcept {
    auto r = compute_ledger(before, after, exits, stat_before, stat_after, nanoseconds{0});
    if (!r) return r;
    try {
        cpu_ledger& l = *r;
        // Each parent of `after` whose children grew: its account, by pid.
        std::unordered_map<pid_t, std::size_t> account_of;
        for (const auto& a : after.processes) {
            if (!a.children_kernel || !a.children_user) {
                ++l.children_unknown;
                continue;
            }
            nanoseconds k = *a.children_kernel, u = *a.children_user;
            const auto* b = before.find(a.pid());
            if (b && b->identity.start_ticks == a.identity.start_ticks) {
                if (!b->children_kernel || !b->children_user) {
                    ++l.children_unknown;
                    continue;
                }
                k = clamp0(k - *b->children_kernel);
                u = clamp0(u - *b->children_user);
            }
            // (Not in `before`: created in the interval, so every child it
            // reaped ran in the interval too.)
            if (k + u <= nanoseconds{0}) continue;
            account_of.emplace(a.pid(), l.children.size());
            l.children.push_back({a.pid(), a.identity.start_ticks, k, u, k + u});
        }

        // The parent of each process that is gone: from its exit record, else
        // as `before` saw it. A gone process's own parent may be gone too:
        // what it reaped reached the nearest ancestor still alive (if that
        // ancestor waited for it in turn).
        std::unordered_map<pid_t, pid_t> parent_of_gone;
        auto gone = [&](const snapshot_process& b) {
            const auto* a = after.find(b.pid());
            return !a || a->identity.start_ticks != b.identity.start_ticks;
        };
        for (const auto& b : before.processes)
            if (gone(b)) parent_of_gone[b.pid()] = b.parent_pid;
        for (const auto& e : l.processes) parent_of_gone[e.pid] = e.parent_pid;
        auto reaper = [&](pid_t parent) -> children_account* {
            for (int depth = 0; depth < 64 && parent > 0; ++depth) {
                if (auto it = account_of.find(parent); it != account_of.end()) return &l.children[it->second];
                if (after.find(parent)) return nullptr;  // alive, and its children did not grow
                auto up = parent_of_gone.find(parent);
                if (up == parent_of_gone.end() || up->second == parent) return nullptr;
                parent = up->second;
            }
            return nullptr;
        };
        auto charge = [&](pid_t parent, nanoseconds amount) {
            if (auto* acc = reaper(parent)) acc->counted = clamp0(acc->counted - amount);
        };
        // Used before the interval (counted then, as `live`): what `before`
        // read of each process that is gone, with its own reaped children,
        // charged to the parent that reaped it: its exit record's (an orphan
        // goes to init or a subreaper), else the one `before` saw.
        std::unordered_map<pid_t, pid_t> reaped_by;
        for (const auto& e : l.processes)
            if (e.parent_pid > 0) reaped_by.try_emplace(e.pid, e.parent_pid);  // the first life: the one `before` saw
        for (const auto& b : before.processes) {
            if (!gone(b)) continue;
            const auto r = reaped_by.find(b.pid());
            charge(r != reaped_by.end() ? r->second : b.parent_pid, b.times.kernel + b.times.user +
                                                                        b.children_kernel.value_or(nanoseconds{0}) +
                                                                        b.children_user.value_or(nanoseconds{0}));
        }
        // Counted in `ended` from its records: its CPU inside the interval.
        for (const auto& e : l.processes) charge(e.parent_pid, e.cpu());

        for (const auto& c : l.children) l.reaped_children += c.counted;
        l.unattributed = l.busy - l.attributed();
        return r;
    } catch (const std::bad_alloc&) {
        return std::error_code(ENOMEM, std::generic_category());
    }
}

}  // namespace proctimes::inline v1
