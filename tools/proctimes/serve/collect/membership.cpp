// SPDX-License-Identifier: MIT
// Which group each process belongs to over its life, and which group an
// ended process no collection saw is credited to. With process-exporter's
// rules, as process-exporter 0.7.10 decides (its proc/tracker.go): a process
// is named once, when first seen, and keeps that name until it ends (a
// rename or an exec does not move it); one no rule matches is ignored until
// it ends (re-tried at every collection with -recheck), unless -children is
// on and its parent is in a group when it is first seen, or is new and
// unmatched too and joins one that way: then it joins that group.
#include "serve/collect/membership.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <unordered_set>

#include "serve/collect/arith.hpp"

namespace proctimes::cli::serve {
namespace {

double epoch_seconds(instant t) { return static_cast<double>(t.time_since_epoch().count()) / 1e9; }

// Deeper chains of new unmatched processes than this are left unmatched (a
// bound on recursion; process trees are far shallower).
constexpr int max_match_depth = 256;

}  // namespace

outcome<group_membership> group_membership::make(const serve_options& opts) {
    auto classify = classifier::make(opts);
    if (!classify) return classify.error();
    group_membership m;
    m.classify_ = std::move(*classify);
    m.recheck_ = opts.recheck;
    m.children_ = opts.children;
    return m;
}

void group_membership::update(const snapshot& prev, const snapshot& cur, const cpu_ledger* ledger, bool taskstats,
                              member_reader* members) {
    begin_collection();
    if (members) members->begin_collection();

    // Live processes: each adds what it used since its last sample, per mode,
    // never less than nothing (a tick-ratio split can shift between samples).
    const std::vector<proc_state*> states = assign_groups(cur);
    for (std::size_t i = 0; i < cur.processes.size(); ++i) {
        const snapshot_process& p = cur.processes[i];
        proc_state& st = *states[i];
        const std::chrono::nanoseconds du = clamp0(p.times.user - st.user), ds = clamp0(p.times.kernel - st.system);
        st.user += du;
        st.system += ds;
        st.last_interval = du + ds;
        if (st.group.empty()) continue;
        st.in_group += du + ds;
        group_state& g = groups_[st.group];
        g.user += du;
        g.system += ds;
        ++g.procs;
        g.threads += static_cast<std::uint64_t>(std::max(p.thread_count, 0));
        if (g.oldest == 0 || st.start_seconds < g.oldest) g.oldest = st.start_seconds;
        if (members) members->update(cur, p, st.pe, g.pe);
    }

    // Processes that started and ended between the two snapshots: only their
    // exit records know them (before the gone ones are forgotten: they may be
    // their parents).
    if (ledger) {
        const auto unseen_went = credit_unseen(*ledger);
        // taskstats records are read in do_exit(), before the task's last
        // stretch of run time is accounted: the reaping parents' children
        // times give the rest (reaped.hpp). eBPF's are final.
        if (taskstats) credit_reaped(prev, cur, *ledger, unseen_went);
    }

    retire_gone(ledger);
}

void group_membership::begin_collection() {
    for (auto& [k, g] : groups_) {
        g.procs = g.threads = 0, g.oldest = 0;
        // process-exporter's gauges are of this collection alone.
        pe_group& pe = g.pe;
        pe.resident = pe.virtual_bytes = pe.swapped = pe.pss = pe.swap_pss = pe.open_fds = 0;
        pe.worst_fd_ratio = 0;
        pe.wchans.clear();
        std::fill(std::begin(pe.states), std::end(pe.states), std::uint64_t{0});
        for (auto& [name, t] : pe.threads) t.count = 0;
    }
    for (auto& [k, st] : procs_) st.seen = false;
}

std::vector<proc_state*> group_membership::assign_groups(const snapshot& cur) {
    const bool rules = classify_->uses_config();
    std::vector<proc_state*> states(cur.processes.size(), nullptr);
    std::unordered_set<proc_state*> orphans;  // new (or rechecked) and unmatched
    for (std::size_t i = 0; i < cur.processes.size(); ++i) {
        const snapshot_process& p = cur.processes[i];
        auto [it, fresh] = procs_.try_emplace({p.pid(), p.identity.start_ticks});
        proc_state& st = it->second;
        st.seen = true;
        states[i] = &st;
        if (fresh) {
            st.pid = p.pid();
            st.parent = p.parent_pid;
            st.start_ticks = p.identity.start_ticks;
            st.start_seconds = epoch_seconds(p.times.creation);
        }
        const bool again = rules ? fresh || st.undecided || (recheck_ && st.group.empty())
                                 : fresh || !(st.name == p.name) || (recheck_ && st.group.empty());
        if (!again) {
            // The facts a forked child would share are the parent's now: read
            // them again when its comm changed (an exec), without regrouping.
            if (rules && st.facts && !(st.facts_name == p.name)) {
                process_facts f;
                if (classify_->rules_verdict(p, &f).k != verdict::kind::unknown)
                    st.facts = std::make_shared<const process_facts>(std::move(f));
                st.facts_name = p.name;
            }
            continue;
        }
        st.name = p.name;
        std::string group;
        if (rules) {
            process_facts f;
            verdict v = classify_->rules_verdict(p, &f);
            st.undecided = v.k == verdict::kind::unknown;
            if (v.k == verdict::kind::matched) group = std::move(v.group);
            if (!st.undecided && classify_->rules_need_facts()) {
                st.facts = std::make_shared<const process_facts>(std::move(f));
                st.facts_name = p.name;
            }
            if (v.k == verdict::kind::unmatched && children_) orphans.insert(&st);
        } else {
            group = classify_->group_of(p).value_or(std::string());
        }
        if (group != st.group) st.in_group = std::chrono::nanoseconds{0};
        st.group = std::move(group);
    }
    if (orphans.empty()) return states;
    std::unordered_map<pid_t, proc_state*> by_pid;  // only when a parent is to be looked up
    by_pid.reserve(cur.processes.size());
    for (std::size_t i = 0; i < cur.processes.size(); ++i) by_pid[cur.processes[i].pid()] = states[i];

    // -children: an unmatched process takes its parent's group when the
    // parent is in one; a parent new and unmatched too is looked at first.
    std::unordered_map<const proc_state*, std::string> decided;
    const auto resolve = [&](const auto& self, proc_state* st, int depth) -> std::string {
        if (const auto d = decided.find(st); d != decided.end()) return d->second;
        std::string group;
        const auto parent = st->parent > 0 ? by_pid.find(st->parent) : by_pid.end();
        if (parent != by_pid.end() && parent->second != st && depth < max_match_depth) {
            proc_state* ps = parent->second;
            group = orphans.count(ps) != 0 ? self(self, ps, depth + 1) : ps->group;
        }
        decided.emplace(st, group);
        return group;
    };
    for (proc_state* st : orphans) {
        std::string group = resolve(resolve, st, 0);
        if (group.empty()) continue;
        st->in_group = std::chrono::nanoseconds{0};
        st->group = std::move(group);
    }
    return states;
}

std::unordered_map<const ended_process*, destination> group_membership::credit_unseen(const cpu_ledger& ledger) {
    const bool rules = classify_->uses_config();
    std::unordered_map<pid_t, const ended_process*> unseen;
    for (const auto& e : ledger.processes)
        if (!e.seen_before) unseen[e.pid] = &e;
    if (unseen.empty()) return {};
    // Parents: the processes of this collection and those gone since the
    // previous one (not yet forgotten), by pid.
    std::unordered_map<pid_t, const proc_state*> parents;
    for (const auto& [key, st] : procs_) {
        auto [it, fresh] = parents.try_emplace(key.first, &st);
        if (!fresh && st.seen) it->second = &st;  // a live one wins over a gone one of that pid
    }

    // Its parent: a process a collection saw that started no later than it
    // (pids are reused), else another unseen one.
    const auto saw_parent = [&](const ended_process& e) -> const proc_state* {
        const auto p = parents.find(e.parent_pid);
        return p != parents.end() && p->second->start_ticks <= e.start_ticks ? p->second : nullptr;
    };
    const auto unseen_parent = [&](const ended_process& e) -> const ended_process* {
        const auto u = unseen.find(e.parent_pid);
        return u != unseen.end() && u->second != &e ? u->second : nullptr;
    };
    // What the rules would have read of an unseen process: the command line
    // of its last exec, from the eBPF exit stream's exec record (not when a
    // rule needs the cgroups, which the record does not carry); for one that
    // forked and never exec'd, its parent's, when the parent was classified
    // (or exec'd) under the same comm (a parent that exec'd since has another).
    std::unordered_map<const ended_process*, process_facts> execd;
    const auto known = [&](const auto& self, const ended_process& e, int depth) -> const process_facts* {
        if (!e.forked_no_exec && e.command_line && !classify_->rules_need_cgroups()) {
            auto [it, fresh] = execd.try_emplace(&e);
            if (fresh) it->second = command_line_facts(*e.command_line);
            return &it->second;
        }
        if (!e.forked_no_exec || depth >= max_match_depth) return nullptr;
        if (const proc_state* p = saw_parent(e))
            return p->facts && p->facts_name.view() == e.name.view() ? p->facts.get() : nullptr;
        if (const ended_process* u = unseen_parent(e); u && u->name.view() == e.name.view())
            return self(self, *u, depth + 1);
        return nullptr;
    };

    // The group of an unseen process: "" for none (excluded, or no rule and
    // no parent in a group); nullopt when it cannot be told.
    std::unordered_map<const ended_process*, std::optional<std::string>> done;
    const auto group_of = [&](const auto& self, const ended_process& e, int depth) -> std::optional<std::string> {
        if (const auto d = done.find(&e); d != done.end()) return d->second;
        done.emplace(&e, std::nullopt);  // a loop of pids reads as unknown
        std::optional<std::string> out;
        if (!rules) {
            out = classify_->group_of_ended(e.name.view(), e.uid);
        } else {
            const process_facts* facts = known(known, e, 0);
            const verdict v = classify_->ended_verdict(e.name.view(), e.uid, facts);
            if (v.k == verdict::kind::matched) {
                out = v.group;
            } else if (v.k == verdict::kind::unmatched) {
                out = std::string();
                if (children_ && depth < max_match_depth) {
                    if (const proc_state* p = saw_parent(e))
                        out = p->undecided ? std::nullopt : std::optional(p->group);
                    else if (const ended_process* u = unseen_parent(e))
                        out = self(self, *u, depth + 1);
                }
            }
        }
        done[&e] = out;
        return out;
    };
    std::unordered_map<const ended_process*, destination> went;
    for (const auto& e : ledger.processes) {
        if (e.seen_before) continue;
        const std::optional<std::string> group = group_of(group_of, e, 0);
        // Without rules, one no group takes is left out, not unattributed.
        went.emplace(&e, rules ? group : destination(group.value_or(std::string())));
        if (!group) {
            if (rules) {
                unattributed_.user += e.user;
                unattributed_.system += e.kernel;
                ++unattributed_.procs;
            }
            continue;
        }
        if (group->empty()) continue;
        group_state& g = groups_[*group];
        g.user += e.user;
        g.system += e.kernel;
        ++g.ended;
    }
    return went;
}

void group_membership::credit_reaped(const snapshot& prev, const snapshot& cur, const cpu_ledger& ledger,
                                     const std::unordered_map<const ended_process*, destination>& unseen_went) {
    const auto state_of = [this](const snapshot_process& p) -> proc_state* {
        const auto it = procs_.find({p.pid(), p.identity.start_ticks});
        return it != procs_.end() ? &it->second : nullptr;
    };
    reaped_inputs in{prev, cur, ledger.processes, nullptr, nullptr, nullptr};
    // A process a collection saw keeps its group until it ends.
    in.gone_to = [&](const snapshot_process& b) {
        const proc_state* st = state_of(b);
        return st ? destination(st->group) : destination{};
    };
    in.unseen_to = [&](const ended_process& e) {
        const auto it = unseen_went.find(&e);
        return it != unseen_went.end() ? it->second : destination{};
    };
    in.carry_of = [&](const snapshot_process& a) -> std::chrono::nanoseconds* {
        proc_state* st = state_of(a);
        return st ? &st->reaped_carry : nullptr;
    };
    for (const reaped_share& s : reaped_rest(in)) {
        if (!s.to) {
            unattributed_.user += s.user;
            unattributed_.system += s.kernel;
        } else if (!s.to->empty()) {
            group_state& g = groups_[*s.to];
            g.user += s.user;
            g.system += s.kernel;
        }
    }
}

void group_membership::retire_gone(const cpu_ledger* ledger) {
    // Add their final values where a record gives them exactly; otherwise
    // their last sample stands, and the group says how much of its counter
    // such members make up.
    for (auto it = procs_.begin(); it != procs_.end();) {
        if (it->second.seen) {
            ++it;
            continue;
        }
        proc_state& st = it->second;
        const ended_process* fin = nullptr;
        if (ledger)
            for (const auto& e : ledger->processes)
                if (e.seen_before && e.pid == st.pid && e.start_ticks == st.start_ticks) fin = &e;
        if (!st.group.empty()) {
            group_state& g = groups_[st.group];
            ++g.ended;
            if (fin && fin->exact) {
                g.user += clamp0(fin->final_user - st.user);
                g.system += clamp0(fin->final_kernel - st.system);
            } else {
                g.estimated += st.in_group;
            }
        }
        it = procs_.erase(it);
    }
}

}  // namespace proctimes::cli::serve
