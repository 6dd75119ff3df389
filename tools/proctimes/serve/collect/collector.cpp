// SPDX-License-Identifier: MIT
#include "serve/collect/collector.hpp"
#include "serve/collect/arith.hpp"

#include <algorithm>
#include <ctime>
#include <string_view>

#include <sys/resource.h>
#include <unistd.h>

#include "commands.hpp"
#include "proctimes/exit.hpp"
#include "serve/collect/late_records.hpp"

namespace proctimes::cli::serve {
namespace {

using std::chrono::nanoseconds;

}  // namespace

std::unique_ptr<collector> collector::make(const serve_options& opts, std::string& error) {
    auto c = open(opts);
    if (!c) {
        error = c.error().message;
        return nullptr;
    }
    return std::move(*c);
}

outcome<std::unique_ptr<collector>> collector::open(const serve_options& opts) {
    std::unique_ptr<collector> c(new collector);
    c->opts_ = opts;
    c->members_ = member_reader(opts);
    auto classify = classifier::make(opts);
    if (!classify) return classify.error();
    c->classify_ = std::move(*classify);
    snapshot_options so;
    so.proc_root = opts.proc_root;
    so.threads = opts.threads;
    if (opts.namedprocess || c->classify_->uses_config()) {
        // process-exporter reads /proc: the same processes (the eBPF walk
        // misses those the host hides from it, such as a sandbox's pid 1) and
        // the same names (a kernel worker's with its workqueue suffix), with
        // or without --threads.
        so.source = snapshot_source::procfs;
        if (opts.threads) so.reuse_idle_threads_for = std::chrono::seconds(60);
    }
    // Otherwise the eBPF walk where it can be used, threads or not: one
    // source, so one group set, whatever --threads says.
    auto s = snapshotter::open(so);
    if (!s) return serve::error{error_kind::runtime, "cannot read " + opts.proc_root + ": " + s.error().message()};
    c->snap_ = std::move(*s);
    if (opts.exit_records && is_live_proc_root(opts.proc_root))
        c->exits_ = std::make_unique<exit_drain>(opts.exit_from);
    else
        c->exits_ = std::make_unique<exit_drain>(std::string("off"));
    return c;
}

collector::~collector() = default;

std::string collector::exit_source() const {
    const auto from = exits_->source();
    return from ? std::string(to_string(*from)) : "none (" + exits_->why() + ")";
}

void collector::collect() {
    const auto t0 = std::chrono::steady_clock::now();
    auto stat = read_system_cpu_times(opts_.proc_root);
    if (auto r = snap_.take(cur_); !r) {
        ++failures_;
        return;
    }
    tasks_read_ = cur_.processes.size();
    threads_read_ = cur_.threads.size();

    // Records up to this snapshot belong to the interval it closes.
    std::vector<ended_task> exits = exits_->take_until(cur_.since_boot);
    // Records dated before the previous snapshot but handed over after that
    // collection took its share (the drain thread was in between): this
    // interval counts them (late_records.hpp).
    if (have_prev_) (void)date_late_records(exits, prev_.since_boot);

    ledger_.reset();
    if (have_prev_ && stat && stat_prev_) {
        auto l = compute_ledger(prev_, cur_, exits, *stat_prev_, *stat);
        if (l) ledger_ = std::move(*l);
    }

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

    // Live processes: each adds what it used since its last sample, per mode,
    // never less than nothing (a tick-ratio split can shift between samples).
    const std::vector<proc_state*> states = assign_groups();
    for (std::size_t i = 0; i < cur_.processes.size(); ++i) {
        const snapshot_process& p = cur_.processes[i];
        proc_state& st = *states[i];
        const nanoseconds du = clamp0(p.times.user - st.user), ds = clamp0(p.times.kernel - st.system);
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
        if (opts_.namedprocess) members_.update(cur_, p, st.pe, g.pe);
    }

    // Processes that started and ended between the two snapshots: only their
    // exit records know them (before the gone ones are forgotten: they may be
    // their parents).
    if (ledger_) {
        const auto unseen_went = credit_unseen();
        // taskstats records are read in do_exit(), before the task's last
        // stretch of run time is accounted: the reaping parents' children
        // times give the rest (reaped.hpp). eBPF's are final.
        if (exits_->source() == exit_stream_source::taskstats) credit_reaped(unseen_went);
    }

    // Processes gone since the previous scrape: add their final values where a
    // record gives them exactly; otherwise their last sample stands, and the
    // group says how much of its counter such members make up.
    for (auto it = procs_.begin(); it != procs_.end();) {
        if (it->second.seen) {
            ++it;
            continue;
        }
        proc_state& st = it->second;
        const ended_process* fin = nullptr;
        if (ledger_)
            for (const auto& e : ledger_->processes)
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

    std::swap(prev_, cur_);
    have_prev_ = true;
    if (stat) stat_prev_ = *stat;
    ++collections_;
    last_duration_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string collector::scrape(format f) {
    std::lock_guard lk(mu_);
    const auto now = std::chrono::steady_clock::now();
    const int idx = f == format::openmetrics_100 ? 1 : 0;
    if (collections_ > 0 && now - last_collect_ < std::chrono::milliseconds(100)) {
        // The same collection, in whichever format is asked for now.
        if (cached_[idx].empty()) cached_[idx] = render(families(), f);
        return cached_[idx];
    }
    collect();
    last_collect_ = now;
    cached_[0].clear();
    cached_[1].clear();
    cached_[idx] = render(families(), f);
    return cached_[idx];
}

}  // namespace proctimes::cli::serve
