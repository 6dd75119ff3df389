// SPDX-License-Identifier: MIT
#include "serve/collect/reaped.hpp"
#include "serve/collect/arith.hpp"

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace proctimes::cli::serve {
namespace {

using std::chrono::nanoseconds;

// `whole` × num / den, without overflow.
nanoseconds scaled(nanoseconds whole, std::int64_t num, std::int64_t den) {
    if (den <= 0) return nanoseconds{0};
    return nanoseconds(static_cast<std::int64_t>(static_cast<long double>(whole.count()) *
                                                 static_cast<long double>(num) / static_cast<long double>(den)));
}

// Deeper chains of gone parents than this are not followed (a bound on the
// walk; as the ledger's own).
constexpr int max_ancestry_depth = 64;

struct account {
    nanoseconds* carry = nullptr;
    nanoseconds kernel{}, user{};  // growth of its children's times
    nanoseconds charged{};         // what the records and earlier readings hold of them
    std::vector<destination> to;   // where each process charged to it went
};

}  // namespace

std::vector<reaped_share> reaped_rest(const reaped_inputs& in) {
    std::unordered_map<pid_t, account> accounts;
    for (const auto& a : in.after.processes) {
        if (!a.children_kernel || !a.children_user) continue;
        nanoseconds k = *a.children_kernel, u = *a.children_user;
        const snapshot_process* b = in.before.find(a.pid());
        if (b && b->identity.start_ticks == a.identity.start_ticks) {
            if (!b->children_kernel || !b->children_user) continue;
            k = clamp0(k - *b->children_kernel);
            u = clamp0(u - *b->children_user);
        }
        // (Not in `before`: it began since, and reaped all it has in the interval.)
        nanoseconds* carry = in.carry_of ? in.carry_of(a) : nullptr;
        if (!carry) continue;
        accounts.emplace(a.pid(), account{carry, k, u, {}, {}});
    }
    if (accounts.empty()) return {};

    // The parent of each process that is gone: from its exit record, else as
    // `before` saw it. A gone parent's children were reaped by it, and its
    // own final times reached its nearest live ancestor with them.
    const auto gone = [&](const snapshot_process& b) {
        const auto* a = in.after.find(b.pid());
        return !a || a->identity.start_ticks != b.identity.start_ticks;
    };
    std::unordered_map<pid_t, pid_t> parent_of_gone;
    for (const auto& b : in.before.processes)
        if (gone(b)) parent_of_gone[b.pid()] = b.parent_pid;
    for (const auto& e : in.ended)
        if (e.parent_pid > 0) parent_of_gone[e.pid] = e.parent_pid;
    const auto reaper = [&](pid_t parent) -> account* {
        for (int depth = 0; depth < max_ancestry_depth && parent > 0; ++depth) {
            if (auto it = accounts.find(parent); it != accounts.end()) return &it->second;
            if (in.after.find(parent)) return nullptr;  // alive, and not tracked
            const auto up = parent_of_gone.find(parent);
            if (up == parent_of_gone.end() || up->second == parent) return nullptr;
            parent = up->second;
        }
        return nullptr;
    };

    // Held already: what `before` read of each process that is gone (its own
    // reaped children included), and each ended process's CPU in the interval.
    // Its record's parent (the real one when it ended) over the one `before`
    // saw: an orphan was reaped by whoever adopted it.
    std::map<std::pair<pid_t, std::uint64_t>, pid_t> parent_at_end;
    for (const auto& e : in.ended)
        if (e.seen_before && e.parent_pid > 0) parent_at_end[{e.pid, e.start_ticks}] = e.parent_pid;
    for (const auto& b : in.before.processes) {
        if (!gone(b)) continue;
        const auto at_end = parent_at_end.find({b.pid(), b.identity.start_ticks});
        account* acc = reaper(at_end != parent_at_end.end() ? at_end->second : b.parent_pid);
        if (!acc) continue;
        acc->charged += b.times.kernel + b.times.user + b.children_kernel.value_or(nanoseconds{0}) +
                        b.children_user.value_or(nanoseconds{0});
        acc->to.push_back(in.gone_to ? in.gone_to(b) : destination{});
    }
    for (const auto& e : in.ended) {
        account* acc = reaper(e.parent_pid);
        if (!acc) continue;
        acc->charged += e.cpu();
        // One `before` listed was counted with its reading above.
        if (!e.seen_before) acc->to.push_back(in.unseen_to ? in.unseen_to(e) : destination{});
    }

    std::vector<reaped_share> out;
    for (auto& [pid, acc] : accounts) {
        const nanoseconds grown = acc.kernel + acc.user;
        const nanoseconds rest = grown - acc.charged + *acc.carry;
        if (rest <= nanoseconds{0}) {
            *acc.carry = rest;
            continue;
        }
        *acc.carry = nanoseconds{0};
        const nanoseconds rest_k = grown > nanoseconds{0} ? scaled(rest, acc.kernel.count(), grown.count()) : rest;
        const nanoseconds rest_u = rest - rest_k;
        if (acc.to.empty()) {
            out.push_back({destination{}, rest_k, rest_u});
            continue;
        }
        // Equal shares, by destination; the last takes what rounding left.
        std::map<destination, std::int64_t> count;
        for (const auto& d : acc.to) ++count[d];
        const auto n = static_cast<std::int64_t>(acc.to.size());
        std::int64_t done = 0;
        nanoseconds given_k{}, given_u{};
        for (const auto& [d, c] : count) {
            done += c;
            const nanoseconds k = done == n ? rest_k - given_k : scaled(rest_k, c, n);
            const nanoseconds u = done == n ? rest_u - given_u : scaled(rest_u, c, n);
            given_k += k;
            given_u += u;
            out.push_back({d, k, u});
        }
    }
    return out;
}

}  // namespace proctimes::cli::serve
