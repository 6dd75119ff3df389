// SPDX-License-Identifier: MIT
// proctimes run --tree [--trace FILE] [--svg FILE] [--top N] [-f FORMAT] [-o FILE] -- CMD [ARGS...]
//
// Runs the command under the library's tree recorder (proctimes::run_tree):
// every process it starts, at any depth, with its own final CPU, its
// programs and its end. The report (tree/render.hpp) goes to standard error
// or the -o file, as run's does; --trace and --svg files are checked before
// the command starts and written whole once it has ended.
#include <chrono>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "cli.hpp"
#include "commands.hpp"
#include "output/output.hpp"
#include "proctimes/tree.hpp"
#include "run/report.hpp"
#include "run/tree/files.hpp"
#include "run/tree/render.hpp"
#include "system.hpp"

namespace proctimes::cli {

namespace {

// An error of run_tree that says the recorder does not exist in this build or
// on this kernel, rather than that the command could not be started.
bool not_available(std::error_code ec) {
    return ec == errc::not_supported || ec == std::errc::function_not_supported ||
           ec == std::errc::operation_not_supported;
}

}  // namespace

int run_run_tree(const run_options& opts, std::ostream& out, std::ostream& err) {
    (void)out;  // the command owns standard output
    // One file named twice would keep only the last written: refused before
    // anything runs.
    const std::pair<const char*, const std::string*> files[] = {
        {"-o", &opts.output_file}, {"--trace", &opts.trace_file}, {"--svg", &opts.svg_file}};
    for (std::size_t i = 0; i < std::size(files); ++i) {
        for (std::size_t j = i + 1; j < std::size(files); ++j) {
            if (files[i].second->empty() || files[j].second->empty()) continue;
            if (!tree::same_file(*files[i].second, *files[j].second)) continue;
            err << fmt::format("proctimes: run: {} and {} name the same file '{}': give each its own\n", files[i].first,
                               files[j].first, escape_for_table(*files[j].second));
            return exit_usage;
        }
    }
    auto sink = run_report_sink::open(opts.output_file, err);
    if (!sink) return exit_run_report_failed;
    std::ostream& report = sink->stream();
    for (const auto& [option, path] : {std::pair{"--trace", &opts.trace_file}, std::pair{"--svg", &opts.svg_file}}) {
        if (path->empty()) continue;
        if (auto e = tree::check_output_file(*path); !e.empty()) {
            err << fmt::format("proctimes: run: {}: {}\n", option, e);
            return exit_run_report_failed;
        }
    }

    spawn_options so;
    so.argv = opts.command;
    so.open_files_soft_limit = inherited_open_files_soft_limit();
    std::optional<sys::interrupt_shield> shield;
    shield.emplace();
    const auto start = std::chrono::steady_clock::now();
    tree_options to;
    to.prefer = opts.tree_prefer;
    auto recorded = run_tree(so, to);
    const auto stop = std::chrono::steady_clock::now();
    shield.reset();
    if (!recorded) {
        if (not_available(recorded.error()))
            err << fmt::format("proctimes: run: --tree: not available: {}\n", recorded.error().message());
        else
            err << fmt::format("proctimes: run: cannot execute '{}': {}\n", escape_for_table(opts.command.front()),
                               recorded.error().message());
        return 127;
    }

    tree::tree_report r;
    r.command = opts.command;
    r.exit = recorded->command;
    r.tree = std::move(recorded->tree);
    r.wall = std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start);

    std::string text;
    switch (opts.output.format) {
        case output_format::table:
            text = tree::render_table(r, {opts.top, opts.output.utc});
            break;
        case output_format::json:
            text = tree::render_json(r);
            break;
        case output_format::csv:
            text = tree::render_csv(r);
            break;
    }
    std::vector<std::string> failures;
    if (!opts.trace_file.empty())
        if (auto e = tree::write_file_atomically(opts.trace_file, tree::render_trace(r)); !e.empty())
            failures.push_back("--trace: " + e);
    if (!opts.svg_file.empty())
        if (auto e = tree::write_file_atomically(opts.svg_file, tree::render_svg(r)); !e.empty())
            failures.push_back("--svg: " + e);

    report << text;
    if (auto e = sink->finish(); !e.empty()) failures.push_back(std::move(e));
    for (const auto& f : failures) err << fmt::format("proctimes: run: {} ({})\n", f, status_note(r.exit.status));
    if (!failures.empty()) return exit_run_report_failed;
    if (r.tree.unseen_processes > 0)
        err << fmt::format("proctimes: run: --tree: {} processes of the tree were not recorded\n",
                           r.tree.unseen_processes);
    if (!r.exit.status) {
        err << fmt::format("proctimes: run: the report is incomplete ({})\n", status_note(r.exit.status));
        return exit_run_report_failed;
    }
    return r.exit.status->shell_code();
}

}  // namespace proctimes::cli
