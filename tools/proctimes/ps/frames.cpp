// SPDX-License-Identifier: MIT
// `proctimes ps --interval`: a frame every INTERVAL seconds — the CPU each
// process used in the interval, the processes that ended in it, the children
// their parents reaped, and the ledger that adds it all up to what /proc/stat
// says the machine was busy (ledger.cpp); redrawn in place on a terminal.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "commands.hpp"
#include "output/writers.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"
#include "ps/internal.hpp"
#include "system.hpp"

namespace proctimes::cli::ps_detail {

namespace {

using std::chrono::nanoseconds;

// The terminal's size, when `out` is the standard output and a terminal.
struct terminal {
    bool is_tty = false;
    int rows = 0;
    int cols = 0;
};
terminal terminal_of(const std::ostream& out) {
    terminal t;
    const auto size = sys::terminal_of(out);
    if (!size) return t;
    t.is_tty = true;
    t.rows = size->rows;
    t.cols = size->cols;
    return t;
}

// One frame of --interval for a terminal: the cursor goes home, every line
// is cut to the width and cleared to its end, and what is left of the screen
// below is cleared — no full-screen erase, so no flicker, in a plain
// terminal as in tmux.
void draw_frame(std::ostream& out, const std::string& text, const terminal& term) {
    std::string frame = "\x1b[H";
    std::istringstream lines(text);
    std::string line;
    int row = 0;
    while (std::getline(lines, line)) {
        if (term.rows > 0 && row >= term.rows - 1) break;
        if (term.cols > 0 && static_cast<int>(line.size()) > term.cols) {
            // Cut at a column, not inside a UTF-8 sequence ("µ").
            std::size_t cut = 0;
            int cols = 0;
            while (cut < line.size() && cols < term.cols) {
                ++cut;
                while (cut < line.size() && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) ++cut;
                ++cols;
            }
            line.resize(cut);
        }
        frame += line;
        frame += "\x1b[K\n";
        ++row;
    }
    frame += "\x1b[J";
    out << frame << std::flush;
}

std::string header_line(const snapshot& s, const snapshot_delta& d, const ps_options& opts, std::size_t shown) {
    const double interval_s = std::chrono::duration<double>(d.interval).count();
    const double total =
        d.interval.count() > 0 ? 100.0 * std::chrono::duration<double>(d.total_cpu()).count() / interval_s : 0.0;
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    return fmt::format(
        "proctimes ps  {}  CPU used in the last {:.2f} s: {:.1f} % (of {} %, {} CPUs)  "
        "processes {}  threads {}  shown {}",
        table_time(s.taken, opts.output.utc), interval_s, total, cpus * 100, cpus, s.processes.size(),
        s.has_threads ? std::to_string(s.threads.size()) : std::string("-"), shown);
}

}  // namespace

int run_interval(const ps_options& opts, std::optional<user_id> only_uid, std::ostream& out, std::ostream& err) {
    auto taker = snapshotter::open(snapshot_options_of(opts));
    if (!taker) {
        err << fmt::format("proctimes: cannot take a snapshot of {}: {}\n", opts.proc_root, taker.error().message());
        return exit_failure;
    }
    const terminal term = opts.redraw == redraw_mode::never    ? terminal{}
                          : opts.redraw == redraw_mode::always ? terminal{true, 0, 0}
                                                               : terminal_of(out);
    user_names users;
    ledger_sources sources;
    sources.open(opts.proc_root);
    const bool by_cgroup = opts.group_by == ps_grouping::cgroup;
    cgroup_readings groups_prev, groups_cur;
    snapshot prev, cur;
    if (auto r = taker->take(prev); !r) {
        err << fmt::format("proctimes: cannot take a snapshot of {}: {}\n", opts.proc_root, r.error().message());
        return exit_failure;
    }
    sources.read_stat(opts.proc_root);
    if (by_cgroup) groups_prev = read_cgroups(prev, opts.proc_root);
    note_snapshot_source(prev, opts.source, err);
    const auto step = std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(*opts.interval));
    bool failed = false;
    for (unsigned frame = 0; !opts.count || frame < *opts.count; ++frame) {
        // Each interval runs from the start of one walk to the start of the
        // next and is never shorter than asked (a late frame does not make the
        // next one short). Exit records are read while waiting.
        sources.sleep_until(prev.since_boot + step);
        if (auto r = taker->take(cur); !r) {
            err << fmt::format("proctimes: cannot take a snapshot of {}: {}\n", opts.proc_root, r.error().message());
            return exit_failure;
        }
        sources.read_stat(opts.proc_root);
        if (by_cgroup) groups_cur = read_cgroups(cur, opts.proc_root);
        if (!term.is_tty) report_failures(cur, err);
        failed = failed || !cur.failures.empty();
        auto delta = compute_delta(prev, cur);
        if (!delta) {
            err << fmt::format("proctimes: {}\n", delta.error().message());
            return exit_failure;
        }
        const auto ledger = sources.ledger(prev, cur);
        auto records = build_records(cur, &*delta, opts.threads, only_uid, users);
        if (ledger) add_ledger_records(records, *ledger, sources, cur, opts.threads, only_uid, users);
        output_options o = opts.output;
        o.threads = opts.threads;
        o.ps = true;
        o.state = true;
        o.interval = true;
        o.children = opts.ledger || o.format == output_format::table;
        std::ostringstream text;
        if (opts.group_by != ps_grouping::none) {
            const cpu_ledger* l = ledger ? &*ledger : nullptr;
            const auto rows =
                group_rows(records, l, opts, by_cgroup ? &groups_prev : nullptr, by_cgroup ? &groups_cur : nullptr);
            if (o.format == output_format::table) text << header_line(cur, *delta, opts, rows.size()) << "\n\n";
            write_groups(text, rows, l, opts);
        } else {
            sort_records(records, opts.sort.value_or(ps_sort::cpu));
            std::optional<std::size_t> top = opts.top;
            // On a terminal, as many processes as fit under the two header
            // lines, the column titles and the ledger's lines.
            if (term.is_tty && !top && term.rows > 7 && !opts.threads) top = static_cast<std::size_t>(term.rows - 7);
            keep_top(records, top);
            if (o.format == output_format::table) text << header_line(cur, *delta, opts, records.size()) << "\n\n";
            write_all(text, o.format, record_fields(o), o, records);
        }
        if (o.format == output_format::table || opts.ledger) write_ledger(text, ledger, sources, o.format);
        if (term.is_tty) {
            draw_frame(out, text.str(), term);
        } else {
            if (frame > 0) out << '\n';
            out << text.str() << std::flush;
        }
        if (!out) break;
        sources.forget_until(cur.since_boot);
        std::swap(prev, cur);
        if (by_cgroup) std::swap(groups_prev, groups_cur);
    }
    return finish_output(out, err, failed);
}

}  // namespace proctimes::cli::ps_detail
