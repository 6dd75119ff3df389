// SPDX-License-Identifier: MIT
// proctimes show [PID...] [--threads] [--format table|json|csv] [--utc]
//
// Opens each process (and, with --threads, each of its threads) with the
// library's handles, reads its times and name once, and hands plain records to
// a writer. A pid that cannot be shown is reported on stderr and the others are
// still shown.
#include <memory>
#include <optional>
#include <ostream>
#include <system_error>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "numbers.hpp"
#include "output/writers.hpp"
#include "proctimes/error.hpp"
#include "proctimes/process.hpp"
#include "system.hpp"

namespace proctimes::cli {

namespace {

// "Gone" covers errc::no_such_process, errc::no_such_thread and a raw ESRCH.
bool vanished(std::error_code ec) { return ec == std::errc::no_such_process; }

void report(std::ostream& err, pid_t pid, std::error_code ec) {
    err << fmt::format("proctimes: pid {}: {}\n", pid, ec.message());
}

void collect_threads(const process& proc, task_record& rec, std::ostream& err, bool& failed) {
    const pid_t pid = proc.id();
    auto tids = proc.thread_ids();
    if (!tids) {
        err << fmt::format("proctimes: pid {}: cannot list threads: {}\n", pid, tids.error().message());
        failed = true;
        return;
    }
    for (const pid_t tid : *tids) {
        // A thread may end between the listing and any of these calls: it is
        // no longer part of the process, so it is skipped without a word.
        std::error_code ec;
        auto th = thread::open(pid, tid);
        if (!th) {
            ec = th.error();
        } else if (auto t = th->times(); !t) {
            ec = t.error();
        } else if (auto name = th->name(); !name) {
            ec = name.error();
        } else {
            rec.threads.push_back(make_record(pid, tid, std::move(*name), *t));
            continue;
        }
        if (vanished(ec)) continue;
        err << fmt::format("proctimes: pid {}: thread {}: {}\n", pid, tid, ec.message());
        failed = true;
    }
}

std::optional<task_record> collect_process(pid_t pid, bool threads, std::ostream& err, bool& failed) {
    auto proc = process::open(pid);
    if (!proc) {
        report(err, pid, proc.error());
        failed = true;
        return std::nullopt;
    }
    auto t = proc->times();
    if (!t) {
        report(err, pid, t.error());
        failed = true;
        return std::nullopt;
    }
    auto name = proc->name();
    if (!name) {
        report(err, pid, name.error());
        failed = true;
        return std::nullopt;
    }
    task_record rec = make_record(pid, std::nullopt, std::move(*name), *t);
    if (threads) collect_threads(*proc, rec, err, failed);
    return rec;
}

}  // namespace

std::vector<task_record> collect_show(const show_options& opts, std::ostream& err, bool& failed) {
    std::vector<std::string> pids = opts.pids;
    if (pids.empty()) {
        // The parent of proctimes: the shell that ran it, as Windows' own
        // tools take the calling process.
        auto self = process::open_self();
        auto parent = self ? self->parent_id() : result<pid_t>(self.error());
        if (!parent) {
            err << fmt::format("proctimes: the parent of proctimes: {}\n", parent.error().message());
            failed = true;
            return {};
        }
        if (*parent <= 0) {
            // Pid 1 on Linux; under Wine, a program started from Linux.
            err << "proctimes: proctimes has no parent process to show: give a pid\n";
            failed = true;
            return {};
        }
        pids.push_back(std::to_string(*parent));
    }

    std::vector<task_record> records;
    for (const auto& arg : pids) {
        const auto pid = pid_argument(arg, &err);
        if (!pid) {
            failed = true;
            continue;
        }
        if (auto rec = collect_process(*pid, opts.threads, err, failed)) records.push_back(std::move(*rec));
    }
    return records;
}

int run_show(const show_options& opts, std::ostream& out, std::ostream& err) {
    bool failed = false;
    const auto records = collect_show(opts, err, failed);
    write_all(out, opts.output.format, record_fields(opts.output), opts.output, records);
    return finish_output(out, err, failed);
}

subcommand add_show(CLI::App& root) {
    struct state {
        show_options opts;
    };
    auto st = std::make_shared<state>();

    CLI::App* app = root.add_subcommand(
        "show", "Show creation, exit, kernel and user times of processes (GetProcessTimes), and of their threads.");
    app->add_option("pid", st->opts.pids, "Process ids (default: the parent of proctimes, normally the calling shell)")
        ->type_name("PID");
    app->add_flag("-t,--threads", st->opts.threads, "Also show every thread of each process (GetThreadTimes)");
    add_output_options(*app, st->opts.output, "Output: table (for people, default), json or csv (for programs)");
    app->footer(
        "JSON and CSV always give UTC instants (RFC 3339) and FILETIME ticks; field list in docs/CLI.md.\n"
        "Exit status: 0 all shown, 1 some pid (or one of its threads) could not be shown, 2 usage error.\n");

    return {app, [st](std::ostream& out, std::ostream& err) {
                show_options o = st->opts;
                o.output.threads = o.threads;
                o.output.exit_detail = true;
                return run_show(o, out, err);
            }};
}

}  // namespace proctimes::cli
