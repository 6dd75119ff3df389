// SPDX-License-Identifier: MIT
// proctimes watch PID... [--format table|json|csv] [--utc]
// (with --all, --name, --user or --cgroup instead of pids: watch/scoped.cpp)
//
// Opens a handle for each pid, then waits for them to exit (Linux: poll(2)
// over their pidfds and a self-pipe fed by the SIGINT/SIGTERM handler;
// Windows: WaitForMultipleObjects through wait_for_any) and prints one
// record per process as it exits, flushed at once: its exit instant and final
// times, or the last sample (exited_partial) when its parent reaped it before
// the final values could be read.
#include <cerrno>
#include <chrono>
#include <csignal>
#include <memory>
#include <ostream>
#include <set>

#ifndef _WIN32
#include <poll.h>

#include "proctimes/linux.hpp"
#include "watch/signals.hpp"
#endif

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "numbers.hpp"
#include "output/writers.hpp"
#include "proctimes/error.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/process.hpp"
#include "system.hpp"

namespace proctimes::cli {

namespace {

constexpr std::chrono::milliseconds resample_interval{50};

struct watched {
    process handle;
    std::string name;
};

// The process's times after its pidfd woke. The pidfd is readable, so the
// wait returns at once; it records the end at this wake-up (unless the exit
// monitor was earlier) and reads the zombie's final values (exited), or keeps
// the last sample if its parent has already reaped it (exited_partial).
result<task_times> final_times(const process& p) {
    if (auto ended = wait_for_exit(p, std::chrono::nanoseconds{0}); !ended) return ended.error();
    return p.times();
}

// The pids watch must refuse: its own, which cannot end while it waits, and
// its ancestors, which normally wait for it (a shell running it in the
// foreground, system(3), make) and would then never end first either. Only a
// background job of an interactive shell (a terminal whose foreground group
// is not this process's) is taken to have ancestors free to end. Read
// through the handles' parent_id() up to init; where /proc cannot be read
// the chain stops and the open below reports the reason.
std::set<pid_t> pids_that_wait_for_watch(pid_t self_pid) {
    std::set<pid_t> out{self_pid};
    if (sys::in_background_job()) return out;
    auto self = process::open_self();
    auto first = self ? self->parent_id() : result<pid_t>(self.error());
    pid_t pid = first ? *first : 0;
    for (int depth = 0; pid > 0 && depth < 4096 && out.insert(pid).second; ++depth) {
        auto p = process::open(pid);
        if (!p) break;
        auto parent = p->parent_id();
        if (!parent) break;
        pid = *parent;
    }
    return out;
}

}  // namespace

int run_watch(const watch_options& opts, std::ostream& out, std::ostream& err) {
    if (opts.scoped()) return run_watch_scoped(opts, out, err);
    if (opts.pids.empty()) {
        err << "proctimes: watch: give process ids, or a scope: --all, --name, --user or --cgroup\n";
        return exit_usage;
    }
    // A pid that cannot end before watch would make it wait forever: a usage error.
    const pid_t self_pid = this_process::id();
    const auto waiting = pids_that_wait_for_watch(self_pid);
    for (const auto& arg : opts.pids) {
        const auto pid = pid_argument(arg, nullptr);  // a bad one is reported below
        if (!pid || !waiting.count(*pid)) continue;
        err << (*pid == self_pid
                    ? fmt::format("proctimes: watch: pid {} is proctimes itself: it cannot end while it watches\n",
                                  *pid)
                    : fmt::format("proctimes: watch: pid {} is an ancestor of proctimes, which waits for it to end: "
                                  "it cannot end first (run watch in the background to watch it)\n",
                                  *pid));
        return exit_usage;
    }
    prefer_exit_records();
    bool failed = false;
    std::vector<watched> procs;
    for (const auto& arg : opts.pids) {
        const auto arg_pid = pid_argument(arg, &err);
        if (!arg_pid) {
            failed = true;
            continue;
        }
        const pid_t pid = *arg_pid;
        auto p = process::open(pid);
        if (!p) {
            err << fmt::format("proctimes: pid {}: {}\n", pid, p.error().message());
            failed = true;
            continue;
        }
#ifndef _WIN32
        if (proctimes::native_pidfd(*p) < 0) {
            err << fmt::format("proctimes: pid {}: {}\n", pid, make_error_code(errc::not_supported).message());
            failed = true;
            continue;
        }
#endif
        std::string name = p->name().value_or(std::string());
        procs.push_back({std::move(*p), std::move(name)});
    }

    output_options o = opts.output;
    o.state = true;
    o.exit_detail = true;
    // One record per process as it exits, flushed at once: a fixed-width
    // table, JSON Lines or CSV (its header, or the table's, right away).
    const field_list fields = watch_fields(o);
    const auto writer = open_writer(out, o.format, fields, o, layout::stream);
    writer->flush();
    const auto report = [&](watched& w) {
        auto t = final_times(w.handle);
        if (auto name = w.handle.name()) w.name = std::move(*name);  // a zombie's comm is still readable
        if (!t) {
            err << fmt::format("proctimes: pid {}: {}\n", w.handle.id(), t.error().message());
            failed = true;
            return;
        }
        writer->write(make_record(w.handle.id(), std::nullopt, w.name, *t));
        writer->flush();
    };
#ifdef _WIN32
    // A process handle keeps the ended process's times readable until it is
    // closed, so there is nothing to resample: one wait for any of them
    // (WaitForMultipleObjects), as long as it takes. Ctrl+C ends proctimes
    // the Windows way, with what was written already flushed.
    while (!procs.empty()) {
        std::vector<const process*> handles;
        handles.reserve(procs.size());
        for (const auto& w : procs) handles.push_back(&w.handle);
        auto which = wait_for_any(handles);
        if (!which || !*which || **which >= procs.size()) {
            err << fmt::format("proctimes: watch: {}\n",
                               which ? "the wait returned no process" : which.error().message());
            return exit_failure;
        }
        report(procs[**which]);
        procs.erase(procs.begin() + static_cast<std::ptrdiff_t>(**which));
    }
#else
    stop_signals signals;
    if (signals.fd() < 0) {
        err << fmt::format("proctimes: watch: cannot create a pipe: {}\n", std::strerror(errno));
        return exit_failure;
    }
    while (!procs.empty()) {
        std::vector<pollfd> fds;
        fds.push_back({signals.fd(), POLLIN, 0});
        for (const auto& w : procs) fds.push_back({proctimes::native_pidfd(w.handle), POLLIN, 0});
        // Every resample_interval without an exit, each process is sampled, so
        // that one reaped before its final values could be read (exited_partial)
        // reports a recent last sample.
        const int n = ::poll(fds.data(), fds.size(), static_cast<int>(resample_interval.count()));
        if (n == 0) {
            for (auto& w : procs) {
                (void)w.handle.times();
                if (auto name = w.handle.name()) w.name = std::move(*name);  // it may have exec'd
            }
            continue;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            err << fmt::format("proctimes: watch: poll: {}\n", std::strerror(errno));
            return exit_failure;
        }
        if (fds[0].revents & POLLIN) {
            if (const int sig = signals.received()) return 128 + sig;
        }
        std::vector<watched> remaining;
        for (std::size_t i = 0; i < procs.size(); ++i) {
            if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))
                report(procs[i]);
            else
                remaining.push_back(std::move(procs[i]));
        }
        procs = std::move(remaining);
    }
#endif
    writer->finish();
    return finish_output(out, err, failed);
}

subcommand add_watch(CLI::App& root) {
    auto opts = std::make_shared<watch_options>();

    CLI::App* app = root.add_subcommand(
        "watch", "Wait for processes to exit and print each one's exit instant and final times as it does.");
    app->add_option("pid", opts->pids, "Process ids (any process, not only children)")->type_name("PID");
    add_output_options(*app, opts->output, "Output: table (default), json (JSON Lines: one object per line) or csv");
    app->add_flag("--all", opts->all, "Instead of pids: every process that ends, started before or after watch");
    add_optional(app, "--name", opts->name,
                 "Instead of pids: the processes whose name (comm) matches REGEX (RE2, Go's syntax, "
                 "searched: anchor it with ^...$ for a whole name)")
        ->type_name("REGEX");
    add_optional(app, "--user", opts->user, "Instead of pids: the processes whose real user is USER (a name or a uid)")
        ->type_name("USER");
    add_optional(app, "--cgroup", opts->cgroup,
                 "Instead of pids: the processes in cgroup PATH or below it (/sys/fs/cgroup/... "
                 "or a path inside the hierarchy)")
        ->type_name("PATH");
    auto* duration =
        add_optional(app, "--duration", opts->duration, "With a scope: stop after SECONDS and print the totals")
            ->check(seconds_in(std::chrono::milliseconds{1}, std::chrono::hours{24 * 365}, "1 ms to 1 year"))
            ->type_name("SECONDS");
    auto* interval = app->add_option("--interval", opts->interval,
                                     "With a scope: seconds between snapshots of the processes alive in it "
                                     "(default 1)")
                         ->check(seconds_in(std::chrono::milliseconds{10}, std::chrono::hours{1}, "10 ms to 1 hour"))
                         ->type_name("SECONDS");
    app->add_option("--proc-root", opts->proc_root,
                    "With a scope: where procfs is mounted (default /proc; another one means ends from snapshots)")
        ->type_name("DIR");
    add_choice(app, "--end-source", opts->end_source, end_choice_words,
               "With a scope: where ends come from: auto (default: the exit stream where permitted, else "
               "snapshots), exit-stream, snapshot")
        ->type_name("SOURCE");
    app->footer(
        "With pids: one record per process, written and flushed as it exits. Ctrl-C (SIGINT) or SIGTERM\n"
        "stops watching at once (exit status 130 or 143).\n"
        "Its own pid and, unless it runs as a background job, its ancestors (which wait for it) are\n"
        "refused as usage errors: they could not end first.\n"
        "With a scope (--all, or any of --name, --user, --cgroup, which must all hold): one record per\n"
        "process in it that ends, then on Ctrl-C, SIGTERM or --duration the totals of what ran and ended\n"
        "in it. Ends come from the exit stream (root) or from snapshots (see docs/CLI.md).\n"
        "Exit status: 0 all watched to their exit (or --duration passed), 1 some pid could not be\n"
        "watched or something could not be read, 2 usage error, 130/143 SIGINT/SIGTERM.\n");

    return {
        app, [opts, duration, interval](std::ostream& out, std::ostream& err) {
            if (!opts->scoped() && (duration->count() > 0 || interval->count() > 0 ||
                                    opts->end_source != end_choice::automatic || !is_live_proc_root(opts->proc_root))) {
                err << "proctimes: watch: --duration, --interval, --end-source and --proc-root need a scope "
                       "(--all, --name, --user or --cgroup)\n";
                return exit_usage;
            }
            return run_watch(*opts, out, err);
        }};
}

}  // namespace proctimes::cli
