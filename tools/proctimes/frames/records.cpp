// SPDX-License-Identifier: MIT
// The records of a snapshot and of the interval before it (frames/frames.hpp):
// one per process, each with its owner, state and the CPU it used in the
// interval, and with `threads` its threads under it.
#include <chrono>
#include <optional>
#include <vector>

#include "frames/frames.hpp"

namespace proctimes::cli::frames {

using std::chrono::nanoseconds;

namespace {

interval_basis basis_of(delta_basis b) {
    switch (b) {
        case delta_basis::both:
            return interval_basis::both;
        case delta_basis::created:
            return interval_basis::created;
        case delta_basis::unseen:
            return interval_basis::unseen;
    }
    return interval_basis::unseen;
}

}  // namespace

interval_values used_of(const cpu_delta& d, nanoseconds interval) {
    interval_values u;
    u.interval = interval;
    u.kernel = d.kernel;
    u.user = d.user;
    u.cpu_percent = d.cpu_percent;
    u.basis = basis_of(d.basis);
    return u;
}

std::vector<task_record> build_records(const snapshot& s, const snapshot_delta* delta, bool threads,
                                       std::optional<user_id> only_uid, user_names& users) {
    std::vector<task_record> out;
    out.reserve(s.processes.size());
    for (std::size_t i = 0; i < s.processes.size(); ++i) {
        const auto& p = s.processes[i];
        if (only_uid && p.uid != *only_uid) continue;
        task_record r = make_record(p.pid(), std::nullopt, p.name.str(), p.times);
        ps_values v;
        v.ppid = p.parent_pid;
        if (p.uid != snapshot_process::unknown_uid) v.uid = p.uid;
        v.user_name = users.name(p.uid);
        v.proc_state = p.state;
        r.ps = v;
        if (delta) r.used = used_of(delta->processes[i], delta->interval);
        if (threads) {
            const auto list = s.threads_of(p);
            r.threads.reserve(list.size());
            for (std::size_t k = 0; k < list.size(); ++k) {
                const auto& t = list[k];
                task_record tr = make_record(p.pid(), t.tid(), t.name.str(), t.times);
                ps_values tv = v;
                tv.proc_state = t.state;
                tr.ps = tv;
                if (delta && !delta->threads.empty())
                    tr.used = used_of(delta->threads[p.first_thread + k], delta->interval);
                r.threads.push_back(std::move(tr));
            }
        }
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace proctimes::cli::frames
