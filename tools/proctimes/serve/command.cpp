// SPDX-License-Identifier: MIT
// `proctimes serve`: its options and the command itself.
#include <csignal>
#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

#include "numbers.hpp"
#include "serve/collect/collector.hpp"
#include "serve/error.hpp"
#include "serve/http/http.hpp"
#include "serve/http/webconfig.hpp"
#include "serve/pe/goflags.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli {

namespace {

using serve::error_kind;

// HOST:PORT, :PORT, [V6]:PORT. Errors: error_kind::usage.
serve::status parse_listen(const std::string& v, serve_options& o) {
    const auto bad = [&v](const std::string& why) {
        return serve::error{error_kind::usage, "--listen " + v + ": " + why};
    };
    const auto colon = v.rfind(':');
    if (colon == std::string::npos) return bad("expected HOST:PORT");
    std::string host = v.substr(0, colon);
    const std::string port = v.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) host = "0.0.0.0";
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
        return bad("bad port '" + port + "'");
    const unsigned long p = std::stoul(port);
    if (p > 65535) return bad("bad port '" + port + "'");
    o.host = host;
    o.port = static_cast<std::uint16_t>(p);
    return serve::ok();
}

// What the command line says beyond CLI11's own checks: process-exporter's
// flags, the listen address and the options that cannot go together.
serve::status settle_options(const CLI::App& app, serve_options& opts, std::string& listen, const std::string& by) {
    serve::go_flags_seen seen;
    if (auto applied = serve::apply_go_flags(app.remaining(), opts, seen); !applied) return applied;
    if (seen.listen) {
        if (!listen.empty() && listen != seen.listen_value)
            return serve::error{error_kind::usage, "--listen and -web.listen-address name different addresses"};
        listen = seen.listen_value;
    }
    // With process-exporter's rules (a config file, -procnames or
    // -namemapping), its families and its defaults: the thread families and
    // the proportional memory types on, unless a flag says otherwise
    // (-threads=false, -gather-smaps=false).
    if (!opts.config_file.empty() || !opts.procnames.empty() || !opts.namemapping.empty()) {
        opts.namedprocess = true;
        if (!seen.threads && app.count("--threads") == 0) opts.threads = true;
        if (!seen.smaps && app.count("--gather-smaps") == 0) opts.gather_smaps = true;
    }
    if (seen.grouping && app.count("--group-by") > 0)
        return serve::error{error_kind::usage, "-procnames/-namemapping cannot be used with --group-by"};
    if (!listen.empty()) {
        if (auto parsed = parse_listen(listen, opts); !parsed) return parsed;
    }
    // The option's check admits only the table's words (serve.hpp).
    opts.grouping = word_value<group_by>(by).value_or(group_by::name);
    return serve::ok();
}

// The command once its options are settled: the web config, the collector,
// then one scrape (--once) or the server until SIGINT/SIGTERM.
serve::status serve_command(const serve_options& opts, std::ostream& out, std::ostream& err) {
    serve::web_config web;
    if (!opts.web_config_file.empty()) {  // checked with --once too
        auto read = serve::read_web_config(opts.web_config_file);
        if (!read) return read.error();
        web = std::move(*read);
    }
    auto col = serve::collector::open(opts);
    if (!col) return col.error();
    if (opts.once) {
        out << (*col)->scrape(serve::format::text_004);
        return serve::ok();
    }
    return serve::serve_http(**col, opts, web, out, err);
}  // the collector's threads end here

// The one place an error becomes an exit status (error_kinds): its message
// on standard error, its kind's status.
int exit_status_of(const serve::status& s, std::ostream& err) {
    if (s) return 0;
    err << "proctimes: serve: " << s.error().message << "\n";
    return serve::exit_status(s.error().kind);
}

}  // namespace

subcommand add_serve(CLI::App& root) {
    auto opts = std::make_shared<serve_options>();
    auto listen = std::make_shared<std::string>();
    auto by = std::make_shared<std::string>("name");
    CLI::App* app = root.add_subcommand(
        "serve", "Serve process CPU and start times to Prometheus (text format 0.0.4 / OpenMetrics 1.0)");
    app->add_option("--listen", *listen,
                    "Address to listen on, HOST:PORT (default 127.0.0.1:9284; :PORT for every address; port 0 "
                    "picks a free one)")
        ->type_name("HOST:PORT");
    app->add_option("--group-by", *by, "Group processes by name, user, cgroup or exe")
        ->transform(word_check(offered_rows(group_by_words)));
    app->add_option("--include", opts->include, "Only groups whose name matches this regex (RE2, Go's syntax)");
    app->add_option("--exclude", opts->exclude, "Leave out groups whose name matches this regex");
    app->add_option("--top", opts->top, "Per-process series for the N busiest processes (0: none)")
        ->check(whole_number_in(0, 4'294'967'295));
    app->add_flag("--threads", opts->threads,
                  "Walk threads too (exact final values for multi-threaded processes that end); on by default "
                  "with a process-exporter config, -procnames or -namemapping, as there");
    app->add_option("--config", opts->config_file,
                    "A process-exporter config file (its process_names rules) instead of --group-by");
    app->add_flag("--namedprocess", opts->namedprocess,
                  "Also emit process-exporter's namedprocess_namegroup_* metric names (always with a "
                  "process-exporter config, -procnames or -namemapping)");
    app->add_flag("--gather-smaps", opts->gather_smaps,
                  "With --namedprocess: read smaps_rollup for the proportionalResident and proportionalSwapped "
                  "memory types; on by default with a process-exporter config, -procnames or -namemapping, as "
                  "there");
    app->add_flag("!--no-exit-records", opts->exit_records, "Do not listen for taskstats exit records");
    app->add_option("--http-threads", opts->http_threads, "Event-loop threads serving connections (default 1)")
        ->check(whole_number_in(1, 64));
    app->add_option("--connection-deadline", opts->connection_deadline,
                    "Seconds without traffic after which a connection that has not sent a whole request is closed "
                    "(default 15)")
        ->check(whole_number_in(1, 3600));
    app->add_option("--idle-deadline", opts->idle_deadline,
                    "Seconds an answered connection may wait for its next request (default 310: longer than "
                    "Prometheus keeps an idle connection)")
        ->check(whole_number_in(1, 3600));
    app->add_option("--max-connections", opts->max_connections, "Connections open at once, all clients together")
        ->check(whole_number_in(1, 65536));
    app->add_option("--max-connections-per-ip", opts->max_connections_per_ip,
                    "Connections open at once from one address")
        ->check(whole_number_in(1, 65536));
    app->add_option("--web-config", opts->web_config_file,
                    "An exporter-toolkit web config (YAML): TLS, basic authentication, response headers")
        ->type_name("FILE");
    app->add_option("--port-file", opts->port_file, "Write the port listened on to this file");
    app->add_option("--proc-root", opts->proc_root, "Where procfs is mounted");
    app->add_flag("--once", opts->once, "Print one scrape to standard output and exit");
    // process-exporter's flags (-procnames, -config.path, -web.listen-address, ...,
    // single or double dash): what the parser leaves over is read as Go would.
    app->allow_extras();
    app->footer(
        "Also accepted, with process-exporter's meaning: -procnames, -namemapping, -children, -threads, "
        "-recheck, -config.path, -web.listen-address, -web.telemetry-path, -procfs, -gather-smaps, -web.config.file "
        "(one or two dashes; docs/SERVE.md).");
    return {app, [app, opts, listen, by](std::ostream& out, std::ostream& err) {
                if (auto settled = settle_options(*app, *opts, *listen, *by); !settled)
                    return exit_status_of(settled, err);
                return run_serve(*opts, out, err);
            }};
}

int run_serve(const serve_options& opts, std::ostream& out, std::ostream& err) {
    // SIGINT/SIGTERM are taken by one thread of serve_http (sigtimedwait):
    // block them before any thread starts, so that none inherits them open and
    // dies of their default action.
    sigset_t stop_set, old;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    if (!opts.once) ::pthread_sigmask(SIG_BLOCK, &stop_set, &old);
    const serve::status done = serve_command(opts, out, err);
    if (!opts.once) ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return exit_status_of(done, err);
}

}  // namespace proctimes::cli
