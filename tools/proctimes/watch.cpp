// SPDX-License-Identifier: MIT
// proctimes watch PID... [--format table|json|csv] [--utc]
//
// Opens a handle for each pid, then waits for them to exit (poll(2) over their
// pidfds and a self-pipe fed by the SIGINT/SIGTERM handler) and prints one
// record per process as it exits, flushed at once: its exit instant and final
// times, or the last sample (exited_partial) when its parent reaped it before
// the final values could be read.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <memory>
#include <ostream>
#include <set>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "numbers.hpp"
#include "output/writers.hpp"
#include "proctimes/error.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/linux.hpp"
#include "proctimes/process.hpp"

namespace proctimes::cli {

namespace {

std::atomic<int> g_signal_pipe{-1};

constexpr std::chrono::milliseconds resample_interval{50};

extern "C" void on_stop_signal(int sig) {
    const int saved = errno;
    const int fd = g_signal_pipe.load();
    if (fd >= 0) {
        const unsigned char b = static_cast<unsigned char>(sig);
        [[maybe_unused]] auto n = ::write(fd, &b, 1);
    }
    errno = saved;
}

// SIGINT and SIGTERM write their number to a pipe for the lifetime of the
// object; the previous dispositions are restored after.
class stop_signals {
public:
    stop_signals() {
        if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
            fds_[0] = fds_[1] = -1;
            return;
        }
        g_signal_pipe.store(fds_[1]);
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        ok_int_ = ::sigaction(SIGINT, &sa, &old_int_) == 0;
        ok_term_ = ::sigaction(SIGTERM, &sa, &old_term_) == 0;
    }
    ~stop_signals() {
        if (ok_int_) ::sigaction(SIGINT, &old_int_, nullptr);
        if (ok_term_) ::sigaction(SIGTERM, &old_term_, nullptr);
        g_signal_pipe.store(-1);
        if (fds_[0] >= 0) ::close(fds_[0]);
        if (fds_[1] >= 0) ::close(fds_[1]);
    }
    stop_signals(const stop_signals&) = delete;
    stop_signals& operator=(const stop_signals&) = delete;

    [[nodiscard]] int fd() const noexcept { return fds_[0]; }
    /// The signal received, or 0.
    [[nodiscard]] int received() const noexcept {
        unsigned char b = 0;
        return ::read(fds_[0], &b, 1) == 1 ? b : 0;
    }

private:
    int fds_[2] = {-1, -1};
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
    bool ok_int_ = false, ok_term_ = false;
};

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
std::set<pid_t> pids_that_wait_for_watch() {
    std::set<pid_t> out{::getpid()};
    bool background = false;
    const int tty = ::open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (tty >= 0) {
        const pid_t fg = ::tcgetpgrp(tty);
        background = fg > 0 && fg != ::getpgrp();
        ::close(tty);
    }
    if (background) return out;
    pid_t pid = ::getppid();
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
    // A pid that cannot end before watch would make it wait forever: a usage error.
    const auto waiting = pids_that_wait_for_watch();
    for (const auto& arg : opts.pids) {
        const auto pid = pid_argument(arg, nullptr);  // a bad one is reported below
        if (!pid || !waiting.count(*pid)) continue;
        err << (*pid == ::getpid()
                    ? fmt::format("proctimes: watch: pid {} is proctimes itself: it cannot end while it watches\n",
                                  *pid)
                    : fmt::format("proctimes: watch: pid {} is an ancestor of proctimes, which waits for it to end: "
                                  "it cannot end first (run watch in the background to watch it)\n",
                                  *pid));
        return exit_usage;
    }
    prefer_exit_records();
    stop_signals signals;
    if (signals.fd() < 0) {
        err << fmt::format("proctimes: watch: cannot create a pipe: {}\n", std::strerror(errno));
        return exit_failure;
    }
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
        if (proctimes::native_pidfd(*p) < 0) {
            err << fmt::format("proctimes: pid {}: {}\n", pid, make_error_code(errc::not_supported).message());
            failed = true;
            continue;
        }
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
            if (!(fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) {
                remaining.push_back(std::move(procs[i]));
                continue;
            }
            auto& w = procs[i];
            auto t = final_times(w.handle);
            if (auto name = w.handle.name()) w.name = std::move(*name);  // a zombie's comm is still readable
            if (!t) {
                err << fmt::format("proctimes: pid {}: {}\n", w.handle.id(), t.error().message());
                failed = true;
                continue;
            }
            writer->write(make_record(w.handle.id(), std::nullopt, w.name, *t));
            writer->flush();
        }
        procs = std::move(remaining);
    }
    writer->finish();
    return finish_output(out, err, failed);
}

subcommand add_watch(CLI::App& root) {
    struct state {
        watch_options opts;
    };
    auto st = std::make_shared<state>();

    CLI::App* app = root.add_subcommand(
        "watch", "Wait for processes to exit and print each one's exit instant and final times as it does.");
    app->add_option("pid", st->opts.pids, "Process ids (any process, not only children)")->required()->type_name("PID");
    add_format_option(*app, st->opts.output.format,
                      "Output: table (default), json (JSON Lines: one object per line) or csv");
    app->add_flag("--utc", st->opts.output.utc, "Table: print instants in UTC rather than local time");
    app->footer(
        "One record per process, written and flushed as it exits. Ctrl-C (SIGINT) or SIGTERM stops\n"
        "watching at once (exit status 130 or 143).\n"
        "Its own pid and, unless it runs as a background job, its ancestors (which wait for it) are\n"
        "refused as usage errors: they could not end first.\n"
        "Exit status: 0 all watched to their exit, 1 some pid could not be watched, 2 usage error.\n");

    return {app, [st](std::ostream& out, std::ostream& err) {
                watch_options o = st->opts;
                return run_watch(o, out, err);
            }};
}

}  // namespace proctimes::cli
