// SPDX-License-Identifier: MIT
// tools/proctimes/serve/serve.hpp — `proctimes serve`: a Prometheus/OpenMetrics
// exporter of process CPU and start times over the library's snapshotter, its
// exit records and its CPU ledger (docs/SERVE.md).
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "commands.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/words.hpp"

namespace proctimes::cli {

/// 9284: not the node exporter's 9100 nor process-exporter's 9256 (see docs/SERVE.md).
inline constexpr std::uint16_t serve_default_port = 9284;

enum class group_by : std::uint8_t { name, user, cgroup, exe };
/// `serve --group-by`.
inline constexpr auto group_by_words = std::to_array<word_row<group_by>>({
    {group_by::name, "name", "one group per process name (comm)"},
    {group_by::user, "user", "one group per effective user (its name)"},
    {group_by::cgroup, "cgroup", "one group per cgroup (the v2 path, else the first hierarchy's)"},
    {group_by::exe, "exe", "one group per executable's path"},
});
constexpr const auto& word_rows(group_by) noexcept { return group_by_words; }
static_assert(words_in_order(group_by_words));

struct serve_options {
    std::string host = "127.0.0.1";  ///< loopback unless told otherwise
    std::uint16_t port = serve_default_port;
    group_by grouping = group_by::name;
    std::string include;      ///< RE2 regex searched in the group name; empty: all
    std::string exclude;      ///< idem; empty: none
    std::size_t top = 10;     ///< per-process series for the N busiest processes
    bool threads = false;     ///< walk threads (exact ledger for multi-threaded exits)
    std::string config_file;  ///< process-exporter YAML (process_names)
    /// process-exporter's -procnames and -namemapping (instead of a config file).
    std::string procnames, namemapping;
    bool namedprocess = false;  ///< also emit process-exporter's namedprocess_namegroup_* names
    /// With namedprocess: read smaps_rollup for the proportionalResident and
    /// proportionalSwapped memory types (process-exporter's -gather-smaps).
    bool gather_smaps = false;
    /// Classify again, at every collection, the processes no rule matched
    /// (process-exporter's -recheck).
    bool recheck = false;
    /// exporter-toolkit web config: TLS, basic authentication, headers.
    std::string web_config_file;
    /// With process-exporter's rules: a process no rule matches, whose parent
    /// (or an ancestor new with it) is in a group when it is first seen, joins
    /// that group (process-exporter's -children, on by default as there).
    bool children = true;
    std::string metrics_path = "/metrics";  ///< where the exposition is served
    bool exit_records = true;               ///< use exit records when permitted
    /// Where they come from: eBPF where it can be used, else taskstats
    /// (automatic); the tests force each source.
    exit_stream_source exit_from = exit_stream_source::automatic;
    std::string proc_root = default_proc_root();
    /// Event-loop threads serving connections. One by default: an idle or slow
    /// connection holds no thread, bcrypt runs on a thread of its own, and
    /// each further loop wakes at connections it does not serve.
    unsigned http_threads = 1;
    /// Seconds without any byte received or sent after which a connection is
    /// closed, while it has not yet sent a whole request head.
    unsigned connection_deadline = 15;
    /// Seconds a connection that has been answered may wait for its next
    /// request: longer than Prometheus keeps an idle connection (5 minutes),
    /// so that a scrape at any interval reuses its connection (and, with TLS,
    /// its session) instead of opening one each time.
    unsigned idle_deadline = 310;
    unsigned max_connections = 1024;       ///< open at once, all clients together
    unsigned max_connections_per_ip = 64;  ///< open at once from one address
    /// Write the bound port here once listening (for tests and --listen :0).
    std::string port_file;
    /// Print one scrape of /metrics to `out` and exit (no server).
    bool once = false;
};

subcommand add_serve(CLI::App& root);

/// The whole command: serves until SIGINT/SIGTERM; 0 on a clean stop, else
/// the exit status of its error's kind (serve/error.hpp: 1 when it cannot
/// listen or collect, 2 for a bad configuration).
int run_serve(const serve_options& opts, std::ostream& out, std::ostream& err);

}  // namespace proctimes::cli
