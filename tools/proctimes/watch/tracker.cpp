// SPDX-License-Identifier: MIT
// What `watch` over a scope knows (watch/tracker.hpp). Two ways to learn of an
// end: the exit stream's records (every task's end, final CPU exact), or, without
// it, a process seen alive that a later snapshot no longer lists (its
// last-seen values, exited_partial) or lists as a zombie (final values).
#include "watch/tracker.hpp"
#include "system.hpp"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include <time.h>

#include <fmt/format.h>

namespace proctimes::cli {

namespace {

using std::chrono::nanoseconds;

constexpr nanoseconds tick{std::chrono::milliseconds{10}};

nanoseconds nonnegative(nanoseconds d) { return std::max(d, nanoseconds{0}); }

// What a process used since its baseline, split in kernel and user. The split
// of a running total is an estimate that can move between samples (the
// kernel divides its exact runtime in the ratio of tick samples): its user
// share can shrink while the total grows. The total is what is subtracted;
// a share that went down is taken from the other one.
std::pair<nanoseconds, nanoseconds> used_since(nanoseconds kernel, nanoseconds user, nanoseconds base_kernel,
                                               nanoseconds base_user) {
    nanoseconds k = kernel - base_kernel, u = user - base_user;
    if (k < nanoseconds{0}) u += k, k = nanoseconds{0};
    if (u < nanoseconds{0}) k += u, u = nanoseconds{0};
    return {nonnegative(k), nonnegative(u)};
}

}  // namespace

scope_tracker::scope_tracker(const watch_scope& scope, std::string proc_root, bool with_stream)
    : scope_(scope), proc_root_(std::move(proc_root)), with_stream_(with_stream) {
    totals_.source = with_stream ? end_seen_by::exit_stream : end_seen_by::snapshot;
}

user_id scope_tracker::real_uid(const snapshot_process& p) {
    auto& f = facts_[p.pid()];
    if (f.start_ticks != p.identity.start_ticks) f = facts{p.identity.start_ticks, {}, {}};
    if (!f.real_uid) f.real_uid = read_real_uid(proc_root_, p.pid()).value_or(p.uid);
    return *f.real_uid;
}

bool scope_tracker::in_scope(const snapshot_process& p) {
    if (scope_.name && !scope_.name->search(p.name.view())) return false;
    if (scope_.uid && real_uid(p) != *scope_.uid) return false;
    if (!scope_.cgroup) return true;
    auto& f = facts_[p.pid()];
    if (f.start_ticks != p.identity.start_ticks) f = facts{p.identity.start_ticks, {}, {}};
    if (!f.in_cgroup) {
        f.in_cgroup = in_cgroup(proc_root_, p.pid(), *scope_.cgroup);
    }
    return *f.in_cgroup;
}

scope_tracker::seen scope_tracker::make_seen(const snapshot_process& p, bool at_begin) {
    seen s;
    s.start_ticks = p.identity.start_ticks;
    s.name = std::string(p.name.view());
    s.uid = real_uid(p);
    s.ppid = p.parent_pid;
    s.last = p.times;
    // Created before the watch began (its creation is floored to a tick): what
    // it had used then is not part of the totals.
    const bool before = at_begin || p.times.creation + tick <= anchor_ + began_since_boot_;
    if (before) s.base_kernel = p.times.kernel, s.base_user = p.times.user;
    return s;
}

void scope_tracker::begin(const snapshot& s, nanoseconds stream_opened_since_boot) {
    anchor_ = s.taken - s.since_boot;
    began_since_boot_ = s.since_boot;
    stream_opened_ = stream_opened_since_boot;
    began_ = true;
    for (const auto& p : s.processes) {
        if (with_stream_ && p.times.state == task_state::exited) continue;  // its record is on its way
        if (in_scope(p)) alive_.emplace(p.pid(), make_seen(p, true));
    }
}

task_record scope_tracker::record_of(pid_t pid, const std::string& name, user_id uid, pid_t ppid, const task_times& t,
                                     end_seen_by end_source) {
    task_record r = make_record(pid, std::nullopt, name, t);
    ps_values v;
    v.ppid = ppid;
    v.uid = uid;
    v.user_name = users_.name(uid);
    v.proc_state = 'X';
    r.ps = std::move(v);
    r.scope = scope_values{end_source, {}, {}};
    return r;
}

void scope_tracker::count(const task_record& r, nanoseconds base_kernel, nanoseconds base_user) {
    ++totals_.ended;
    if (r.state != task_state::exited) ++totals_.ended_partial;
    totals_.ended_kernel += r.kernel;
    totals_.ended_user += r.user;
    const auto [k, u] = used_since(r.kernel, r.user, base_kernel, base_user);
    totals_.ended_during += k + u;
}

// A process seen alive that a snapshot no longer lists: it ended (and was
// reaped) after the last sample and before this snapshot. Its values are the
// last sample's: a lower bound, never passed off as final.
void scope_tracker::vanished(pid_t pid, const seen& s, const walk_time& now, std::vector<task_record>& ended) {
    if (s.reported) return;
    task_times t = s.last;
    t.state = task_state::exited_partial;
    t.exit = std::max(now.taken, t.creation);
    t.exit_earliest = std::clamp(s.last.sampled_at, t.creation, *t.exit);
    t.precision.exit_source = exit_source::observed;
    t.precision.exit_resolution = *t.exit - *t.exit_earliest;
    auto r = record_of(pid, s.name, s.uid, s.ppid, t, end_seen_by::snapshot);
    count(r, s.base_kernel, s.base_user);
    ended.push_back(std::move(r));
}

// Gone from a snapshot while the stream is on: its record may still come (the
// eBPF stream sends it once the task is released, a few ms after the reap).
// Until then it waits here; after `grace`, it is reported with its last sample.
void scope_tracker::lose(pid_t pid, seen&& w, const snapshot& now, std::vector<task_record>& ended) {
    if (!with_stream_) return vanished(pid, w, walk_time{now.taken, now.since_boot}, ended);
    if (auto old = gone_.find(pid); old != gone_.end()) {
        vanished(pid, old->second.w, old->second.noticed, ended);
        gone_.erase(old);
    }
    gone_.emplace(pid, gone_entry{std::move(w), walk_time{now.taken, now.since_boot}});
}

void scope_tracker::flush_gone(std::vector<task_record>& ended, std::optional<std::chrono::nanoseconds> before) {
    for (auto it = gone_.begin(); it != gone_.end();) {
        if (before && it->second.noticed.since_boot + grace > *before) {
            ++it;
            continue;
        }
        vanished(it->first, it->second.w, it->second.noticed, ended);
        it = gone_.erase(it);
    }
}

void scope_tracker::take(const snapshot& s, std::vector<task_record>& ended) {
    flush_gone(ended, s.since_boot);
    std::unordered_set<pid_t> listed;
    listed.reserve(s.processes.size());
    for (const auto& p : s.processes) {
        listed.insert(p.pid());
        auto it = alive_.find(p.pid());
        if (it != alive_.end() && it->second.start_ticks != p.identity.start_ticks) {
            lose(p.pid(), std::move(it->second), s, ended);  // its pid was reused since
            alive_.erase(it);
            it = alive_.end();
        }
        if (it == alive_.end()) {
            // A process new to the watch. A zombie is left to its exit record
            // when there is a stream (which may have reported it already), and
            // so is one whose record came after this walk read it.
            if (auto e = ended_since_.find(p.pid());
                e != ended_since_.end() &&
                tick * static_cast<std::int64_t>(p.identity.start_ticks) <= e->second.start_since_boot) {
                // A record of a process --cgroup could not place: this walk saw it, in scope or not.
                if (e->second.pending && in_scope(p)) {
                    const seen w = make_seen(p, false);
                    emit(*e->second.pending, e->second.threads, e->second.start, &w, ended);
                }
                continue;
            }
            if (p.times.state == task_state::exited && with_stream_) continue;
            if (!in_scope(p)) continue;
            it = alive_.emplace(p.pid(), make_seen(p, false)).first;
        }
        {
            seen& w = it->second;
            w.last = p.times;
            w.name = std::string(p.name.view());  // it may have exec'd
            w.ppid = p.parent_pid;
            if (!with_stream_ && p.times.state == task_state::exited && !w.reported) {
                // A zombie: its values are final; the end was no later than this walk.
                task_times t = p.times;
                t.exit = std::max(s.taken, t.creation);
                t.exit_earliest = t.creation;
                t.precision.exit_source = exit_source::observed;
                t.precision.exit_resolution = *t.exit - *t.exit_earliest;
                auto r = record_of(p.pid(), w.name, w.uid, w.ppid, t, end_seen_by::snapshot);
                count(r, w.base_kernel, w.base_user);
                ended.push_back(std::move(r));
                w.reported = true;
            }
        }
    }
    for (auto it = alive_.begin(); it != alive_.end();) {
        if (listed.count(it->first)) {
            ++it;
            continue;
        }
        lose(it->first, std::move(it->second), s, ended);
        it = alive_.erase(it);
    }
    std::erase_if(facts_, [&](const auto& kv) { return !listed.count(kv.first); });
    ended_since_.clear();  // the next walk starts after all of them ended
}

void scope_tracker::ended_record(const ended_task& e, std::vector<task_record>& ended) {
    const pid_t tgid = e.pid != 0 ? e.pid : e.tid;
    if (!e.process_ended) {
        // One thread of a process that goes on: kept until the process ends.
        if (threads_.size() > 1'000'000) threads_.clear();  // bounded; those processes become partial
        auto& te = threads_[tgid];
        te.kernel += e.kernel;
        te.user += e.user;
        if (e.tid == tgid) {
            te.leader_name = std::string(e.name.view());
            te.leader_start = e.received_since_boot - e.elapsed;
        }
        return;
    }
    threads_ended te;
    bool had_threads = false;
    if (auto it = threads_.find(tgid); it != threads_.end()) {
        te = std::move(it->second);
        threads_.erase(it);
        had_threads = true;
    }
    // When it started (since boot): the record's start tick (eBPF), the
    // leader's record (late by the delivery delay), or the snapshot that saw
    // it (floored to a tick).
    std::optional<nanoseconds> start;
    if (e.tid == tgid) start = e.received_since_boot - e.elapsed;
    if (had_threads && te.leader_start.count() > 0) start = te.leader_start;
    if (e.start_ticks != 0 && e.tid == tgid) start = tick * static_cast<std::int64_t>(e.start_ticks);
    // The process a snapshot saw with this pid, alive or just gone, if it is this one.
    const auto same = [&](const seen& w) {
        if (e.start_ticks != 0 && e.tid == tgid) return w.start_ticks == e.start_ticks;
        // Not a later process that reused the pid (whose own record came; the seen one's was lost).
        return !start || *start <= tick * static_cast<std::int64_t>(w.start_ticks) + std::chrono::seconds{1};
    };
    std::optional<seen> tracked;
    if (auto it = alive_.find(tgid); it != alive_.end() && same(it->second)) {
        tracked = std::move(it->second);
        alive_.erase(it);
    } else if (auto g = gone_.find(tgid); g != gone_.end() && same(g->second.w)) {
        tracked = std::move(g->second.w);
        gone_.erase(g);
    }
    if (tracked) start = tick * static_cast<std::int64_t>(tracked->start_ticks);
    if (ended_since_.size() > 1'000'000) ended_since_.clear();  // bounded (a storm and a long interval)
    // Its start as a snapshot would floor it (a record's estimate is late by the delivery delay).
    auto& mark = ended_since_[tgid];
    mark = ended_mark{start ? *start : e.received_since_boot - e.elapsed, {}, {}, {}};
    if (!tracked) {
        // Never seen alive: name and user decide from the record. A cgroup
        // cannot (the record does not say): the snapshot walked before this
        // record was read may have it, else only the cgroup's counter does.
        std::string name = std::string(e.name.view());
        if (!e.whole_process && !te.leader_name.empty()) name = te.leader_name;
        if (scope_.cgroup) {
            mark.pending = e;
            mark.threads = std::move(te);
            mark.start = start;
            return;
        }
        if (!scope_.matches(name, e.uid)) return;
    }
    emit(e, te, start, tracked ? &*tracked : nullptr, ended);
}

void scope_tracker::emit(const ended_task& e, const threads_ended& te, std::optional<nanoseconds> start, const seen* w,
                         std::vector<task_record>& ended) {
    const pid_t tgid = e.pid != 0 ? e.pid : e.tid;
    std::string name = std::string(e.name.view());
    if (!e.whole_process && !te.leader_name.empty()) name = te.leader_name;
    if (w && !e.whole_process) name = w->name;
    task_times t;
    t.kernel = te.kernel + e.kernel;
    t.user = te.user + e.user;
    // Final when the record has the whole process's totals (eBPF), or the
    // stream saw every thread of it end: one thread only, or it started after
    // the stream opened and no record was lost since.
    bool exact = e.whole_process || (start && *start > stream_opened_ && *start > last_lost_);
    // The eBPF record of a process's end carries every thread's total.
    if (e.process_ended && e.exact && (e.process_kernel + e.process_user).count() > 0) {
        t.kernel = e.process_kernel;
        t.user = e.process_user;
        exact = true;
    }
    t.creation = e.creation ? *e.creation
                 : w        ? w->last.creation
                            : anchor_ + (start ? *start : e.received_since_boot - e.elapsed);
    if (e.exit) {
        // The instant it ran do_exit(), exact.
        t.exit = std::max(*e.exit, t.creation);
        t.exit_earliest = t.exit;
    } else {
        // No later than the record's arrival; no earlier than its last sample.
        t.exit = std::max(anchor_ + e.received_since_boot, t.creation);
        t.exit_earliest = std::clamp(w ? w->last.sampled_at : t.creation, t.creation, *t.exit);
    }
    // eBPF: stamped at do_exit() (exact); otherwise no later than seen.
    const exit_source exit_from = e.exit ? exit_source::bpf_exit : exit_source::observed;
    t.precision.exit_source = exit_from;
    t.precision.exit_resolution = *t.exit - *t.exit_earliest;
    // The eBPF stream's values are the kernel's own counters after the last
    // switch-out (bpf_exit); taskstats' are its exit record's.
    t.precision.source = e.exact ? cpu_source::bpf_exit : cpu_source::exit_record;
    t.precision.resolution = tick;
    t.precision.total_resolution = nanoseconds{1};
    t.precision.creation_resolution = e.creation ? nanoseconds{1} : tick;
    t.state = task_state::exited;
    t.sampled_at = *t.exit;
    if (!exact) {
        t.state = task_state::exited_partial;
        if (w && w->last.cpu() > t.cpu()) {  // the last sample is the larger lower bound
            t.kernel = w->last.kernel;
            t.user = w->last.user;
            t.precision = w->last.precision;
            t.precision.exit_source = exit_from;
            t.precision.exit_resolution = *t.exit - *t.exit_earliest;
            t.sampled_at = w->last.sampled_at;
        }
    }
    auto r = record_of(tgid, name, e.uid, w ? w->ppid : e.parent_pid, t, end_seen_by::exit_stream);
    if (e.status) {
        if (e.status->signaled()) {
            r.scope->signal = e.status->signal;
        } else {
            r.scope->exit_code = e.status->code;
        }
    }
    count(r, w ? w->base_kernel : nanoseconds{0}, w ? w->base_user : nanoseconds{0});
    ended.push_back(std::move(r));
}

void scope_tracker::records(const std::vector<ended_task>& exits, bool complete, std::vector<task_record>& ended) {
    if (!complete) {
        ++totals_.lost_reports;
        // Records were lost before these: a process that had begun by then may lack some of its threads.
        last_lost_ = exits.empty() ? sys::since_boot_now() : exits.front().received_since_boot;
    }
    for (const auto& e : exits) ended_record(e, ended);
}

scope_totals scope_tracker::totals(nanoseconds watched, std::optional<nanoseconds> cgroup_delta) const {
    scope_totals t = totals_;
    t.interval = watched;
    for (const auto& [pid, w] : alive_) {
        if (w.reported) continue;
        ++t.alive;
        const auto [k, u] = used_since(w.last.kernel, w.last.user, w.base_kernel, w.base_user);
        t.alive_kernel += k;
        t.alive_user += u;
    }
    if (cgroup_delta) {
        t.cgroup_cpu = *cgroup_delta;
        t.unattributed = *cgroup_delta - t.ended_during - t.alive_kernel - t.alive_user;
    }
    return t;
}

}  // namespace proctimes::cli
