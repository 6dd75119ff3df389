// SPDX-License-Identifier: MIT
// proctimes run [--format table|json|csv] [--threads] [-o FILE] [--utc] -- CMD [ARGS...]
//
// Starts the command (proctimes::child::spawn, stdio inherited), waits for it,
// and reports its creation and exit instants, wall time, kernel and user time,
// its waited-for descendants' times and its peak RSS — /usr/bin/time with
// 100 ns instants and µs CPU times. The report goes to `err` (the command's
// stdout stays clean) or to the -o file. While the command runs SIGINT and
// SIGQUIT have no effect here, so Ctrl-C reaches the command and the report is
// still written. With --threads the command's thread list is polled and each
// thread seen is reported with its own times.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "numbers.hpp"
#include "output/writers.hpp"
#include "proctimes/error.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/process.hpp"
#include "proctimes/spawn.hpp"
#include "proctimes/tree.hpp"
#include "run/report.hpp"
#include "run/thread_tracker.hpp"
#include "system.hpp"

#ifndef _WIN32
#include <csignal>

#include <sys/ptrace.h>
#include <sys/wait.h>
#endif

namespace proctimes::cli {

namespace {

using std::chrono::nanoseconds;
using std::chrono::steady_clock;

constexpr nanoseconds thread_poll_interval = std::chrono::milliseconds{2};

// comm as the kernel sets it on exec: the basename of the path, 15 bytes at most.
std::string comm_of(const std::string& argv0) {
    const auto slash = argv0.rfind('/');
    std::string base = slash == std::string::npos ? argv0 : argv0.substr(slash + 1);
    if (base.size() > 15) base.resize(15);
    return base;
}

// table_time with the 7 fractional digits of the FILETIME tick.
std::string precise_time(instant t, bool utc) {
    using namespace std::chrono;
    std::string s = table_time(t, utc);
    const auto ticks = floor<filetime_duration>(t);
    const auto frac = (ticks - floor<seconds>(ticks)).count();
    if (s.size() > 23 && s[19] == '.') s.replace(20, 3, fmt::format("{:07}", frac));
    return s;
}

// What the exit instant promises (docs/CLI.md, "Exit instants").
std::string exit_note(const task_record& p, bool utc) {
    if (p.exit_source == exit_source::exit_record)
        return fmt::format("kernel's exit record: created + elapsed (1 µs); floored, up to {} later",
                           human_duration(p.exit_resolution));
    if (p.exit_source == exit_source::observed && p.exit_earliest)
        return fmt::format("no later than: stamped when seen; no earlier than {}", precise_time(*p.exit_earliest, utc));
    return "";
}

struct run_report {
    std::vector<std::string> command;
    task_record process;
    child_exit exit;
    nanoseconds wall{};     // steady clock, spawn → wait
    nanoseconds elapsed{};  // exit − creation
    double cpu_percent = 0;
    std::optional<nanoseconds> unattributed;  // --threads
    std::vector<std::string> warnings;        // what the report lacks, and why
    bool threads_incomplete = false;          // --threads: some could not be listed or read
};

// Where the report's creation instant, descendants' CPU and peak memory come
// from on this system (the library's spawn, docs/CLI.md and docs/WINDOWS.md).
#ifdef _WIN32
constexpr std::string_view creation_tick_source = "the system's creation time at its clock tick";
constexpr std::string_view children_source = "its job's CPU less its own (job accounting, clock ticks)";
constexpr std::string_view max_rss_source = "peak working set of the command itself";
#else
constexpr std::string_view creation_tick_source = "the kernel's start tick";
constexpr std::string_view children_source = "1 µs; descendants it waited for (wait rusage)";
constexpr std::string_view max_rss_source = "ru_maxrss: it and its waited-for descendants";
#endif

// The exit status line of the table: a code, a signal, or unknown.
std::string status_text(const std::optional<exit_status>& st) {
    if (!st) return "unknown";
    if (!st->signaled()) return std::to_string(st->code);
    return fmt::format("killed by {}{} (exit status {})", sys::signal_name(st->signal),
                       st->core_dumped ? ", core dumped" : "", st->shell_code());
}

void write_table_report(std::ostream& o, const run_report& r, const output_options& opts) {
    const auto& p = r.process;
    const auto& e = r.exit;
    std::string cmd;
    for (const auto& a : r.command) cmd += (cmd.empty() ? "" : " ") + escape_for_table(shell_quote(a));
    const auto line = [&](std::string_view key, const std::string& value, std::string_view note) {
        std::string l = fmt::format("{:<16} {}", key, value);
        // Columns, not bytes: "µ" is two bytes wide in UTF-8, one column.
        const auto width = static_cast<std::size_t>(
            std::count_if(l.begin(), l.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
        if (!note.empty()) l += fmt::format("{:<{}}  ({})", "", width < 48 ? 48 - width : 0, note);
        o << l << '\n';
    };
    line("command", cmd, "");
    line("pid", fmt::format("{} ({})", p.pid, escape_for_table(p.name)), "");
    const bool own = !e.times_error;  // its own values, not only the wait's
    line("exit status", status_text(e.status), e.status ? "" : "reaped before proctimes could wait: SIGCHLD ignored?");
    const auto creation_res = e.times.precision.creation_resolution;
    const bool ticked = own || creation_res == std::chrono::milliseconds{10};
    line("created", precise_time(p.creation, opts.utc),
         ticked ? fmt::format("{}: {}, floored", human_duration(creation_res), creation_tick_source)
                : "bracketed by clock reads around clone3: no /proc");
    line("exited",
         p.exit ? (p.exit_source == exit_source::observed ? "<= " : "") + precise_time(*p.exit, opts.utc) : "-",
         exit_note(p, opts.utc));
    line("elapsed", human_duration(r.elapsed),
         ticked ? fmt::format("exit - created; {}, from the creation tick", human_duration(creation_res))
                : "exit - created; within the creation bracket");
    line("wall", human_duration(r.wall), "steady clock around spawn -> wait; 1 ns");
    const std::string src = fmt::format("{} each, {} total; {}", human_duration(p.resolution),
                                        human_duration(p.total_resolution), source_text(p));
    const std::string own_src = own ? src : src + ", with its waited-for descendants";
    line("kernel", human_duration(p.kernel), own_src);
    line("user", human_duration(p.user), own_src);
    line("cpu", fmt::format("{:.1f} %", r.cpu_percent), "(kernel + user) / wall");
    const std::string_view children_note = own ? children_source : "not told apart without /proc: in kernel and user";
    line("children kernel", own ? human_duration(e.children_kernel) : std::string("-"), children_note);
    line("children user", own ? human_duration(e.children_user) : std::string("-"), children_note);
    line("max rss", fmt::format("{} KiB", e.max_rss_kib), max_rss_source);
    if (opts.threads) {
        o << fmt::format("\nthreads (thread list polled every {}):\n", human_duration(thread_poll_interval));
        const field_list fields = record_fields(opts);
        const auto table = open_writer(o, output_format::table, fields, opts);
        table->write(p);
        table->finish();
        const auto why_not = exit_records_status();
        const std::string records_in_use = why_not ? fmt::format("not in use ({})", why_not.message()) : "in use";
        o << fmt::format(
            "Threads that started and ended between two polls are not listed. Source exit_record: final values\n"
            "from the kernel's exit record. exited_partial: the thread's CPU times are its last sample (at most\n"
            "one poll before it ended); the exit instant is the library's. Exit records: {}.\n"
            "CPU time not attributed to a listed thread (missed threads, and work after last samples): {}\n",
            records_in_use, human_duration(r.unattributed.value_or(nanoseconds{0})));
    }
}

// What run adds to the command's record (run_fields): the JSON and CSV report.
run_values values_of(const run_report& r) {
    run_values v;
    v.command = r.command;
    v.elapsed = r.elapsed;
    v.wall = r.wall;
    v.cpu_percent = r.cpu_percent;
    v.children_kernel = r.exit.children_kernel;
    v.children_user = r.exit.children_user;
    v.max_rss_kib = r.exit.max_rss_kib;
    const auto& st = r.exit.status;  // unknown: exit_code and signal both empty
    if (st && !st->signaled()) v.exit_code = st->code;
    if (st && st->signaled()) v.signal = st->signal;
    v.core_dumped = st && st->core_dumped;
    v.warnings = r.warnings;
    v.thread_poll_interval = thread_poll_interval;
    v.threads_unattributed = r.unattributed.value_or(nanoseconds{0});
    return v;
}

}  // namespace

namespace {

#ifndef _WIN32
// The command made itself a tracee of proctimes (PTRACE_TRACEME, as a program
// that expects a debugger does) and sits in a trace-stop, which nobody else
// would end: let go, the exec's SIGTRAP dropped and any other signal
// delivered, so that it runs on as untraced.
void release_trace_stop(pid_t pid) noexcept {
    siginfo_t si{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &si, WSTOPPED | WNOHANG | WNOWAIT) != 0 || si.si_pid != pid ||
        si.si_code != CLD_TRAPPED)
        return;
    siginfo_t taken{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &taken, WSTOPPED | WNOHANG) != 0 || taken.si_pid != pid) return;
    (void)::ptrace(PTRACE_DETACH, pid, nullptr, taken.si_status == SIGTRAP ? 0 : taken.si_status);
}
#endif

// Waits for the command, polling its threads with --threads.
result<child_exit> wait_for_command(child& c, bool threads, run_report& r) {
    auto& warnings = r.warnings;
#ifdef _WIN32
    if (!threads) return c.wait();
#else
    if (!threads) {
        for (;;) {
            auto w = c.wait_for(std::chrono::milliseconds{100});
            if (!w) return w.error();
            if (*w) return **w;
            release_trace_stop(c.id());
        }
    }
#endif
    if (!c.handle().valid()) {
        warnings.push_back(fmt::format("its threads cannot be listed: {}", c.handle_error().message()));
        r.threads_incomplete = true;
        return c.wait();
    }
    thread_tracker tracker(c.handle());
    for (;;) {
        tracker.poll();
        auto w = c.wait_for(thread_poll_interval);
        if (!w) return w.error();
#ifndef _WIN32
        if (!*w) release_trace_stop(c.id());
#endif
        if (*w) {
            r.process.threads = tracker.records(c.id());
            if (auto f = tracker.list_failure())
                warnings.push_back(fmt::format("its threads could not always be listed: {}", f->message()));
            for (const auto& [tid, ec] : tracker.open_failures())
                warnings.push_back(fmt::format("thread {} could not be read: {}", tid, ec.message()));
            r.threads_incomplete = tracker.list_failure() || !tracker.open_failures().empty();
            return **w;
        }
    }
}

}  // namespace

int run_run(const run_options& opts, std::ostream& out, std::ostream& err) {
    if (opts.tree) return run_run_tree(opts, out, err);
    (void)out;  // the command owns standard output
    auto sink = run_report_sink::open(opts.output_file, err);
    if (!sink) return exit_run_report_failed;
    std::ostream& report = sink->stream();

    if (opts.threads) prefer_exit_records();
    spawn_options so;
    so.argv = opts.command;
    so.open_files_soft_limit = inherited_open_files_soft_limit();  // the command gets the limit proctimes got
    std::optional<sys::interrupt_shield> shield;
    shield.emplace();
    const auto start = steady_clock::now();
    auto c = child::spawn(so);
    if (!c) {
        err << fmt::format("proctimes: run: cannot execute '{}': {}\n", escape_for_table(opts.command.front()),
                           c.error().message());
        return 127;
    }
    // From here on the command runs: whatever fails, it is waited for and
    // reported on with what can still be read.
    run_report r;
    if (auto ec = c->handle_error())
        r.warnings.push_back(
            fmt::format("its /proc entry cannot be read ({}): only what waitid(2) gives is reported", ec.message()));
    std::string name;
    if (auto n = c->handle().name()) name = std::move(*n);
    auto ex = wait_for_command(*c, opts.threads, r);
    const auto stop = steady_clock::now();
    shield.reset();
    if (!ex) {
        err << fmt::format("proctimes: run: pid {} ran, but nothing about its end could be read: {}{}\n", c->id(),
                           ex.error().message(),
                           ex.error() == std::errc::no_such_process
                               ? " (reaped before proctimes could wait: SIGCHLD ignored?); its exit status is unknown"
                               : "");
        return exit_run_report_failed;
    }
    if (name.empty()) name = comm_of(opts.command.front());
    if (ex->times_error && !c->handle_error())
        r.warnings.push_back(
            fmt::format("its own times could not be read at its exit ({}): only what waitid(2) "
                        "gives is reported",
                        ex->times_error.message()));
    if (!ex->status)
        r.warnings.push_back(
            "its exit status is unknown: it was reaped before proctimes could wait for it "
            "(SIGCHLD ignored by the caller of this library, or a handler that waits)");

    r.command = opts.command;
    r.exit = *ex;
    auto threads = std::move(r.process.threads);
    r.process = make_record(c->id(), std::nullopt, name, ex->times);
    r.process.threads = std::move(threads);
    r.wall = std::chrono::duration_cast<nanoseconds>(stop - start);
    if (r.process.exit) r.elapsed = *r.process.exit - r.process.creation;
    r.cpu_percent = r.wall.count() > 0
                        ? 100.0 * static_cast<double>(ex->times.cpu().count()) / static_cast<double>(r.wall.count())
                        : 0.0;
    if (opts.threads) {
        nanoseconds sum{};
        for (const auto& t : r.process.threads) sum += t.kernel + t.user;
        r.unattributed = std::max(ex->times.cpu() - sum, nanoseconds{0});
    }

    output_options o = opts.output;
    o.threads = opts.threads;
    o.state = true;
    o.exit_detail = true;
    if (o.format == output_format::table) {
        write_table_report(report, r, o);
    } else {
        r.process.run = values_of(r);
        const field_list fields = run_fields(o);
        const auto writer = open_writer(report, o.format, fields, o, layout::single);
        writer->write(r.process);
        writer->finish();
    }
    if (auto e = sink->finish(); !e.empty()) {
        err << fmt::format("proctimes: run: {} ({})\n", e, status_note(ex->status));
        return exit_run_report_failed;
    }
    for (const auto& w : r.warnings) err << fmt::format("proctimes: run: pid {}: {}\n", c->id(), escape_for_table(w));
    if (!ex->status || r.threads_incomplete) {
        err << fmt::format("proctimes: run: the report is incomplete ({})\n", status_note(ex->status));
        return exit_run_report_failed;
    }
    return ex->status->shell_code();
}

subcommand add_run(CLI::App& root) {
    struct state {
        run_options opts;
    };
    auto st = std::make_shared<state>();

    CLI::App* app = root.add_subcommand(
        "run",
        "Run a command, then report its creation and exit instants, wall, kernel and user times, CPU %, "
        "children's times and peak RSS (like /usr/bin/time, with 100 ns instants and µs CPU times).");
    CLI::Option* threads = app->add_flag("-t,--threads", st->opts.threads,
                                         "Poll the command's threads while it runs and report each one seen");
    CLI::Option* tree = app->add_flag("--tree", st->opts.tree,
                                      "Record every process the command starts, at any depth, with its own CPU, "
                                      "and report the tree");
    tree->excludes(threads);
    app->add_option("--trace", st->opts.trace_file,
                    "With --tree: also write the tree as a Chrome trace (Perfetto UI, chrome://tracing) to FILE")
        ->type_name("FILE")
        ->needs(tree);
    app->add_option("--svg", st->opts.svg_file, "With --tree: also write the tree as an SVG icicle to FILE")
        ->type_name("FILE")
        ->needs(tree);
    add_choice(app, "--tree-source", st->opts.tree_prefer, tree_source_words,
               "With --tree: the recorder to use, bpf (eBPF, root) or ptrace; default bpf as root, else ptrace. "
               "One that cannot be used gives way to the next, and the report says why",
               {tree_source::ptrace, tree_source::bpf})
        ->type_name("SOURCE")
        ->needs(tree);
    app->add_option("--top", st->opts.top,
                    "With --tree, table: how many of the busiest processes and programs to list (default 15)")
        ->type_name("N")
        ->check(whole_number_in(1, 4294967295U))
        ->needs(tree);
    add_output_options(*app, st->opts.output, "Report: table (for people, default), json or csv");
    app->add_option("-o,--output", st->opts.output_file, "Write the report to FILE instead of standard error")
        ->type_name("FILE");
    app->add_option("command", st->opts.command, "The command and its arguments (after --)")
        ->required()
        ->type_name("CMD [ARGS...]");
    app->positionals_at_end();
    app->footer(
        "The report goes to standard error (or FILE), so the command's standard output stays its own.\n"
        "Exit status: the command's; 128 + N when it was killed by signal N; 127 when it could not be\n"
        "started; 125 when the report is lost or incomplete (FILE cannot be opened or written, the\n"
        "command's exit status is unknown, or some of its threads could not be read); 2 usage error.\n"
        "Fields: docs/CLI.md.\n");

    return {app, [st](std::ostream& out, std::ostream& err) {
                run_options o = st->opts;
                return run_run(o, out, err);
            }};
}

}  // namespace proctimes::cli
