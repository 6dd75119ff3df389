// SPDX-License-Identifier: MIT
// proctimes report [--from T1] [--to T2] [--store PATH]
//                  [--group-by program|user|cgroup] [--top N] [--format table|json|csv]
//
// What used the CPU in a window of a recording (record/store.hpp's report):
// the groups' CPU, the machine's busy CPU over the same intervals and the
// share of it the ledger attributed to processes.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "commands.hpp"
#include "numbers.hpp"
#include "output/output.hpp"
#include "record/store.hpp"
#include "record/when.hpp"
#include "record/words.hpp"

namespace proctimes::cli {

namespace {

using std::chrono::nanoseconds;

struct report_options {
    std::string from = "-1h", to = "now";
    std::optional<std::string> store;
    record::group_by by = record::group_by::program;
    std::size_t top = 20;
    bool all = false;
    output_format format = output_format::table;
};

double seconds(nanoseconds d) { return std::chrono::duration<double>(d).count(); }
double share(nanoseconds part, nanoseconds whole) { return whole.count() > 0 ? seconds(part) / seconds(whole) : 0.0; }

void write_table(const record::report& r, const report_options& o, instant from, instant to, std::ostream& out) {
    out << fmt::format("Window {} .. {}: {} intervals recorded", record::describe(from), record::describe(to),
                       r.intervals);
    if (r.intervals > 0)
        out << fmt::format(", {} .. {} ({})", record::describe(r.first), record::describe(r.last),
                           record::describe_duration(r.span));
    out << '\n';
    if (r.intervals == 0) return;
    out << fmt::format("Machine busy CPU {:.3f} s; attributed to processes {:.3f} s ({:.1f} %)\n\n", seconds(r.busy),
                       seconds(r.attributed), 100.0 * share(r.attributed, r.busy));
    const std::string head = std::string(word_of(o.by));
    std::size_t w = std::max<std::size_t>(head.size(), 7);
    for (const auto& row : r.rows) w = std::min<std::size_t>(std::max(w, escape_for_table(row.key).size()), 48);
    out << fmt::format("{:<{}}  {:>11} {:>6} {:>11} {:>11} {:>11} {:>6} {:>6}\n", fmt::format("{:s}", head), w, "CPU s",
                       "BUSY%", "KERNEL s", "USER s", "CHILDREN s", "PROCS", "ENDED");
    for (const auto& row : r.rows) {
        std::string key = escape_for_table(row.key);
        if (key.empty()) key = "-";
        out << fmt::format("{:<{}}  {:>11.3f} {:>6.1f} {:>11.3f} {:>11.3f} {:>11.3f} {:>6} {:>6}\n", key, w,
                           seconds(row.cpu()), 100.0 * share(row.cpu(), r.busy), seconds(row.kernel), seconds(row.user),
                           seconds(row.children_kernel + row.children_user), row.processes, row.ended);
    }
}

void write_json(const record::report& r, const report_options& o, instant from, instant to, std::ostream& out) {
    nlohmann::ordered_json j;
    j["from"] = record::describe(from);
    j["to"] = record::describe(to);
    j["group_by"] = std::string(word_of(o.by));
    j["intervals"] = r.intervals;
    j["first"] = r.intervals > 0 ? nlohmann::ordered_json(record::describe(r.first)) : nlohmann::ordered_json();
    j["last"] = r.intervals > 0 ? nlohmann::ordered_json(record::describe(r.last)) : nlohmann::ordered_json();
    j["span_ns"] = r.span.count();
    j["busy_ns"] = r.busy.count();
    j["attributed_ns"] = r.attributed.count();
    j["attributed_share"] = share(r.attributed, r.busy);
    auto rows = nlohmann::ordered_json::array();
    for (const auto& row : r.rows) {
        nlohmann::ordered_json x;
        x["key"] = to_valid_utf8(row.key);
        x["cpu_ns"] = row.cpu().count();
        x["kernel_ns"] = row.kernel.count();
        x["user_ns"] = row.user.count();
        x["children_kernel_ns"] = row.children_kernel.count();
        x["children_user_ns"] = row.children_user.count();
        x["processes"] = row.processes;
        x["ended"] = row.ended;
        rows.push_back(std::move(x));
    }
    j["rows"] = std::move(rows);
    out << j.dump(2) << '\n';
}

void write_csv(const record::report& r, const report_options& o, std::ostream& out) {
    out << "group_by,key,cpu_ns,kernel_ns,user_ns,children_kernel_ns,children_user_ns,processes,ended,busy_share\n";
    for (const auto& row : r.rows) {
        out << fmt::format("{},{},{},{},{},{},{},{},{},{:.6f}\n", word_of(o.by), csv_field(to_valid_utf8(row.key)),
                           row.cpu().count(), row.kernel.count(), row.user.count(), row.children_kernel.count(),
                           row.children_user.count(), row.processes, row.ended, share(row.cpu(), r.busy));
    }
}

int run_report(const report_options& o, std::ostream& out, std::ostream& err) {
    const instant now = std::chrono::time_point_cast<nanoseconds>(std::chrono::system_clock::now());
    const auto from = record::parse_instant(o.from, now);
    const auto to = record::parse_instant(o.to, now);
    if (!from.ok() || !to.ok()) {
        err << fmt::format("proctimes report: --{}: {}\n", from.ok() ? "to" : "from",
                           from.ok() ? to.why() : from.why());
        return exit_usage;
    }
    if (to.value() < from.value()) {
        err << fmt::format("proctimes report: --to {} is before --from {}\n", record::describe(to.value()),
                           record::describe(from.value()));
        return exit_usage;
    }
    const std::string path = o.store.value_or(record::default_store_path);
    auto s = record::store::open_reader(path);
    if (!s) {
        err << fmt::format("proctimes report: {}\n", s.error().message);
        return exit_failure;
    }
    auto r = s->report(from.value(), to.value(), o.by, o.all ? 0 : o.top);
    if (!r) {
        err << fmt::format("proctimes report: {}\n", r.error().message);
        return exit_failure;
    }
    switch (o.format) {
        case output_format::json:
            write_json(*r, o, from.value(), to.value(), out);
            break;
        case output_format::csv:
            write_csv(*r, o, out);
            break;
        case output_format::table:
            write_table(*r, o, from.value(), to.value(), out);
            break;
    }
    return finish_output(out, err, false);
}

CLI::Validator instant_check() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            const instant now = std::chrono::time_point_cast<nanoseconds>(std::chrono::system_clock::now());
            auto p = record::parse_instant(text, now);
            return p.ok() ? std::string() : p.why();
        },
        "", "TIME");
}

}  // namespace

subcommand add_report(CLI::App& root) {
    constexpr std::uint64_t max_top = 1'000'000;
    auto opts = std::make_shared<report_options>();
    CLI::App* app = root.add_subcommand(
        "report",
        "What used the CPU in a window of a recording ('proctimes record'): CPU per program, user or cgroup, "
        "beside the machine's busy CPU.");
    app->add_option("--from", opts->from,
                    "Start of the window (default -1h): ISO 8601 (2026-11-28T03:00:00Z; local time without a "
                    "zone), -1h, -30m, 'today 03:00', 'yesterday 23:30', now, @SECONDS")
        ->check(instant_check())
        ->type_name("TIME");
    app->add_option("--to", opts->to, "End of the window (default now); the same forms as --from")
        ->check(instant_check())
        ->type_name("TIME");
    add_optional(app, "-s,--store", opts->store, fmt::format("The store (default {})", record::default_store_path))
        ->type_name("PATH");
    add_choice(app, "-g,--group-by", opts->by, record::group_by_words, "One row per program (default), user or cgroup")
        ->type_name("GROUP");
    app->add_option("--top", opts->top, "At most N rows, the busiest (default 20)")
        ->check(whole_number_in(1, max_top))
        ->type_name("N");
    app->add_flag("--all", opts->all, "Every row (no --top limit)");
    add_choice(app, "-f,--format", opts->format, output_format_words,
               "table (default), json (one object) or csv (one line per row, with a header)")
        ->type_name("FORMAT");
    app->footer(
        "The window takes the intervals that ended in [--from, --to]. CPU is the processes' own in those\n"
        "intervals plus their reaped children's that no row shows; BUSY% is of the machine's busy CPU.\n"
        "Exit status: 0 success, 1 the store could not be read or the output written, 2 usage error.\n");
    return {app, [opts](std::ostream& out, std::ostream& err) { return run_report(*opts, out, err); }};
}

}  // namespace proctimes::cli
