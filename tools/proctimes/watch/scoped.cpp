// SPDX-License-Identifier: MIT
// proctimes watch --all | --name REGEX | --user USER | --cgroup PATH
//                 [--duration S] [--interval S] [--end-source auto|exit-stream|snapshot]
//
// Every process in the scope that ends, as it ends, and on SIGINT/SIGTERM or
// after --duration the totals of what ran and ended in it. Ends come from the
// exit stream where it can be opened (root), else from snapshots taken every
// --interval (watch/tracker.hpp says what each can see). One poll(2) loop over
// the stop-signal pipe and the stream's socket, woken for each snapshot.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <ostream>

#include <poll.h>

#include <fmt/format.h>

#include "cli.hpp"
#include "commands.hpp"
#include "output/writers.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"
#include "watch/scope.hpp"
#include "watch/signals.hpp"
#include "watch/tracker.hpp"

namespace proctimes::cli {

namespace {

using std::chrono::nanoseconds;
using steady = std::chrono::steady_clock;

nanoseconds seconds_to_ns(double s) {
    return std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(s));
}

// The scope from the command line; a usage error (exit 2) is reported on err.
std::optional<watch_scope> make_scope(const watch_options& opts, std::ostream& err) {
    watch_scope s;
    s.all = opts.all;
    if (opts.name) {
        std::string why;
        s.name = pattern::compile(*opts.name, why);
        if (!s.name) {
            err << fmt::format("proctimes: watch: --name '{}': not a valid regular expression (RE2): {}\n",
                               escape_for_table(*opts.name), why);
            return std::nullopt;
        }
        s.name_text = *opts.name;
    }
    if (opts.user) {
        s.uid = user_argument(*opts.user);
        if (!s.uid) {
            err << fmt::format("proctimes: watch: --user '{}': no such user\n", escape_for_table(*opts.user));
            return std::nullopt;
        }
    }
    if (opts.cgroup) {
        std::string why;
        s.cgroup = resolve_cgroup(*opts.cgroup, why);
        if (!s.cgroup) {
            err << fmt::format("proctimes: watch: --cgroup: {}\n", why);
            return std::nullopt;
        }
    }
    return s;
}

std::string human(nanoseconds d) { return human_duration(d); }

void write_totals_table(std::ostream& out, const scope_totals& t, const watch_scope& scope) {
    out << fmt::format("-- {:.3f} s watched, {}, ends from {} --\n", std::chrono::duration<double>(t.interval).count(),
                       scope.describe(), t.source == end_seen_by::exit_stream ? "the exit stream" : "snapshots");
    out << fmt::format("ended:  {} processes ({} partial): kernel {}, user {}, total {}\n", t.ended, t.ended_partial,
                       human(t.ended_kernel), human(t.ended_user), human(t.ended_kernel + t.ended_user));
    out << fmt::format("        of which used while watched: {}\n", human(t.ended_during));
    out << fmt::format("alive:  {} processes, used while watched: kernel {}, user {}, total {}\n", t.alive,
                       human(t.alive_kernel), human(t.alive_user), human(t.alive_kernel + t.alive_user));
    if (t.cgroup_cpu) {
        out << fmt::format("cgroup: its counter grew by {}; not in the lines above: {}{}\n", human(*t.cgroup_cpu),
                           *t.unattributed < nanoseconds{0} ? "-" : "",
                           human(*t.unattributed < nanoseconds{0} ? -*t.unattributed : *t.unattributed));
    }
    if (t.lost_reports > 0)
        out << fmt::format("lost:   the exit stream lost records {} times (partial ends, or none)\n", t.lost_reports);
}

}  // namespace

int run_watch_scoped(const watch_options& opts, std::ostream& out, std::ostream& err) {
    if (!opts.pids.empty()) {
        err << "proctimes: watch: pids cannot be given with --all, --name, --user or --cgroup\n";
        return exit_usage;
    }
    if (opts.all && (opts.name || opts.user || opts.cgroup)) {
        err << "proctimes: watch: --all cannot be combined with --name, --user or --cgroup\n";
        return exit_usage;
    }
    auto scope = make_scope(opts, err);
    if (!scope) return exit_usage;

    // The stream tells of this system's tasks, by the pids of the initial
    // namespace: it matches only the live /proc.
    const bool live_proc = is_live_proc_root(opts.proc_root);
    if (opts.end_source == end_choice::exit_stream && !live_proc) {
        err << "proctimes: watch: --end-source exit-stream needs the live /proc (no --proc-root)\n";
        return exit_usage;
    }
    // The snapshotter first, and a walk to load what it uses (the eBPF
    // iterator takes tens of ms): then the stream, then at once the first
    // snapshot, so that few ends fall between the two (an end there, of a
    // process never seen alive, cannot be placed in a cgroup).
    snapshot_options so;
    so.proc_root = opts.proc_root;
    auto snapper = snapshotter::open(so);
    snapshot first;
    std::error_code proc_error;
    if (!snapper) {
        proc_error = snapper.error();
    } else if (auto r = snapper->take(first); !r) {
        proc_error = r.error();
    }
    if (proc_error) {
        err << fmt::format("proctimes: watch: cannot read {}: {}\n", escape_for_table(opts.proc_root),
                           proc_error.message());
        return exit_failure;
    }
    std::optional<exit_stream> stream;
    std::string no_stream;
    if (!live_proc) {
        no_stream = "--proc-root is not the live /proc";
    } else if (opts.end_source != end_choice::snapshot) {
        auto s = exit_stream::open();
        if (s) {
            stream = std::move(*s);
        } else {
            no_stream = s.error().message();
            if (opts.end_source == end_choice::exit_stream) {
                err << fmt::format("proctimes: watch: the exit stream cannot be opened: {}\n", no_stream);
                return exit_failure;
            }
        }
    } else {
        no_stream = "--end-source snapshot";
    }
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    const nanoseconds stream_opened = std::chrono::seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec};
    // The cgroup's counter just before the walk, and just after the last one
    // (below): what ran between the counter and a process's sample is in the
    // counter and not in the lines, never the other way round.
    const auto counter_before = scope->cgroup ? read_cgroup_counter(*scope->cgroup) : std::nullopt;
    if (auto r = snapper->take(first); !r) {
        err << fmt::format("proctimes: watch: cannot read {}: {}\n", escape_for_table(opts.proc_root),
                           r.error().message());
        return exit_failure;
    }
    if (scope->cgroup && !counter_before)
        err << fmt::format(
            "proctimes: watch: {}: no CPU counter can be read (cpu.stat or cpuacct.usage): the "
            "totals will not have the cgroup's own\n",
            escape_for_table(scope->cgroup->directory));

    const double interval_s = opts.interval;
    if (stream) {
        err << fmt::format(
            "proctimes: watch: ends from the exit stream ({}: every task's end, final CPU exact); "
            "snapshots every {:g} s for the processes alive in scope\n",
            to_string(*stream->source()), interval_s);
    } else {
        err << fmt::format(
            "proctimes: watch: ends from snapshots every {:g} s (no exit stream: {}): a process is "
            "reported once gone, with its last-seen values (exited_partial)\n",
            interval_s, no_stream);
    }

    stop_signals signals;
    if (signals.fd() < 0) {
        err << fmt::format("proctimes: watch: cannot create a pipe: {}\n", std::strerror(errno));
        return exit_failure;
    }
    scope_tracker tracker(*scope, opts.proc_root, stream.has_value());
    tracker.begin(first, stream_opened);

    const field_list fields = watch_scope_fields(opts.output);
    const auto writer = open_writer(out, opts.output.format, fields, opts.output, layout::stream);
    writer->flush();

    bool failed = false;
    std::vector<task_record> ended;
    std::vector<ended_task> exits;
    const auto emit = [&] {
        for (const auto& r : ended) writer->write(r);
        if (!ended.empty()) writer->flush();
        ended.clear();
    };
    nanoseconds latest_received{};  // the newest record's CLOCK_BOOTTIME
    const auto drain = [&] {
        if (!stream) return;
        exits.clear();
        auto r = stream->read(exits);
        if (!r) {
            err << fmt::format("proctimes: watch: reading the exit stream: {}; ends from snapshots from now on\n",
                               r.error().message());
            failed = true;
            stream.reset();
            return;
        }
        for (const auto& e : exits) latest_received = std::max(latest_received, e.received_since_boot);
        tracker.records(exits, *r, ended);
        emit();
    };
    snapshot cur;
    const auto take = [&]() -> bool {
        if (auto r = snapper->take(cur); !r) {
            err << fmt::format("proctimes: watch: cannot read {}: {}\n", escape_for_table(opts.proc_root),
                               r.error().message());
            failed = true;
            return false;
        }
        drain();  // every end before the walk is in the stream by now
        tracker.take(cur, ended);
        emit();
        return true;
    };

    const auto interval = seconds_to_ns(interval_s);
    const auto start = steady::now();
    const std::optional<steady::time_point> deadline =
        opts.duration ? std::optional(start + seconds_to_ns(*opts.duration)) : std::nullopt;
    auto next_snapshot = start + interval;
    int stopped_by = 0;
    for (;;) {
        const auto now = steady::now();
        if (deadline && now >= *deadline) break;
        if (now >= next_snapshot) {
            if (!take()) break;
            next_snapshot = std::max(next_snapshot + interval, steady::now());
            continue;
        }
        auto until = next_snapshot;
        if (deadline) until = std::min(until, *deadline);
        const auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
        pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {stream ? stream->native_handle() : -1, POLLIN, 0}};
        const int n = ::poll(fds, 2, static_cast<int>(std::clamp<long long>(wait_ms, 0, 60'000)));
        if (n < 0 && errno != EINTR) {
            err << fmt::format("proctimes: watch: poll: {}\n", std::strerror(errno));
            failed = true;
            break;
        }
        if (n <= 0) continue;
        if (fds[0].revents & POLLIN) {
            if ((stopped_by = signals.received()) != 0) break;
        }
        if (fds[1].revents & (POLLIN | POLLERR)) drain();
    }

    // The last look: the living and their CPU, and every end until now. A
    // process gone from it gets a moment for its record to come; so does every
    // end before it when the eBPF stream sends records only after the reap
    // (until a record received after the walk shows it has caught up).
    if (!take()) cur = first;
    const bool late_records = stream && stream->source() == exit_stream_source::bpf;
    const auto waiting = [&] {
        return stream && (tracker.has_gone() || (late_records && latest_received < cur.since_boot));
    };
    if (waiting()) {
        const auto until = steady::now() + scope_tracker::grace;
        for (auto now = steady::now(); waiting() && now < until; now = steady::now()) {
            pollfd fd{stream->native_handle(), POLLIN, 0};
            const auto ms = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
            if (::poll(&fd, 1, static_cast<int>(ms)) > 0) drain();
        }
    }
    tracker.flush_gone(ended);
    emit();
    const auto counter_after = scope->cgroup ? read_cgroup_counter(*scope->cgroup) : std::nullopt;
    std::optional<nanoseconds> cgroup_delta;
    if (counter_before && counter_after) cgroup_delta = *counter_after - *counter_before;
    task_record totals;
    totals.totals = tracker.totals(cur.since_boot - first.since_boot, cgroup_delta);
    writer->finish();
    if (opts.output.format == output_format::table) {
        write_totals_table(out, *totals.totals, *scope);
    } else {
        // JSON: one more line, "record": "totals". CSV: after an empty line,
        // the totals' own header and row.
        if (opts.output.format == output_format::csv) out << '\n';
        const field_list tf = watch_totals_fields();
        const auto tw = open_writer(out, opts.output.format, tf, opts.output, layout::stream);
        tw->write(totals);
        tw->finish();
    }
    const int status = finish_output(out, err, failed);
    return stopped_by != 0 ? 128 + stopped_by : status;
}

}  // namespace proctimes::cli
