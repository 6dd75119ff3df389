// tools/proctimes/commands.hpp — the subcommands of proctimes. Each lives in
// its own file (show.cpp, ...) and registers itself on the root CLI11 app;
// cli.cpp calls the runner of the one that was parsed.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "output.hpp"

namespace CLI {
class App;
}

namespace proctimes::cli {

/// A registered subcommand: its CLI11 app (owned by the root app) and what to
/// do once the command line has been parsed into its options.
struct subcommand {
    CLI::App* app = nullptr;
    std::function<int(std::ostream& out, std::ostream& err)> run;
};

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

}  // namespace proctimes::cli
