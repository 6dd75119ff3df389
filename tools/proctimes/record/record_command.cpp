// SPDX-License-Identifier: MIT
// proctimes record [--interval 10s] [--store PATH] [--retain 7d|SIZE]
//
// The recorder: takes a frame of the live machine (top/live_feed.hpp) every
// interval and writes it to the store (record/store.hpp) as one interval,
// whole or not at all. A write that fails (a full disk) is said on standard
// error, naming the interval lost, and recording goes on. Retention runs
// between intervals. SIGINT and SIGTERM end it between two writes: an
// interval being written is finished, one being waited for is abandoned.
#include <poll.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "numbers.hpp"
#include "record/store.hpp"
#include "record/when.hpp"
#include "system.hpp"
#include "top/live_feed.hpp"
#include "watch/signals.hpp"

namespace proctimes::cli {

namespace {

using std::chrono::nanoseconds;

struct record_options {
    nanoseconds interval = std::chrono::seconds{10};
    std::optional<std::string> store;
    record::retention retain;
    bool quiet = false;
};

/// Waits until `deadline` (since boot), reading the feed's exit records as
/// they come. The signal (SIGINT, SIGTERM) that arrived first, or 0.
int wait_until(nanoseconds deadline, top::frame_feed& feed, const stop_signals& stop) {
    for (;;) {
        if (const int sig = stop.received(); sig != 0) return sig;
        const nanoseconds left = deadline - sys::since_boot_now();
        if (left.count() <= 0) return 0;
        std::array<pollfd, 2> fds{{{stop.fd(), POLLIN, 0}, {feed.wait_handle(), POLLIN, 0}}};
        const nfds_t n = fds[1].fd >= 0 ? 2 : 1;
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
        const int r = ::poll(fds.data(), n, static_cast<int>(std::min<std::int64_t>(ms, 1000)));
        if (r < 0 && errno != EINTR) return 0;
        if (r > 0 && n == 2 && (fds[1].revents & POLLIN) != 0) feed.pump();
    }
}

int run_record(const record_options& opts, std::ostream& out, std::ostream& err) {
    const std::string path = opts.store.value_or(record::default_store_path);
    if (!opts.store) {
        // The default store's folder is made on first use.
        std::error_code ec;
        const auto folder = std::filesystem::path(path).parent_path();
        std::filesystem::create_directories(folder, ec);
        if (ec) {
            err << fmt::format("proctimes record: cannot create {}: {}\n", folder.string(), ec.message());
            return exit_failure;
        }
    }
    auto s = record::store::open_writer(path);
    if (!s) {
        err << fmt::format("proctimes record: {}\n", s.error().message);
        return s.error().kind == record::error_kind::locked ? exit_usage : exit_failure;
    }
    auto feed = top::open_live_feed(top::live_options{});
    if (!feed) {
        err << fmt::format("proctimes record: cannot read the processes: {}\n", feed.error().message());
        return exit_failure;
    }
    stop_signals stop;
    if (stop.fd() < 0) {
        err << "proctimes record: cannot watch for SIGINT and SIGTERM\n";
        return exit_failure;
    }
    // The first frame is the baseline: it has no interval, nothing to write.
    if (auto first = (*feed)->next(opts.interval); !first) {
        err << fmt::format("proctimes record: cannot read the processes: {}\n", first.error().message());
        return exit_failure;
    }
    if (!opts.quiet) {
        out << fmt::format("proctimes record: recording every {} to {}{}\n", record::describe_duration(opts.interval),
                           path, opts.retain.any() ? "" : " (no retention: the store grows until --retain is given)")
            << std::flush;
    }
    std::uint64_t written = 0, lost = 0;
    nanoseconds deadline = sys::since_boot_now() + opts.interval;
    int stopped = 0;
    while ((stopped = wait_until(deadline, **feed, stop)) == 0) {
        auto f = (*feed)->next(opts.interval);
        deadline = sys::since_boot_now() + opts.interval;
        if (!f) {
            ++lost;
            err << fmt::format(
                "proctimes record: the interval ending {} was not recorded: {}\n",
                record::describe(std::chrono::time_point_cast<nanoseconds>(std::chrono::system_clock::now())),
                f.error().message());
            continue;
        }
        if (auto w = s->write_interval(*f); !w) {
            ++lost;
            err << fmt::format("proctimes record: {}\n", w.error().message) << std::flush;
        } else {
            ++written;
        }
        if ((stopped = stop.received()) != 0) break;  // the interval is written: end now
        if (opts.retain.any()) {
            if (auto r = s->retain(opts.retain.max_age, opts.retain.max_bytes); !r)
                err << fmt::format("proctimes record: retention did not run: {}\n", r.error().message) << std::flush;
        }
    }
    if (!opts.quiet) {
        out << fmt::format("proctimes record: stopped by {}: {} intervals written{}\n", sys::signal_name(stopped),
                           written, lost > 0 ? fmt::format(", {} lost", lost) : std::string())
            << std::flush;
    }
    return exit_success;
}

/// A CLI11 check that runs one of when.hpp's parsers.
template <class F>
CLI::Validator strict(F parse, const std::string& name) {
    return CLI::Validator(
        [parse](std::string& text) -> std::string {
            auto p = parse(text);
            return p.ok() ? std::string() : p.why();
        },
        "", name);
}

}  // namespace

subcommand add_record(CLI::App& root) {
    auto opts = std::make_shared<record_options>();
    CLI::App* app = root.add_subcommand(
        "record",
        "Record what uses the CPU: every interval's ledger (every process that used CPU, ended ones included, "
        "with its identity) written to a SQLite store, for 'report' and 'top --replay'.");
    app->add_option_function<std::string>(
           "-i,--interval", [opts](const std::string& t) { opts->interval = record::parse_duration(t, true).value(); },
           "Time between intervals (default 10s; 100ms to 1d): 500ms, 10s, 5m; a bare number is seconds")
        ->check(strict([](const std::string& t) { return record::parse_duration(t, true); }, "DURATION"))
        ->check(CLI::Validator(
            [](std::string& t) -> std::string {
                const auto d = record::parse_duration(t, true).value();
                if (d < std::chrono::milliseconds{100} || d > std::chrono::hours{24})
                    return fmt::format("'{}' is outside 100ms to 1d", t);
                return {};
            },
            "", "range"))
        ->type_name("DURATION");
    add_optional(app, "-s,--store", opts->store,
                 fmt::format("The store's file (default {}; its folder is created)", record::default_store_path))
        ->type_name("PATH");
    app->add_option_function<std::string>(
           "--retain", [opts](const std::string& t) { opts->retain = record::parse_retention(t).value(); },
           "Delete the oldest intervals beyond an age (7d, 12h) or a size (500M, 2G), or both (7d,2G), "
           "between intervals (default: keep everything)")
        ->check(strict([](const std::string& t) { return record::parse_retention(t); }, "AGE|SIZE"))
        ->type_name("AGE|SIZE");
    app->add_flag("-q,--quiet", opts->quiet, "Say nothing on standard output (the start and the end)");
    app->footer(
        "Ends on SIGINT or SIGTERM after the interval being written (one being waited for is dropped).\n"
        "One recorder per store: a second one is refused. The schema: docs/STORE.md.\n"
        "Exit status: 0 ended by a signal, 1 the store or the processes could not be read, 2 usage error\n"
        "or another recorder holds the store.\n");
    return {app, [opts](std::ostream& out, std::ostream& err) { return run_record(*opts, out, err); }};
}

}  // namespace proctimes::cli
