// SPDX-License-Identifier: MIT
// tools/proctimes/output/output.hpp — what the proctimes command prints, kept
// apart from how the values are collected.
//
// A subcommand collects plain task_records (one per process, threads nested)
// and hands them, with its field list (fields.hpp: every field and column is
// spelled once there), to one writer (writers.hpp): a table for people, JSON
// or CSV for programs. The JSON field names and CSV columns are a documented
// contract (docs/CLI.md, "Field reference"); the formatting helpers are
// exposed for the tests.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "proctimes/filetime.hpp"
#include "proctimes/times.hpp"
#include "proctimes/words.hpp"

namespace proctimes::cli {

/// What a process's interval CPU rests on: the library's delta_basis (both
/// snapshots, created in between, not seen before) or, from the exit
/// records, an end in the interval or one that came too late for the frame
/// of its own interval (nothing used in this one).
enum class interval_basis : std::uint8_t { both, created, unseen, ended, ended_earlier };
inline constexpr auto interval_basis_words = std::to_array<word_row<interval_basis>>({
    {interval_basis::both, "both", "the process was in both snapshots"},
    {interval_basis::created, "created", "the process started in the interval"},
    {interval_basis::unseen, "unseen", "the process was not seen before (its whole CPU counts)"},
    {interval_basis::ended, "ended", "the process ended in the interval (its exit record)"},
    {interval_basis::ended_earlier, "ended_earlier", "the end came too late for its own interval's frame"},
});
constexpr const auto& word_rows(interval_basis) noexcept { return interval_basis_words; }
static_assert(words_in_order(interval_basis_words));
/// "both", "created", "unseen", "ended", "ended_earlier": the basis field.
std::string_view to_string(interval_basis b) noexcept;

/// How `watch` over a scope saw an end: the kernel's exit record (the exit
/// stream), or gone from (or a zombie in) a periodic snapshot.
enum class end_seen_by : std::uint8_t { exit_stream, snapshot };
inline constexpr auto end_seen_by_words = std::to_array<word_row<end_seen_by>>({
    {end_seen_by::exit_stream, "exit_stream", "the kernel's exit record"},
    {end_seen_by::snapshot, "snapshot", "gone from, or a zombie in, a periodic snapshot"},
});
constexpr const auto& word_rows(end_seen_by) noexcept { return end_seen_by_words; }
static_assert(words_in_order(end_seen_by_words));
/// "exit_stream" or "snapshot": the end_source field.
std::string_view to_string(end_seen_by s) noexcept;

/// What `proctimes ps` adds to a record (docs/CLI.md, "proctimes ps").
struct ps_values {
    pid_t ppid = 0;                    ///< parent process id (the process's, on thread records)
    std::optional<std::uint32_t> uid;  ///< effective uid; empty when it could not be read
    std::string user_name;             ///< the uid's user name, or the uid in decimal, or "?"
    char proc_state = '?';             ///< proc(5) state letter: R, S, D, Z, T, t, X, I
};

/// CPU used over the last interval (`proctimes ps --interval`).
struct interval_values {
    std::chrono::nanoseconds interval{};  ///< length of the interval
    std::chrono::nanoseconds kernel{};    ///< kernel time used in it
    std::chrono::nanoseconds user{};      ///< user time used in it
    double cpu_percent = 0;               ///< 100 × (kernel + user) / interval; N CPUs: up to N × 100
    interval_basis basis = interval_basis::both;
    /// Growth of the process's children times (stat fields 17 and 16) over the
    /// interval: the final CPU of the children it reaped. Empty on threads and
    /// where the snapshot source does not read them.
    std::optional<std::chrono::nanoseconds> children_kernel, children_user;
};

/// What `proctimes run` adds to the command's record (docs/CLI.md, "proctimes run").
struct run_values {
    std::vector<std::string> command;    ///< CMD and its arguments, as typed
    std::chrono::nanoseconds elapsed{};  ///< exit − creation
    std::chrono::nanoseconds wall{};     ///< steady clock, spawn → wait
    double cpu_percent = 0;              ///< 100 × (kernel + user) / wall
    std::chrono::nanoseconds children_kernel{};
    std::chrono::nanoseconds children_user{};
    long max_rss_kib = 0;
    std::optional<int> exit_code;  ///< empty when killed, or the status is unknown
    std::optional<int> signal;     ///< empty when it exited, or the status is unknown
    bool core_dumped = false;
    std::vector<std::string> warnings;                ///< what the report lacks, and why
    std::chrono::nanoseconds thread_poll_interval{};  ///< --threads only
    std::chrono::nanoseconds threads_unattributed{};  ///< --threads only
};

/// What `watch` over a scope (--all, --name, --user, --cgroup) adds to the
/// record of a process that ended (docs/CLI.md, "proctimes watch").
struct scope_values {
    end_seen_by end_source = end_seen_by::snapshot;  ///< how the end was seen
    std::optional<int> exit_code;                    ///< empty when unknown, or a signal ended it
    std::optional<int> signal;                       ///< the signal that ended it; empty when unknown or none
};

/// The totals `watch` over a scope writes when it stops (docs/CLI.md).
struct scope_totals {
    std::chrono::nanoseconds interval{};         ///< how long it watched
    end_seen_by source = end_seen_by::snapshot;  ///< where ends came from
    std::uint64_t ended = 0;                     ///< processes in scope that ended
    std::uint64_t ended_partial = 0;             ///< of which only last-seen values (lower bounds) are known
    /// Summed final CPU (last-seen values for the partial ones) of `ended`.
    std::chrono::nanoseconds ended_kernel{}, ended_user{};
    /// The part of ended_kernel + ended_user used while watch ran.
    std::chrono::nanoseconds ended_during{};
    std::uint64_t alive = 0;  ///< processes in scope alive at the end
    /// CPU the `alive` processes used while watch ran.
    std::chrono::nanoseconds alive_kernel{}, alive_user{};
    /// --cgroup: what the cgroup's own counter grew by while watch ran.
    std::optional<std::chrono::nanoseconds> cgroup_cpu;
    /// --cgroup: cgroup_cpu − ended_during − alive CPU.
    std::optional<std::chrono::nanoseconds> unattributed;
    /// Times the exit stream reported records lost (0 with snapshots).
    std::uint64_t lost_reports = 0;
};

/// One process or one thread, as reported. Plain data: no handles, no I/O.
struct task_record {
    pid_t pid = 0;                ///< the process id (thread group id, for a thread)
    std::optional<pid_t> tid;     ///< the thread id; empty for a process record
    std::string name;             ///< comm: raw bytes, any byte but NUL
    instant creation{};           ///< creation instant (10 ms resolution)
    std::optional<instant> exit;  ///< exit instant; empty while running
    /// What `exit` promises: observed (the end was no later than `exit`),
    /// exit_record (creation + the kernel's elapsed time), bpf_exit (the
    /// kernel's exit instant); none while running.
    proctimes::exit_source exit_source = proctimes::exit_source::none;
    std::optional<instant> exit_earliest;        ///< the earliest the end can have been
    std::chrono::nanoseconds exit_resolution{};  ///< how far the end can be from `exit` (task_times)
    std::chrono::nanoseconds kernel{};
    std::chrono::nanoseconds user{};
    std::chrono::nanoseconds resolution{};        ///< of kernel and of user, each
    std::chrono::nanoseconds total_resolution{};  ///< of kernel + user
    std::optional<cpu_source> source;             ///< where kernel and user came from
    /// Running, exited or exited_partial; written only when
    /// output_options::state is set (run, ps --interval, watch).
    std::optional<task_state> state;
    /// When kernel and user were read; written with the state.
    std::optional<instant> sampled_at;
    std::vector<task_record> threads;     ///< thread records (processes only)
    std::optional<ps_values> ps;          ///< `ps` records only
    std::optional<interval_values> used;  ///< `ps --interval` records only
    std::optional<run_values> run;        ///< the command's record in `run` only
    std::optional<scope_values> scope;    ///< `watch` over a scope only
    std::optional<scope_totals> totals;   ///< the totals record of `watch` over a scope
};

enum class output_format : std::uint8_t { table, json, csv };
/// `--format` of show, ps, run and watch.
inline constexpr auto output_format_words = std::to_array<word_row<output_format>>({
    {output_format::table, "table", "aligned columns for people"},
    {output_format::json, "json", "JSON, for programs (watch: JSON Lines, one object per line)"},
    {output_format::csv, "csv", "comma-separated values with a header line"},
});
constexpr const auto& word_rows(output_format) noexcept { return output_format_words; }
static_assert(words_in_order(output_format_words));

struct output_options {
    output_format format = output_format::table;
    /// Whether threads were asked for: adds the TID column (table) and the
    /// "threads" array (JSON, present even when empty).
    bool threads = false;
    /// Table only: print instants in UTC instead of local time.
    bool utc = false;
    /// Adds each record's state: the STATE column (table), "state" and
    /// "sampled_at_time" (JSON), columns state,sampled_at_time (CSV). Used by
    /// run and watch; show's output does not have them.
    bool state = false;
    /// Adds what each exit instant promises (show, run, watch): "exit_source",
    /// "exit_earliest_filetime", "exit_earliest_time", "exit_resolution_ns"
    /// after "exit_time" (JSON), the same columns after `source` (CSV); the
    /// table marks an observed exit instant "<=" (no later than).
    bool exit_detail = false;
    /// The `ps` layout. Table: PID [TID] [PPID] OWNER S [CREATED | CPU%]
    /// KERNEL USER RES NAME (no STATE column). JSON and CSV: after the
    /// fields above, ppid, uid, user_name and proc_state, from task_record::ps.
    bool ps = false;
    /// With `ps`: the CPU used over the interval (task_record::used) — CPU%,
    /// and KERNEL/USER of the interval in the table; interval_ns,
    /// interval_kernel_ns, interval_user_ns, cpu_percent and basis fields.
    bool interval = false;
    /// With `interval`: the children the process reaped in the interval —
    /// the CHILD column (table), interval_children_kernel_ns and
    /// interval_children_user_ns (JSON, CSV).
    bool children = false;
};

/// Writes the records in the chosen format, each format ending with a newline:
/// the field list of `opts` (record_fields) through the writer of opts.format.
void write_records(std::ostream& out, const std::vector<task_record>& records, const output_options& opts);

/// A record from one task's times: every field the writers know, including
/// the state and sampled_at that only run, watch and ps print.
task_record make_record(pid_t pid, std::optional<pid_t> tid, std::string name, const proctimes::task_times& t);

void write_table(std::ostream& out, const std::vector<task_record>& records, const output_options& opts);
void write_json(std::ostream& out, const std::vector<task_record>& records, const output_options& opts);
void write_csv(std::ostream& out, const std::vector<task_record>& records, const output_options& opts);

// ---- formatting helpers (pure functions) --------------------------------------

/// Columns a terminal uses for `s`: one per UTF-8 lead byte ("µ" is two
/// bytes, one column). Exact for the cells tables hold (ASCII and "µ").
std::size_t display_width(std::string_view s);

/// A CPU duration for people: "0 s", "850 ns", "12.5 µs", "12.345 ms",
/// "1.234 s", "2 min 3.4 s", "3 h 02 min". Truncated (never rounded up) to the
/// digits shown; trailing zeros of the fraction are dropped.
std::string human_duration(std::chrono::nanoseconds d);

/// "2026-11-22 03:41:07.123 +01:00": milliseconds floored; local time (the
/// offset in force at that instant, from the system's calendar: system.hpp) or UTC.
std::string table_time(instant t, bool utc);

/// A record's exit instant for the table: "-" while running; table_time,
/// prefixed "<= " when it was observed (the end was no later than that).
std::string table_exit(const task_record& r, bool utc);
/// The record's CPU source and state as written (to_string of the enum), or
/// "" when the record has none.
std::string source_text(const task_record& r);
std::string state_text(const task_record& r);

/// RFC 3339 UTC with 7 fractional digits (whole FILETIME ticks, floored):
/// "2026-11-22T03:41:07.1234567Z".
std::string rfc3339_utc(instant t);
/// rfc3339_utc(t), appended to `out` (no allocation once `out` has room).
void append_rfc3339_utc(std::string& out, instant t);

/// FILETIME ticks since 1601 of an instant (floored to 100 ns); empty only
/// outside FILETIME's range, which no sys_time<nanoseconds> reaches.
std::optional<std::uint64_t> filetime_ticks(instant t);

/// A name made printable on one line for the table: bytes 0x20..0x7E are kept
/// except '\', which becomes "\\"; every other byte becomes "\xHH" (lower-case
/// hex). The result is pure ASCII, one column per byte.
std::string escape_for_table(std::string_view name);

/// An argument as a shell would need it typed: as is when it holds only
/// characters no shell treats specially, else in single quotes.
std::string shell_quote(const std::string& a);

/// A name as valid UTF-8 for JSON and CSV: valid UTF-8 sequences are kept;
/// every byte that is not part of a valid sequence (a comm truncated inside a
/// character, a Latin-1 name) becomes the code point U+00HH of that byte.
std::string to_valid_utf8(std::string_view bytes);
/// Length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF) at the start of the non-empty `s`, or 0.
std::size_t utf8_sequence_length(std::string_view s);

/// One CSV field with RFC 4180 quoting: quoted (inner quotes doubled) when it
/// contains a comma, a double quote, CR or LF.
std::string csv_field(std::string_view s);

/// The end of a command: flushes `out`; a failed write is reported on `err`
/// and is a failure, as is `failed` (something asked for could not be shown).
int finish_output(std::ostream& out, std::ostream& err, bool failed);

}  // namespace proctimes::cli
