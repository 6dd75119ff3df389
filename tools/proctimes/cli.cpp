// SPDX-License-Identifier: MIT
// The proctimes command line: a CLI11 app whose subcommands live one per file
// (show/show.cpp, ...). Parse errors are usage errors (exit 2); everything a
// subcommand reports about the system is exit 1 (see cli.hpp).
#include "cli.hpp"

#include <cstdlib>
#include <exception>
#include <functional>
#include <ostream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "numbers.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/settings.hpp"
#include "system.hpp"
#include "version_info.hpp"
#if PROCTIMES_BUILT_EXPORTER
#include "serve/serve.hpp"
#endif

namespace proctimes::cli {

void add_output_options(CLI::App& app, output_options& into, const std::string& format_help) {
    add_choice(&app, "-f,--format", into.format, output_format_words, format_help)->type_name("FORMAT");
    app.add_flag("--utc", into.utc, "Table: print instants in UTC rather than local time");
}

namespace {
std::optional<std::uint64_t> g_inherited_nofile;
}  // namespace

void prepare_process() noexcept { g_inherited_nofile = sys::prepare_process(); }

std::optional<std::uint64_t> inherited_open_files_soft_limit() noexcept { return g_inherited_nofile; }

void prefer_exit_records() noexcept { set_exit_records_default(true); }

void warn_setting_problems(std::ostream& err) {
    for (const setting_problem& p : setting_problems())
        err << "proctimes: warning: " << p.variable << "=" << p.value << " ignored: expected " << p.expected << "\n";
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    try {
        warn_setting_problems(err);
#ifdef _WIN32
        CLI::App app{"Process and thread times (GetProcessTimes, GetThreadTimes).", "proctimes"};
#else
        CLI::App app{"Windows process and thread times (GetProcessTimes, GetThreadTimes) on Linux.", "proctimes"};
#endif
        app.set_version_flag("--version", std::function<std::string()>(version_text),
                             "Print the version and the optional parts of this build, then exit");
        app.require_subcommand(0, 1);
        app.footer(
            "Exit status: 0 success, 1 some pid (or one of its threads) could not be shown or the output\n"
            "could not be written, 2 usage error; run exits with the command's status, or 125 when its\n"
            "report is lost or incomplete (see 'proctimes run --help').\n"
            "Run 'proctimes SUBCOMMAND --help' for the options of a subcommand.\n");

        std::vector<subcommand> subcommands;
        subcommands.push_back(add_show(app));
        subcommands.push_back(add_ps(app));
        subcommands.push_back(add_run(app));
        subcommands.push_back(add_watch(app));
#ifndef _WIN32
        subcommands.push_back(add_top(app));
        subcommands.push_back(add_record(app));
        subcommands.push_back(add_report(app));
#endif
#if PROCTIMES_BUILT_EXPORTER
        subcommands.push_back(add_serve(app));
        subcommands.push_back(add_doctor(app));
#endif
#ifdef _WIN32
        // The exporter, the eBPF report and the live view are Linux's: a usage error that
        // says so, whatever follows (hidden from --help).
        std::vector<CLI::App*> linux_only;
        for (const char* name : {"serve", "doctor", "top", "record", "report"}) {
            CLI::App* sub = app.add_subcommand(name, "Linux only");
            sub->group("");
            sub->set_help_flag();
            sub->allow_extras();
            sub->prefix_command();
            linux_only.push_back(sub);
        }
#endif

        // CLI11 consumes its argument vector from the back.
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        try {
            app.parse(std::move(reversed));
        } catch (const CLI::ParseError& e) {
            // --help and --version arrive as "errors" with exit code 0.
            if (e.get_exit_code() == 0) {
                app.exit(e, out, err);
                return exit_success;
            }
            err << "proctimes: " << e.what() << "\nRun 'proctimes --help' for usage.\n";
            return exit_usage;
        }

        for (const auto& s : subcommands) {
            if (s.app->parsed()) return s.run(out, err);
        }
#ifdef _WIN32
        for (const CLI::App* sub : linux_only) {
            if (!sub->parsed()) continue;
            err << "proctimes: " << sub->get_name() << " is not available on Windows: "
                << (sub->get_name() == "serve" ? "the exporter reads Linux's /proc, cgroups and eBPF"
                    : sub->get_name() == "top" ? "the live view is built for Linux's terminals and exit stream"
                    : sub->get_name() == "record" || sub->get_name() == "report"
                        ? "recording reads the live machine through Linux's exit stream"
                        : "it reports on Linux's eBPF source")
                << "\n";
            return exit_usage;
        }
#endif
        out << app.help();
        return exit_success;
    } catch (const std::exception& e) {
        err << "proctimes: " << e.what() << '\n';
        return exit_failure;
    } catch (...) {
        err << "proctimes: unknown error\n";
        return exit_failure;
    }
}

}  // namespace proctimes::cli
