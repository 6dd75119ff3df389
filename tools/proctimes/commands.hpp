// SPDX-License-Identifier: MIT
// tools/proctimes/commands.hpp — the subcommands of proctimes. Each lives in
// its own folder (show/, ps/, run/, watch/, doctor/, serve/) and registers itself on the root CLI11 app;
// cli.cpp calls the runner of the one that was parsed.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "output/output.hpp"
#include "proctimes/snapshot.hpp"
#include "proctimes/tree.hpp"
#include "proctimes/words.hpp"

namespace CLI {
class App;
}

namespace proctimes::cli {

/// Where the system's process table is read by default: the library's own
/// choice (snapshot_options::proc_root), which --proc-root replaces.
inline std::string default_proc_root() { return snapshot_options{}.proc_root; }
/// Whether `root` is that live table: exit records and the system's clocks
/// describe it, and no captured copy.
inline bool is_live_proc_root(const std::string& root) { return root == default_proc_root(); }

/// A registered subcommand: its CLI11 app (owned by the root app) and what to
/// do once the command line has been parsed into its options.
struct subcommand {
    CLI::App* app = nullptr;
    std::function<int(std::ostream& out, std::ostream& err)> run;
};

/// One line on `err` for each PROCTIMES_* variable whose value the library
/// refuses and so ignores (setting_problems()): "proctimes: warning:
/// VAR=VALUE ignored: expected ...". run() says it once, before any command.
void warn_setting_problems(std::ostream& err);

/// Registers the output options every subcommand that prints records has:
/// -f/--format (table, json or csv; `format_help` says what each gives
/// there) and --utc.
void add_output_options(CLI::App& app, output_options& into, const std::string& format_help);

/// Turns on the library's exit records (exact final values of tasks released
/// before they could be read; root only) unless PROCTIMES_EXIT_RECORDS says
/// otherwise. For commands that report tasks as they end (run --threads, watch).
void prefer_exit_records() noexcept;

// ---- show ----------------------------------------------------------------------

struct show_options {
    /// The pids as typed (validated by show itself: a bad one is reported and
    /// the others are still shown). Empty: the parent of proctimes.
    std::vector<std::string> pids;
    bool threads = false;
    output_options output;
};

subcommand add_show(CLI::App& root);

/// Collects one record per requested pid, reporting each failure on `err`
/// ("proctimes: pid N: <reason>"). `failed` is set when anything was reported.
std::vector<task_record> collect_show(const show_options& opts, std::ostream& err, bool& failed);

/// The whole `show` command once its options are known: collect, then write.
int run_show(const show_options& opts, std::ostream& out, std::ostream& err);

// ---- ps ------------------------------------------------------------------------

/// How `ps --interval` draws successive frames.
enum class redraw_mode {
    automatic,  ///< redraw in place when the output is a terminal, else append
    always,     ///< redraw in place with ANSI sequences (cursor home, clear to end)
    never,      ///< append frames, separated by a blank line
};

/// `ps --group-by`: one row per process (none), or per comm, owner or cgroup.
enum class ps_grouping : std::uint8_t { none, name, user, cgroup };
inline constexpr auto ps_grouping_words = std::to_array<word_row<ps_grouping>>({
    {ps_grouping::none, "", "one row per process"},
    {ps_grouping::name, "name", "one row per process name (comm)"},
    {ps_grouping::user, "user", "one row per effective user"},
    {ps_grouping::cgroup, "cgroup", "one row per cgroup, with the cgroup's own counter"},
});
constexpr const auto& word_rows(ps_grouping) noexcept { return ps_grouping_words; }
static_assert(words_in_order(ps_grouping_words));
/// "name", "user", "cgroup" ("" for none): the group_by field.
std::string_view to_string(ps_grouping g) noexcept;

/// `ps --interval`'s ledger: where the ends of tasks come from (the
/// ended_source field).
enum class ps_ended_source : std::uint8_t { none, exit_stream };
inline constexpr auto ps_ended_source_words = std::to_array<word_row<ps_ended_source>>({
    {ps_ended_source::none, "none", "no source names ended tasks (ended_source_note says why)"},
    {ps_ended_source::exit_stream, "exit_stream", "the exit stream names each ended task"},
});
constexpr const auto& word_rows(ps_ended_source) noexcept { return ps_ended_source_words; }
static_assert(words_in_order(ps_ended_source_words));

/// `ps --sort`: the order of the rows.
enum class ps_sort : std::uint8_t { cpu, kernel, user, start, pid, name };
inline constexpr auto ps_sort_words = std::to_array<word_row<ps_sort>>({
    {ps_sort::cpu, "cpu", "the busiest first, by CPU over the interval (else total CPU)"},
    {ps_sort::kernel, "kernel", "the most kernel time first"},
    {ps_sort::user, "user", "the most user time first"},
    {ps_sort::start, "start", "the oldest first"},
    {ps_sort::pid, "pid", "by process id"},
    {ps_sort::name, "name", "by name"},
});
constexpr const auto& word_rows(ps_sort) noexcept { return ps_sort_words; }
static_assert(words_in_order(ps_sort_words));

struct ps_options {
    bool threads = false;
    /// --sort; empty: pid (one snapshot), cpu (with an interval or --top).
    std::optional<ps_sort> sort;
    std::optional<std::size_t> top;
    /// Only processes of this user (a name or a decimal uid).
    std::optional<std::string> user;
    output_options output;
    /// Nanosecond CPU totals for threads too (snapshot_cpu::precise).
    bool precise = false;
    /// Seconds between frames; empty: one snapshot.
    std::optional<double> interval;
    /// Frames to show with an interval; empty: until interrupted.
    std::optional<unsigned> count;
    /// With an interval and threads: copy the threads of processes that did
    /// not run since the previous frame (snapshot_options::reuse_idle_threads_for).
    std::optional<double> reuse_idle;
    std::string proc_root = default_proc_root();
    /// --source: auto, procfs or bpf.
    snapshot_source source = snapshot_source::automatic;
    redraw_mode redraw = redraw_mode::automatic;
    /// --ledger: JSON and CSV frames carry the children fields and end with
    /// a ledger record (the table always shows both).
    bool ledger = false;
    /// --group-by; none: one row per process.
    ps_grouping group_by = ps_grouping::none;
};

subcommand add_ps(CLI::App& root);

// ---- doctor (doctor/doctor.cpp) ----------------------------------------------------------

subcommand add_doctor(CLI::App& root);
/// One line on `err` when `asked` is bpf and `s` came from /proc, saying why.
void note_snapshot_source(const snapshot& s, snapshot_source asked, std::ostream& err);

/// The whole `ps` command once its options are known.
int run_ps(const ps_options& opts, std::ostream& out, std::ostream& err);

}  // namespace proctimes::cli

namespace proctimes::cli {

// ---- top (top/command.cpp) ----------------------------------------------------------

/// `proctimes top`: the full-screen view (top/screen.hpp) or, with -b, frames
/// for scripts (top/batch.hpp), both of the live feed (top/live_feed.hpp).
subcommand add_top(CLI::App& root);

// ---- record, report (record/) ------------------------------------------------

/// `proctimes record`: the live feed's frames written to a store
/// (record/store.hpp) every interval.
subcommand add_record(CLI::App& root);
/// `proctimes report`: what used the CPU in a window of a store.
subcommand add_report(CLI::App& root);

// ---- run -----------------------------------------------------------------------

struct run_options {
    std::vector<std::string> command;  ///< the program and its arguments
    bool threads = false;              ///< poll and report the command's threads
    std::string output_file;           ///< -o: the report goes here instead of err
    output_options output;
    // --tree (run/run_tree.cpp): every process the command starts.
    bool tree = false;
    std::string trace_file;  ///< --trace FILE: Chrome trace event JSON
    std::string svg_file;    ///< --svg FILE: an SVG icicle
    std::size_t top = 15;    ///< --top N: busiest processes and programs in the table
    /// --tree-source: the recorder to prefer (none: bpf as root, else ptrace).
    tree_source tree_prefer = tree_source::none;
};

subcommand add_run(CLI::App& root);
/// The whole `run` command: returns the command's exit status (128 + signal
/// when killed, 127 when it could not be started, 125 when the report file
/// cannot be opened).
int run_run(const run_options& opts, std::ostream& out, std::ostream& err);
/// `run --tree`: the command and every process it starts (proctimes::run_tree);
/// the same exit statuses as run_run.
int run_run_tree(const run_options& opts, std::ostream& out, std::ostream& err);

// ---- watch ---------------------------------------------------------------------

/// `watch --end-source`: the exit stream where permitted, else snapshots
/// (automatic); the exit stream or nothing; snapshots only.
enum class end_choice : std::uint8_t { automatic, exit_stream, snapshot };
inline constexpr auto end_choice_words = std::to_array<word_row<end_choice>>({
    {end_choice::automatic, "auto", "the exit stream where permitted, else snapshots"},
    {end_choice::exit_stream, "exit-stream", "the exit stream only"},
    {end_choice::snapshot, "snapshot", "periodic snapshots only"},
});
constexpr const auto& word_rows(end_choice) noexcept { return end_choice_words; }
static_assert(words_in_order(end_choice_words));

struct watch_options {
    std::vector<std::string> pids;
    output_options output;
    // A scope instead of pids (watch/scoped.cpp): every process, or those the
    // given conditions select (all of them).
    bool all = false;
    std::optional<std::string> name;                ///< --name REGEX (RE2, searched in the comm)
    std::optional<std::string> user;                ///< --user NAME|UID (real uid)
    std::optional<std::string> cgroup;              ///< --cgroup PATH
    std::optional<double> duration;                 ///< --duration SECONDS; empty: until SIGINT/SIGTERM
    double interval = 1.0;                          ///< --interval SECONDS between snapshots
    end_choice end_source = end_choice::automatic;  ///< --end-source auto|exit-stream|snapshot
    std::string proc_root = default_proc_root();

    [[nodiscard]] bool scoped() const { return all || name || user || cgroup; }
};

subcommand add_watch(CLI::App& root);
/// The whole `watch` command: 0 all watched to their exit, 1 some pid could
/// not be watched, 128 + signal when ended by SIGINT or SIGTERM.
int run_watch(const watch_options& opts, std::ostream& out, std::ostream& err);
/// `watch` over a scope: each process in it that ends, then the totals. 0
/// after --duration, 1 when something could not be read, 2 usage error,
/// 128 + signal when ended by SIGINT or SIGTERM (the totals are written).
int run_watch_scoped(const watch_options& opts, std::ostream& out, std::ostream& err);

}  // namespace proctimes::cli
