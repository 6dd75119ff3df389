// SPDX-License-Identifier: MIT
// The ledger of a frame (proctimes/ledger.hpp): the exit stream read while
// waiting for the next frame, /proc/stat next to each snapshot, the records
// of what ended and the children columns, and the ledger record that
// `ps --interval --ledger --format json` and `proctimes top -b --format json`
// write.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "frames/frames.hpp"
#include "proctimes/boot.hpp"
#include "system.hpp"

namespace proctimes::cli::frames {

namespace {

using std::chrono::nanoseconds;

double seconds(nanoseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::array<ledger_term, 9> ledger_terms(const cpu_ledger& l) {
    return {{{"busy", l.busy},
             {"live", l.live},
             {"ended", l.ended},
             {"reaped_children", l.reaped_children},
             {"irq", l.irq},
             {"softirq", l.softirq},
             {"steal", l.steal},
             {"guest", l.guest},
             {"unattributed", l.unattributed}}};
}

void ledger_sources::open(const std::string& proc_root) {
    // Exit records describe this system's tasks: they match only snapshots
    // of the live /proc.
    if (!is_live_proc_root(proc_root)) {
        why_none_ = "the snapshots are not of the live /proc";
        return;
    }
    auto s = exit_stream::open();
    if (s) {
        stream_.emplace(std::move(*s));
    } else if (s.error() == errc::foreign_namespace) {
        why_none_ = "exit records are not available inside a pid namespace other than the initial one";
    } else {
        why_none_ = s.error() == std::errc::operation_not_permitted
                        ? "exit records need CAP_NET_ADMIN (root)"
                        : fmt::format("no exit records: {}", s.error().message());
    }
}

void ledger_sources::drain() {
    if (!stream_) return;
    auto r = stream_->read(pending_);
    if (!r) {
        why_none_ = fmt::format("reading exit records failed: {}", r.error().message());
        stream_.reset();
    } else if (!*r) {
        lost_ = true;
    }
}

void ledger_sources::sleep_until(nanoseconds deadline) {
    for (;;) {
        const nanoseconds left = deadline - sys::since_boot_now();
        if (left.count() <= 0) break;
        if (stream_) {
            // Wake for records at least every 100 ms, and at the deadline.
            const auto ms = std::chrono::ceil<std::chrono::milliseconds>(
                std::min<nanoseconds>(left, std::chrono::milliseconds{100}));
            (void)stream_->wait(ms);
            drain();
        } else {
            std::this_thread::sleep_for(left);
        }
    }
    drain();
}

void ledger_sources::read_stat(const std::string& proc_root) {
    drain();
    stat_prev_ = stat_cur_;
    stat_cur_.reset();
    auto s = read_system_cpu_times(proc_root);
    if (s) {
        stat_cur_ = *s;
    } else {
        stat_error_ = s.error();
    }
}

void add_ledger_records(std::vector<task_record>& records, const cpu_ledger& l, const ledger_sources& src,
                        const snapshot& after, bool threads, std::optional<user_id> only_uid, user_names& users) {
    // Children columns: every live process whose source reads children times.
    std::unordered_map<pid_t, const children_account*> grew;
    for (const auto& c : l.children) grew[c.pid] = &c;
    std::unordered_map<pid_t, std::size_t> record_of;
    for (std::size_t i = 0; i < records.size(); ++i) {
        auto& r = records[i];
        record_of[r.pid] = i;
        const auto* p = after.find(r.pid);
        if (!p || !p->children_kernel || !p->children_user || !r.used) continue;
        const auto it = grew.find(r.pid);
        r.used->children_kernel = it != grew.end() ? it->second->kernel : nanoseconds{0};
        r.used->children_user = it != grew.end() ? it->second->user : nanoseconds{0};
    }

    const auto anchor = get_boot_anchor();
    const auto at = [&](nanoseconds since_boot) -> std::optional<instant> {
        if (!anchor) return std::nullopt;
        return anchor->boot + since_boot;
    };
    const std::int64_t hz = clock_ticks_per_second();
    const nanoseconds tick{hz > 0 ? 1'000'000'000 / hz : 10'000'000};
    const nanoseconds from = l.interval > nanoseconds{0} ? after.since_boot - l.interval : after.since_boot;
    // The instants of an ended task: eBPF's exact creation and do_exit();
    // otherwise the estimates, and the record's arrival, no earlier than the
    // end ("observed").
    const auto set_instants = [](task_record& r, const std::optional<instant>& creation,
                                 const std::optional<instant>& estimated_creation, const std::optional<instant>& exit,
                                 const std::optional<instant>& arrival) {
        if (creation) {
            r.creation = *creation;
        } else if (estimated_creation) {
            r.creation = *estimated_creation;
        }
        r.exit = exit ? exit : arrival;
        r.exit_source = exit ? exit_source::bpf_exit : exit_source::observed;
    };
    auto ended_thread = [&](const ended_task& e, pid_t pid, const ps_values& v) {
        task_record t;
        t.pid = pid;
        t.tid = e.tid;
        t.name = e.name.str();
        set_instants(t, e.creation, at(e.received_since_boot - e.elapsed), e.exit, at(e.received_since_boot));
        t.kernel = e.kernel;
        t.user = e.user;
        t.resolution = tick;
        t.total_resolution = nanoseconds{1};
        t.source = e.exact ? cpu_source::bpf_exit : cpu_source::exit_record;
        t.state = task_state::exited;
        t.sampled_at = t.exit;
        t.ps = v;
        t.ps->proc_state = 'X';
        return t;
    };

    // Processes that ended in the interval, with their final times; and
    // those whose end came too late for the frame of their interval, with
    // nothing used in this one (basis "ended_earlier").
    const auto add_ended = [&](const ended_process& e, interval_basis basis) {
        if (only_uid && e.uid != *only_uid) return;
        task_record r;
        r.pid = e.pid;
        // What it was at its end: the program an exec in its last interval
        // ran, or the name it gave itself, not the one `before` read.
        r.name = (e.end_name.empty() ? e.name : e.end_name).str();
        std::optional<instant> estimated;
        if (auto c = instant_from_start_ticks(e.start_ticks)) estimated = *c;
        set_instants(r, e.creation, estimated, e.exit, at(e.ended_since_boot));
        r.kernel = e.final_kernel;
        r.user = e.final_user;
        r.resolution = tick;
        r.total_resolution = e.exact ? nanoseconds{1} : tick;
        r.source = src.exact() ? cpu_source::bpf_exit : cpu_source::exit_record;
        r.state = task_state::exited;
        r.sampled_at = r.exit;
        ps_values v;
        v.ppid = e.parent_pid;
        v.uid = e.uid;
        v.user_name = users.name(e.uid);
        v.proc_state = 'X';
        r.ps = v;
        interval_values u;
        u.interval = l.interval;
        u.kernel = e.kernel;
        u.user = e.user;
        u.cpu_percent = l.interval.count() > 0 ? 100.0 * seconds(e.cpu()) / seconds(l.interval) : 0.0;
        u.basis = basis;
        r.used = u;
        if (threads && basis == interval_basis::ended) {
            // Its threads' records of this life (received up to its end).
            for (const auto& t : src.exits())
                if (t.pid == e.pid && t.received_since_boot > from && t.received_since_boot <= e.ended_since_boot &&
                    t.received_since_boot + tick >= e.ended_since_boot - t.elapsed)
                    r.threads.push_back(ended_thread(t, e.pid, v));
        }
        records.push_back(std::move(r));
    };
    for (const auto& e : l.processes) add_ended(e, interval_basis::ended);
    for (const auto& e : src.ended_earlier()) add_ended(e, interval_basis::ended_earlier);

    // Threads that ended in the interval inside processes still running.
    if (threads) {
        for (const auto& t : src.exits()) {
            if (t.process_ended || t.pid == 0 || t.received_since_boot <= from ||
                t.received_since_boot > after.since_boot)
                continue;
            const auto it = record_of.find(t.pid);
            if (it == record_of.end()) continue;
            auto& r = records[it->second];
            if (!r.ps) continue;
            r.threads.push_back(ended_thread(t, t.pid, *r.ps));
        }
    }
}

nlohmann::ordered_json ledger_record(const cpu_ledger* l, const std::string& error, bool exit_stream,
                                     const std::string& note, bool lost, std::optional<std::uint64_t> lost_count) {
    const double capacity_s = l ? seconds(l->stat_interval) * std::max(l->cpus, 1) : 0.0;
    const auto pct = [&](nanoseconds v) { return capacity_s > 0 ? 100.0 * seconds(v) / capacity_s : 0.0; };
    nlohmann::ordered_json j;
    j["record"] = "ledger";
    if (!l) {
        j["error"] = error;
    } else {
        const auto terms = ledger_terms(*l);
        j["interval_ns"] = l->interval.count();
        j["stat_interval_ns"] = l->stat_interval.count();
        j["cpus"] = l->cpus;
        j["capacity_ns"] = static_cast<std::int64_t>(capacity_s * 1e9);
        for (const auto& t : terms) j[std::string(t.name) + "_ns"] = t.value.count();
        for (const auto& t : terms) j[std::string(t.name) + "_percent"] = pct(t.value);
        j["ended_processes"] = l->processes.size();
        j["ended_without_record"] = l->ended_without_record;
        j["children_unknown"] = l->children_unknown;
    }
    j["ended_source"] = std::string(word_of(exit_stream ? ps_ended_source::exit_stream : ps_ended_source::none));
    j["ended_source_note"] = note;
    j["records_lost"] = lost;
    if (lost_count) {
        j["records_lost_count"] = *lost_count;
    } else {
        j["records_lost_count"] = nullptr;
    }
    return j;
}

}  // namespace proctimes::cli::frames
