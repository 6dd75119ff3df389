// SPDX-License-Identifier: MIT
#include "serve/collect/collector.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

#include "commands.hpp"
#include "frames/frames.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/snapshot.hpp"
#include "serve/collect/late_records.hpp"

namespace proctimes::cli::serve {

std::unique_ptr<collector> collector::make(const serve_options& opts, std::string& error) {
    auto c = open(opts);
    if (!c) {
        error = c.error().message;
        return nullptr;
    }
    return std::move(*c);
}

namespace {

// Whether the eBPF walk lists every process /proc lists: the open-coded task
// walk (Linux 6.7+) reaches an init process the kernel keeps from BPF
// programs itself (docs/BPF.md, "The init process").
bool walk_lists_what_proc_lists(const std::string& proc_root) {
    if (!is_live_proc_root(proc_root)) return false;
    const bpf_source_status s = bpf_snapshot_status();
    return s.usable && s.program == "task walk";
}

}  // namespace

outcome<std::unique_ptr<collector>> collector::open(const serve_options& opts) {
    auto membership = group_membership::make(opts);
    if (!membership) return membership.error();
    std::unique_ptr<collector> c(new collector(std::move(*membership)));
    c->opts_ = opts;
    c->members_ = member_reader(opts);
    snapshot_options so;
    so.proc_root = opts.proc_root;
    so.threads = opts.threads;
    if ((opts.namedprocess || c->membership_.uses_rules()) && !walk_lists_what_proc_lists(opts.proc_root)) {
        // process-exporter reads /proc: the same processes (the eBPF task
        // iterator of kernels before 6.7 can miss one the host hides from
        // it, such as a sandbox's pid 1), with or without --threads.
        so.source = snapshot_source::procfs;
        if (opts.threads) so.reuse_idle_threads_for = std::chrono::seconds(60);
    }
    // Otherwise the eBPF walk where it can be used, threads or not: one
    // source, so one group set, whatever --threads says. The rules name a
    // kernel thread by /proc's name all the same (classifier::rules_verdict).
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

status collector::read_interval(std::optional<system_cpu_times>& stat) {
    stat.reset();
    if (auto read = read_system_cpu_times(opts_.proc_root)) stat = *read;
    if (auto r = snap_.take(cur_); !r)
        return serve::error{error_kind::runtime, "cannot read " + opts_.proc_root + ": " + r.error().message()};

    // Records up to this snapshot belong to the interval it closes, and
    // those held from the last one (first: arrival order).
    std::vector<ended_task> exits = std::move(held_);
    held_.clear();
    {
        std::vector<ended_task> came = exits_->take_until(cur_.since_boot);
        exits.insert(exits.end(), std::make_move_iterator(came.begin()), std::make_move_iterator(came.end()));
    }
    // Records dated before the previous snapshot but handed over after that
    // collection took its share (the thread that reads them was in between),
    // and those held: this interval counts them (late_records.hpp).
    if (have_prev_) (void)date_late_records(exits, prev_.since_boot);
    // Ends of processes this snapshot still lists wait for the next interval
    // (frames::still_listed): this one counts what the walk read of them.
    const std::vector<bool> held = frames::still_listed(exits, cur_);
    if (std::find(held.begin(), held.end(), true) != held.end()) {
        std::vector<ended_task> now;
        now.reserve(exits.size());
        for (std::size_t i = 0; i < exits.size(); ++i) (held[i] ? held_ : now).push_back(std::move(exits[i]));
        exits = std::move(now);
    }

    ledger_.reset();
    if (have_prev_ && stat && stat_prev_) {
        auto l = compute_ledger(prev_, cur_, exits, *stat_prev_, *stat);
        if (l) ledger_ = std::move(*l);
    }
    return ok();
}

void collector::collect() {
    const auto t0 = std::chrono::steady_clock::now();
    collection_account& account = cache_.account();
    std::optional<system_cpu_times> stat;
    if (auto read = read_interval(stat); !read) {
        ++account.failures;  // proctimes_scrape_failures_total says it; the scrape shows the last good state
        return;
    }
    account.tasks_read = cur_.processes.size();
    account.threads_read = cur_.threads.size();

    membership_.update(prev_, cur_, ledger_ ? &*ledger_ : nullptr, exits_->source() == exit_stream_source::taskstats,
                       opts_.namedprocess ? &members_ : nullptr);

    std::swap(prev_, cur_);
    have_prev_ = true;
    if (stat) stat_prev_ = *stat;
    ++account.collections;
    account.last_duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string collector::scrape(format f) {
    std::lock_guard lk(mu_);
    if (!cache_.serves(std::chrono::steady_clock::now())) {
        collect();
        // The window runs from the collection's end, so that a scrape sent
        // right after another shares it however long the collection took.
        cache_.collected(std::chrono::steady_clock::now());
    }
    return cache_.exposition(f, [this](format g) { return render(families(), g); });
}

}  // namespace proctimes::cli::serve
