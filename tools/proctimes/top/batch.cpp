// SPDX-License-Identifier: MIT
// `proctimes top -b`: frames written one after another. JSON rows are made by
// the JSON writer of `ps --interval --ledger` (the same field list, so the
// same names and values), with top's own fields after them; the ledger object
// is ps's ledger record.
#include "top/batch.hpp"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frames/frames.hpp"
#include "output/fields.hpp"
#include "output/writers.hpp"
#include "system.hpp"

namespace proctimes::cli::top {

namespace {

using std::chrono::nanoseconds;

double seconds(nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// The ps record a row was made from.
task_record record_of(const top_row& r, nanoseconds interval, bool with_interval) {
    task_record t;
    t.pid = r.pid;
    t.tid = r.tid;
    t.name = r.name;
    t.creation = r.creation;
    t.exit = r.exit;
    t.exit_source = r.exit_source;
    t.kernel = r.kernel;
    t.user = r.user;
    t.resolution = r.resolution;
    t.total_resolution = r.total_resolution;
    t.source = r.source;
    t.state = r.ended || r.state == 'Z' ? task_state::exited : task_state::running;
    t.sampled_at = r.sampled_at;
    ps_values v;
    v.ppid = r.ppid;
    v.uid = r.uid;
    v.user_name = r.user_name;
    v.proc_state = r.state;
    t.ps = v;
    if (with_interval) {
        interval_values u;
        u.interval = interval;
        u.kernel = r.interval_kernel;
        u.user = r.interval_user;
        u.cpu_percent = interval.count() > 0 ? 100.0 * seconds(r.interval_cpu()) / seconds(interval) : 0.0;
        u.basis = word_value<interval_basis>(r.basis).value_or(interval_basis::both);
        if (!r.tid) {
            u.children_kernel = r.interval_children_kernel;
            u.children_user = r.interval_children_user;
        }
        t.used = u;
    }
    for (const auto& th : r.thread_rows) t.threads.push_back(record_of(th, interval, with_interval));
    return t;
}

output_options ps_output(bool threads) {
    output_options o;
    o.format = output_format::json;
    o.threads = threads;
    o.ps = true;
    o.state = true;
    o.interval = true;
    o.children = true;
    return o;
}

// top's own fields after a row's ps fields.
void add_own_fields(std::string& obj, const top_row& r) {
    auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string("null"); };
    obj += fmt::format(",\"ended\":{},\"exit_code\":{},\"exit_signal\":{},\"thread_count\":{},\"rss_bytes\":{}",
                       r.ended ? "true" : "false", opt(r.exit_code), opt(r.exit_signal), r.threads, opt(r.rss_bytes));
    obj +=
        fmt::format(",\"interval_read_bytes\":{},\"interval_write_bytes\":{}", opt(r.read_bytes), opt(r.write_bytes));
    obj += fmt::format(",\"interval_voluntary_switches\":{},\"interval_involuntary_switches\":{}",
                       opt(r.voluntary_switches), opt(r.involuntary_switches));
    obj += ",\"command\":";
    append_json_string(obj, r.command);
    obj += ",\"cgroup\":";
    append_json_string(obj, r.cgroup);
}

std::string percent(double share) { return fmt::format("{:.1f}", 100.0 * share); }

std::string bytes_text(std::uint64_t b) {
    if (b >= (1ULL << 30)) return fmt::format("{:.1f}G", static_cast<double>(b) / (1ULL << 30));
    if (b >= (1ULL << 20)) return fmt::format("{:.1f}M", static_cast<double>(b) / (1ULL << 20));
    if (b >= (1ULL << 10)) return fmt::format("{:.0f}K", static_cast<double>(b) / (1ULL << 10));
    return fmt::format("{}B", b);
}

std::string uptime_text(const top_frame& f) {
    constexpr std::int64_t minutes_a_day = std::int64_t{60} * 24;
    const auto up = std::chrono::duration_cast<std::chrono::minutes>(f.uptime);
    const auto days = up.count() / minutes_a_day;
    const auto hours = (up.count() / 60) % 24;
    const auto mins = up.count() % 60;
    return days > 0 ? fmt::format("{} d {:02}:{:02}", days, hours, mins) : fmt::format("{:02}:{:02}", hours, mins);
}

}  // namespace

void sort_rows_by_cpu(std::vector<top_row>& rows) {
    std::stable_sort(rows.begin(), rows.end(), [](const top_row& a, const top_row& b) {
        if (a.interval_cpu() != b.interval_cpu()) return a.interval_cpu() > b.interval_cpu();
        if (a.interval_children_cpu() != b.interval_children_cpu())
            return a.interval_children_cpu() > b.interval_children_cpu();
        return a.pid < b.pid;
    });
}

std::string frame_json(const top_frame& f, const batch_options& opts) {
    nlohmann::ordered_json head;
    head["record"] = "frame";
    head["frame"] = f.number;
    head["taken_time"] = rfc3339_utc(f.taken);
    head["interval_ns"] = f.interval.count();
    head["cpus"] = f.cpus;
    head["busy_percent"] = 100.0 * f.busy;
    auto per = nlohmann::ordered_json::array();
    for (double b : f.busy_per_cpu) per.push_back(100.0 * b);
    head["cpu_busy_percent"] = per;
    head["load"] = {f.load[0], f.load[1], f.load[2]};
    head["memory_total_bytes"] = f.memory_total;
    head["memory_available_bytes"] = f.memory_available;
    head["tasks"] = f.tasks;
    head["ended_source"] = f.ended_source;
    if (f.ledger || !f.ledger_error.empty()) {
        head["ledger"] = frames::ledger_record(f.ledger ? &*f.ledger : nullptr, f.ledger_error, f.exit_stream,
                                               f.ended_source_note, f.records_lost_any, f.records_lost);
    } else {
        head["ledger"] = nullptr;
    }
    if (!f.warnings.empty()) head["warnings"] = f.warnings;
    std::string text = head.dump(-1, ' ', true);
    text.pop_back();  // the closing brace: the rows follow
    text += ",\"processes\":[";

    std::vector<top_row> rows = f.rows;
    sort_rows_by_cpu(rows);
    if (opts.top && rows.size() > *opts.top) rows.resize(*opts.top);
    const output_options o = ps_output(opts.threads);
    const field_list fields = record_fields(o);
    const bool with_interval = f.interval.count() > 0;
    bool first = true;
    for (const auto& r : rows) {
        std::ostringstream one;
        {
            auto w = open_json_writer(one, fields, layout::stream);
            w->write(record_of(r, f.interval, with_interval));
            w->finish();
        }
        std::string obj = one.str();
        while (!obj.empty() && (obj.back() == '\n' || obj.back() == ' ')) obj.pop_back();
        if (obj.empty() || obj.back() != '}') continue;
        obj.pop_back();
        add_own_fields(obj, r);
        obj += '}';
        if (!first) text += ',';
        first = false;
        text += obj;
    }
    text += "]}";
    return text;
}

std::string frame_table(const top_frame& f, const batch_options& opts) {
    std::string text;
    const double s = seconds(f.interval);
    text += fmt::format("proctimes top - {}  up {},  load average: {:.2f}, {:.2f}, {:.2f}\n",
                        table_time(f.taken, opts.utc), uptime_text(f), f.load[0], f.load[1], f.load[2]);
    std::size_t ended = 0;  // of the machine (the ledger's), else of the rows
    for (const auto& r : f.rows) ended += r.ended ? 1 : 0;
    if (f.ledger) ended = f.ledger->processes.size();
    text += fmt::format("Tasks: {} processes, {} threads; {} ended in the interval; {} rows; interval {:.2f} s\n",
                        f.live_processes, f.tasks, ended, f.rows.size(), s);
    std::string per;
    for (std::size_t i = 0; i < f.busy_per_cpu.size(); ++i)
        per += fmt::format("{}cpu{} {}%", i ? ", " : "", i, percent(f.busy_per_cpu[i]));
    text += fmt::format("CPU: {}% busy of {} CPUs{}{}\n", percent(f.busy), f.cpus, per.empty() ? "" : ": ", per);
    if (f.memory_total > 0)
        text += fmt::format(
            "Memory: {} total, {} available ({}% used)\n", bytes_text(f.memory_total), bytes_text(f.memory_available),
            percent(1.0 - static_cast<double>(f.memory_available) / static_cast<double>(f.memory_total)));
    if (f.ledger) {
        const auto& l = *f.ledger;
        const auto busy = l.busy.count() > 0 ? static_cast<double>(l.busy.count()) : 1.0;
        const auto pct = [&](nanoseconds v) {
            return fmt::format("{:.1f}", 100.0 * static_cast<double>(v.count()) / busy);
        };
        text += fmt::format("Ledger: attributed {}% (ended {}%), unattributed {}% of busy CPU; ended: {}\n",
                            pct(l.live + l.ended + l.reaped_children), pct(l.ended + l.reaped_children),
                            pct(l.unattributed), f.ended_source);
    } else if (!f.ledger_error.empty()) {
        text += fmt::format("Ledger: unavailable ({}); ended: {}\n", f.ledger_error, f.ended_source);
    } else {
        text += fmt::format("Ledger: none yet; ended: {}\n", f.ended_source);
    }
    if (!f.ended_source_note.empty()) text += fmt::format("  ({})\n", f.ended_source_note);
    if (f.records_lost_any)
        text += f.records_lost
                    ? fmt::format("  ({} exit records were lost: their CPU is in unattributed)\n", *f.records_lost)
                    : std::string("  (some exit records were lost: their CPU is in unattributed)\n");
    for (const auto& w : f.warnings) text += fmt::format("  warning: {}\n", escape_for_table(w));
    text += '\n';
    text += fmt::format("{:>7} {:<10} {} {:>6} {:>9} {:>9} {:>9} {:>4} {:>7}  {}\n", "PID", "USER", "S", "CPU%",
                        "KERNEL", "USER", "CHILDREN", "THR", "RES", "COMMAND");

    std::vector<top_row> rows = f.rows;
    sort_rows_by_cpu(rows);
    if (opts.top && rows.size() > *opts.top) rows.resize(*opts.top);
    const auto line = [&](const top_row& r, bool thread) {
        const double cpu = s > 0 ? 100.0 * seconds(r.interval_cpu()) / s : 0.0;
        std::string what =
            r.command.empty() || thread ? "[" + escape_for_table(r.name) + "]" : escape_for_table(r.command);
        if (r.ended) {
            std::string how = "ended";
            if (r.exit_signal) {
                how += fmt::format(", {}", sys::signal_name(*r.exit_signal));
            } else if (r.exit_code) {
                how += fmt::format(", exit {}", *r.exit_code);
            }
            what = "<" + how + "> " + what;
        }
        std::string user = escape_for_table(r.user_name);
        if (user.size() > 10) user.resize(10);
        text += fmt::format("{:>7} {:<10} {} {:>6.1f} {:>9} {:>9} {:>9} {:>4} {:>7}  {}\n",
                            thread && r.tid ? *r.tid : r.pid, user, r.state, cpu, human_duration(r.interval_kernel),
                            human_duration(r.interval_user), thread ? "" : human_duration(r.interval_children_cpu()),
                            thread ? std::string() : std::to_string(r.threads),
                            r.rss_bytes ? bytes_text(*r.rss_bytes) : std::string("-"), what);
    };
    for (const auto& r : rows) {
        line(r, false);
        if (opts.threads)
            for (const auto& t : r.thread_rows) line(t, true);
    }
    return text;
}

int run_batch(frame_feed& feed, const batch_options& opts, std::ostream& out, std::ostream& err) {
    // The first frame has no interval: it is the baseline, not written.
    if (auto first = feed.next(opts.interval); !first) {
        err << fmt::format("proctimes top: {}\n", first.error().message());
        return exit_failure;
    }
    for (unsigned n = 0; !opts.count || n < *opts.count; ++n) {
        auto f = feed.next(opts.interval);
        if (!f) {
            err << fmt::format("proctimes top: {}\n", f.error().message());
            return exit_failure;
        }
        f->number = n + 1;  // the frames written, counted from 1
        if (opts.format == output_format::json) {
            out << frame_json(*f, opts) << '\n' << std::flush;
        } else {
            if (n > 0) out << '\n';
            out << frame_table(*f, opts) << std::flush;
        }
        if (!out) break;
    }
    return finish_output(out, err, false);
}

}  // namespace proctimes::cli::top
