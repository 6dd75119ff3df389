// SPDX-License-Identifier: MIT
// proctimes ps [--threads] [--sort KEY] [--top N] [--user NAME] [--format F] [--utc]
//              [--precise] [--interval SECONDS [--count N] [--reuse-idle SECONDS]]
//              [--proc-root DIR]
//
// One whole-system snapshot (proctimes::take_snapshot), or with --interval a
// refreshing view of the CPU each process used over the last interval
// (proctimes::compute_delta between successive snapshots). Records go to the
// shared writers (output/writers.hpp) with the ps field list (record_fields).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "numbers.hpp"
#include "output/writers.hpp"
#include "proctimes/snapshot.hpp"
#include "ps/internal.hpp"

namespace proctimes::cli {

namespace ps_detail {

using std::chrono::nanoseconds;

// CPU to sort by: used in the interval when there is one, else the total.
nanoseconds sort_cpu(const task_record& r, bool kernel, bool user) {
    const nanoseconds k = r.used ? r.used->kernel : r.kernel;
    const nanoseconds u = r.used ? r.used->user : r.user;
    return (kernel ? k : nanoseconds{0}) + (user ? u : nanoseconds{0});
}

// Orders records (and the threads of each) by `key`; ties by pid, then tid.
void sort_records(std::vector<task_record>& records, ps_sort key) {
    auto id = [](const task_record& r) { return std::pair{r.pid, r.tid.value_or(0)}; };
    auto less = [&](const task_record& a, const task_record& b) {
        if (key == ps_sort::name) {
            if (a.name != b.name) return a.name < b.name;
        } else if (key == ps_sort::start) {
            if (a.creation != b.creation) return a.creation < b.creation;
        } else if (key == ps_sort::cpu || key == ps_sort::kernel || key == ps_sort::user) {
            const bool k = key != ps_sort::user, u = key != ps_sort::kernel;
            const auto ca = sort_cpu(a, k, u), cb = sort_cpu(b, k, u);
            if (ca != cb) return ca > cb;  // busiest first
        }
        return id(a) < id(b);
    };
    std::stable_sort(records.begin(), records.end(), less);
    for (auto& r : records) std::stable_sort(r.threads.begin(), r.threads.end(), less);
}

void report_failures(const snapshot& s, std::ostream& err) {
    for (const auto& f : s.failures) {
        switch (f.item) {
            case snapshot_item::process:
                err << fmt::format("proctimes: pid {}: {}\n", f.pid, f.error.message());
                break;
            case snapshot_item::owner:
                err << fmt::format("proctimes: pid {}: cannot read its owner: {}\n", f.pid, f.error.message());
                break;
            case snapshot_item::thread_list:
                err << fmt::format("proctimes: pid {}: cannot list threads: {}\n", f.pid, f.error.message());
                break;
            case snapshot_item::thread:
                err << fmt::format("proctimes: pid {}: thread {}: {}\n", f.pid, f.tid, f.error.message());
                break;
        }
    }
}

snapshot_options snapshot_options_of(const ps_options& opts) {
    snapshot_options so;
    so.threads = opts.threads;
    so.proc_root = opts.proc_root;
    so.source = opts.source;
    so.cpu = opts.precise ? snapshot_cpu::precise : snapshot_cpu::precise_processes;
    if (opts.reuse_idle)
        so.reuse_idle_threads_for =
            std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(*opts.reuse_idle));
    return so;
}

// Keeps the first `n` processes.
void keep_top(std::vector<task_record>& records, std::optional<std::size_t> n) {
    if (n && records.size() > *n) records.resize(*n);
}

int run_once(const ps_options& opts, std::optional<user_id> only_uid, std::ostream& out, std::ostream& err) {
    auto s = take_snapshot(snapshot_options_of(opts));
    if (!s) {
        err << fmt::format("proctimes: cannot take a snapshot of {}: {}\n", opts.proc_root, s.error().message());
        return exit_failure;
    }
    report_failures(*s, err);
    note_snapshot_source(*s, opts.source, err);
    user_names users;
    auto records = build_records(*s, nullptr, opts.threads, only_uid, users);
    // --top alone means the busiest: total CPU for one snapshot.
    sort_records(records, opts.sort.value_or(opts.top ? ps_sort::cpu : ps_sort::pid));
    keep_top(records, opts.top);
    output_options o = opts.output;
    o.threads = opts.threads;
    o.ps = true;
    o.state = true;
    write_all(out, o.format, record_fields(o), o, records);
    return finish_output(out, err, !s->failures.empty());
}

}  // namespace ps_detail

using std::chrono::nanoseconds;

int run_ps(const ps_options& opts, std::ostream& out, std::ostream& err) {
    std::optional<user_id> only_uid;
    if (opts.user) {
        only_uid = user_argument(*opts.user);
        if (!only_uid) {
            err << fmt::format("proctimes: '{}': no such user\n", escape_for_table(*opts.user));
            return exit_usage;
        }
    }
    if (opts.interval) return ps_detail::run_interval(opts, only_uid, out, err);
    return ps_detail::run_once(opts, only_uid, out, err);
}

subcommand add_ps(CLI::App& root) {
    // The ranges of the numeric options (docs/CLI.md): counts fit the
    // unsigned the options are read into; a frame every millisecond at most,
    // every day at least, far from where a duration could overflow.
    constexpr std::uint64_t max_count = 4'294'967'295;
    constexpr nanoseconds min_seconds = std::chrono::milliseconds{1};
    constexpr nanoseconds max_seconds = std::chrono::hours{24};
    auto opts = std::make_shared<ps_options>();

    CLI::App* app = root.add_subcommand(
        "ps",
        "Every process (and thread) of the system with creation, kernel and user times, from one snapshot; "
        "with --interval, the CPU each used over the interval, refreshed.");
    auto* threads = app->add_flag("-t,--threads", opts->threads, "Also list every thread of each process");
    add_choice(app, "-s,--sort", opts->sort, ps_sort_words,
               "Order: cpu, kernel, user (busiest first), start (oldest first), pid, name "
               "(default: pid; cpu with --interval or --top)")
        ->type_name("KEY");
    add_optional(app, "-n,--top", opts->top,
                 "Show only the N busiest processes (by CPU over the interval, or total CPU for one "
                 "snapshot), or the first N in the --sort order")
        ->check(whole_number_in(1, max_count))
        ->type_name("N");
    add_optional(app, "-u,--user", opts->user, "Only processes whose effective user is NAME (or a uid)")
        ->type_name("NAME");
    add_output_options(*app, opts->output, "Output: table (default), json or csv");
    app->add_flag("--precise", opts->precise,
                  "Nanosecond CPU totals for threads too (reads schedstat per thread: slower)");
    auto* interval = add_optional(app, "-i,--interval", opts->interval,
                                  "Show the CPU used over each INTERVAL seconds, refreshing until interrupted")
                         ->check(seconds_in(min_seconds, max_seconds, "1 ms to 1 day"))
                         ->type_name("SECONDS");
    add_optional(app, "-c,--count", opts->count, "With --interval: stop after N refreshes")
        ->check(whole_number_in(1, max_count))
        ->needs(interval)
        ->type_name("N");
    add_optional(app, "--reuse-idle", opts->reuse_idle,
                 "With --interval and --threads: copy the threads of processes that did not run "
                 "since the previous frame instead of reading them again (CPU times stay exact; a "
                 "thread's state letter can be up to SECONDS old; every thread is read again at "
                 "least every SECONDS)")
        ->check(seconds_in(min_seconds, max_seconds, "1 ms to 1 day"))
        ->needs(interval)
        ->needs(threads)
        ->type_name("SECONDS");
    app->add_option("--proc-root", opts->proc_root, "Where procfs is mounted (default /proc)")->type_name("DIR");
    add_choice(app, "--source", opts->source, snapshot_source_words,
               "Where the snapshot comes from: auto (default: /proc for one snapshot, eBPF with --interval "
               "where permitted), procfs, or bpf (falls back to /proc, saying why; docs/BPF.md)",
               {snapshot_source::automatic, snapshot_source::procfs, snapshot_source::bpf})
        ->type_name("SOURCE");
    app->add_flag("--ledger", opts->ledger,
                  "With --interval, JSON and CSV: add the children columns and end each frame with "
                  "the ledger record (the table always shows both; docs/CLI.md)")
        ->needs(interval);
    add_choice(app, "--group-by", opts->group_by, ps_grouping_words,
               "With --interval: one row per group (name, user or cgroup) summing its processes, the ones "
               "that ended and the children they reaped; cgroup rows add the cgroup's own counter")
        ->needs(interval)
        ->type_name("KEY");
    app->footer(
        "JSON and CSV: the fields of 'show', then state and sampled_at_time (as in 'run'), then ppid, uid,\n"
        "user_name and proc_state; with --interval also interval_ns, interval_kernel_ns, interval_user_ns,\n"
        "cpu_percent, basis and exit_source; with --ledger also interval_children_kernel_ns and "
        "interval_children_user_ns,\n"
        "and a ledger record after each frame (docs/CLI.md).\n"
        "Exit status: 0 all shown, 1 some process or thread could not be read, 2 usage error.\n");

    return {app, [opts](std::ostream& out, std::ostream& err) { return run_ps(*opts, out, err); }};
}

}  // namespace proctimes::cli
