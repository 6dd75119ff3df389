// SPDX-License-Identifier: MIT
#include "run/thread_tracker.hpp"

#include "proctimes/error.hpp"

namespace proctimes::cli {

namespace {
constexpr std::chrono::nanoseconds name_refresh_interval = std::chrono::milliseconds{20};
}  // namespace

bool ended(std::error_code ec) noexcept { return ec == std::errc::no_such_process; }

void thread_tracker::poll() {
    const auto now = std::chrono::steady_clock::now();
    const bool refresh_names = now - last_names_ >= name_refresh_interval;
    if (refresh_names) last_names_ = now;
    auto tids = proc_.thread_ids();
    if (!tids && !ended(tids.error()) && !list_failure_) list_failure_ = tids.error();
    if (tids) {
        for (const pid_t tid : *tids) {
            if (threads_.count(tid)) continue;
            auto th = thread::open(proc_.id(), tid);
            if (!th) {
                // Ended already: a missed thread, counted in the unattributed
                // time. Anything else (EMFILE, EACCES) is a failure to say.
                if (!ended(th.error())) open_failures_.insert_or_assign(tid, th.error());
                continue;
            }
            open_failures_.erase(tid);
            tracked_thread t{std::move(*th), {}, {}};
            if (auto n = t.handle.name()) t.name = std::move(*n);
            threads_.emplace(tid, std::move(t));
        }
    }
    for (auto& [tid, t] : threads_) {
        if (t.last && t.last->state != task_state::running) continue;
        if (auto s = t.handle.times()) t.last = *s;
        if (refresh_names)
            if (auto n = t.handle.name()) t.name = std::move(*n);
    }
}

std::vector<task_record> thread_tracker::records(pid_t pid) {
    std::vector<task_record> out;
    for (auto& [tid, t] : threads_) {
        if (auto s = t.handle.times()) t.last = *s;
        if (!t.last) continue;
        task_times v = *t.last;
        if (v.state == task_state::running) v.state = task_state::exited_partial;  // ended, not recorded
        out.push_back(make_record(pid, tid, t.name, v));
    }
    return out;
}

}  // namespace proctimes::cli
