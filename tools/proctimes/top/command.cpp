// SPDX-License-Identifier: MIT
// proctimes top [-d SECS] [-p PID] [-H] [-u USER]          the full-screen view
// proctimes top --replay [--store PATH] [--at TIME]             a recording
// proctimes top -b --replay [--from T1] [--to T2] [-n N] ...    its frames for scripts
// proctimes top -b [-n N] [-d SECS] [--format table|json] [-H] [-p PID]
//               [-u USER] [--top N] [--utc]              frames for scripts
//
// Registers the command, checks its options and opens the live feed
// (live_feed.hpp) for the screen (screen.hpp) or the batch writer
// (batch.hpp).
#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "numbers.hpp"
#include "record/replay.hpp"
#include "record/when.hpp"
#include "system.hpp"
#include "top/batch.hpp"
#include "top/live_feed.hpp"
#include "top/screen.hpp"
#include "users.hpp"

namespace proctimes::cli {

namespace {

struct top_options {
    bool batch = false;
    double delay = 2.0;
    std::optional<unsigned> count;
    output_format format = output_format::table;
    std::optional<std::size_t> top;
    bool threads = false;
    std::vector<std::string> pids;
    std::optional<std::string> user;
    bool utc = false;
    bool replay = false;
    std::optional<std::string> store;
    std::optional<std::string> at;
    std::optional<std::string> from, to;
};

std::optional<instant> time_option(const std::optional<std::string>& text, const char* name, std::ostream& err,
                                   bool& bad) {
    if (!text) return std::nullopt;
    const instant now = std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
    const auto t = record::parse_instant(*text, now);
    if (t.ok()) return t.value();
    err << fmt::format("proctimes top: --{}: {}\n", name, t.why());
    bad = true;
    return std::nullopt;
}

// `top -b --replay`: the recorded intervals taken in [--from, --to] (or
// from --at), written as the batch mode writes live frames, one read at a time.
int run_replay_batch(const top_options& opts, std::ostream& out, std::ostream& err) {
    bool bad = false;
    const auto at = time_option(opts.at, "at", err, bad);
    const auto from = time_option(opts.from, "from", err, bad);
    const auto to = time_option(opts.to, "to", err, bad);
    if (bad) return exit_usage;
    auto s = record::store::open_reader(opts.store.value_or(record::default_store_path));
    if (!s) {
        err << fmt::format("proctimes top: {}\n", s.error().message);
        return exit_failure;
    }
    top::batch_options bo;
    bo.format = opts.format;
    bo.top = opts.top;
    bo.threads = opts.threads;
    bo.utc = opts.utc;
    const instant start = from.value_or(at.value_or(instant{}));
    auto f = s->interval_at(start);
    for (unsigned n = 0; f && f->taken >= start && (!to || f->taken <= *to) && (!opts.count || n < *opts.count); ++n) {
        if (opts.format == output_format::json) {
            out << top::frame_json(*f, bo) << '\n';
        } else {
            if (n > 0) out << '\n';
            out << top::frame_table(*f, bo);
        }
        if (!out) break;
        f = s->next(f->taken);
    }
    if (!f && f.error().kind != record::error_kind::not_found) {
        err << fmt::format("proctimes top: {}\n", f.error().message);
        return finish_output(out, err, true);
    }
    return finish_output(out, err, false);
}

int run_replay(const top_options& opts, std::ostream& err) {
    std::optional<instant> at;
    if (opts.at) {
        const instant now = std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
        const auto t = record::parse_instant(*opts.at, now);
        if (!t.ok()) {
            err << fmt::format("proctimes top: --at: {}\n", t.why());
            return exit_usage;
        }
        at = t.value();
    }
    auto feed = record::replay_feed::open(opts.store.value_or(record::default_store_path), at);
    if (!feed) {
        err << fmt::format("proctimes top: {}\n", feed.error().message);
        return exit_failure;
    }
    top::screen_options so;
    so.interval = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(opts.delay));
    so.allow_signals = false;
    return top::run_screen(**feed, so, err);
}

int run_top(const top_options& opts, std::ostream& out, std::ostream& err) {
    if (opts.replay) {
        if (opts.batch) return run_replay_batch(opts, out, err);
        if (!sys::terminal_of(out)) {
            err << "proctimes top: standard output is not a terminal; the replay is a full-screen view\n";
            return exit_usage;
        }
        return run_replay(opts, err);
    }
    if (!opts.batch && !sys::terminal_of(out)) {
        err << "proctimes top: standard output is not a terminal; use -b for batch frames\n";
        return exit_usage;
    }
    top::live_options lo;
    lo.threads = opts.threads;
    if (opts.user) {
        lo.only_uid = user_argument(*opts.user);
        if (!lo.only_uid) {
            err << fmt::format("proctimes top: '{}': no such user\n", escape_for_table(*opts.user));
            return exit_usage;
        }
    }
    for (const auto& p : opts.pids) {
        const auto pid = pid_argument(p, nullptr);
        if (!pid || *pid <= 0) {
            err << fmt::format("proctimes top: '{}': not a process id\n", escape_for_table(p));
            return exit_usage;
        }
        lo.pids.push_back(*pid);
    }
    const auto interval =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(opts.delay));
    auto feed = top::open_live_feed(lo);
    if (!feed) {
        err << fmt::format("proctimes top: cannot read the processes: {}\n", feed.error().message());
        return exit_failure;
    }
    if (!opts.batch) {
        top::screen_options so;
        so.interval = interval;
        so.threads = opts.threads;
        if (!lo.pids.empty()) so.follow = lo.pids.front();
        return top::run_screen(**feed, so, err);
    }
    top::batch_options bo;
    bo.interval = interval;
    bo.count = opts.count;
    bo.format = opts.format;
    bo.top = opts.top;
    bo.threads = opts.threads;
    bo.utc = opts.utc;
    return top::run_batch(**feed, bo, out, err);
}

}  // namespace

subcommand add_top(CLI::App& root) {
    constexpr std::uint64_t max_count = 4'294'967'295;
    auto opts = std::make_shared<top_options>();
    CLI::App* app = root.add_subcommand(
        "top",
        "The live view of what uses the CPU: every process, the ones that ended between two refreshes, "
        "and the ledger that adds them up to the machine's busy CPU; with -b, frames for scripts.");
    auto* batch = app->add_flag("-b,--batch", opts->batch, "Write frames to standard output instead of the screen");
    app->add_option("-d,--delay", opts->delay, "Seconds between refreshes (default 2; 0.1 to 86400)")
        ->check(seconds_in(std::chrono::milliseconds{100}, std::chrono::hours{24}, "0.1 s to 1 day"))
        ->type_name("SECS");
    add_optional(app, "-n,--iterations", opts->count, "With -b: stop after N frames (default: until interrupted)")
        ->check(whole_number_in(1, max_count))
        ->needs(batch)
        ->type_name("N");
    add_choice(app, "-f,--format", opts->format, output_format_words,
               "With -b: table (default) or json (one object per frame on one line)",
               {output_format::table, output_format::json})
        ->needs(batch)
        ->type_name("FORMAT");
    add_optional(app, "--top", opts->top, "With -b: at most N process rows per frame, the busiest")
        ->check(whole_number_in(1, max_count))
        ->needs(batch)
        ->type_name("N");
    app->add_flag("-H,--threads", opts->threads, "List the threads of each process");
    app->add_option("-p,--pid", opts->pids, "Only this process (repeatable, or PID,PID,...)")
        ->delimiter(',')
        ->type_name("PID");
    add_optional(app, "-u,--user", opts->user, "Only processes whose effective user is USER (a name or a uid)")
        ->type_name("USER");
    auto* replay = app->add_flag("--replay", opts->replay,
                                 "Show a recording (proctimes record) instead of the live machine: [ ] or Left/Right "
                                 "step an interval, j jumps to a time");
    add_optional(app, "--store", opts->store,
                 fmt::format("With --replay: the store (default {})", record::default_store_path))
        ->needs(replay)
        ->type_name("PATH");
    add_optional(app, "--at", opts->at,
                 "With --replay: start at the interval covering TIME (2026-11-28T03:00:00Z, -1h, 'today 03:00'; "
                 "default: the first recorded)")
        ->needs(replay)
        ->type_name("TIME");
    add_optional(app, "--from", opts->from, "With -b --replay: the first interval taken at or after TIME")
        ->needs(replay)
        ->needs(batch)
        ->type_name("TIME");
    add_optional(app, "--to", opts->to, "With -b --replay: the last interval taken at or before TIME")
        ->needs(replay)
        ->needs(batch)
        ->type_name("TIME");
    app->add_flag("--utc", opts->utc, "Table: the frame's time in UTC rather than local time");
    app->footer(
        "JSON (-b --format json): one object per frame on one line. Its rows have the fields of\n"
        "'ps --interval --ledger --format json', then ended, exit_code, exit_signal, thread_count,\n"
        "rss_bytes, interval_read_bytes, interval_write_bytes, interval_voluntary_switches,\n"
        "interval_involuntary_switches, command and cgroup; its ledger is ps's ledger record (docs/CLI.md).\n"
        "Exit status: 0 success, 1 frames could not be read or written, 2 usage error (also: no terminal\n"
        "for the full-screen view).\n");
    return {app, [opts](std::ostream& out, std::ostream& err) { return run_top(*opts, out, err); }};
}

}  // namespace proctimes::cli
