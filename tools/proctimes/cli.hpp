// tools/proctimes/cli.hpp — the proctimes command as a function, so tests can
// run it in-process with string streams. main() only wires stdio to it.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace proctimes::cli {

/// Exit statuses of the command (docs/CLI.md, "Exit status").
inline constexpr int exit_success = 0;  ///< everything asked for was shown
inline constexpr int exit_failure = 1;  ///< some pid (or one of its threads) could not be shown
inline constexpr int exit_usage = 2;    ///< bad command line: nothing was done

/// Runs `proctimes <args...>` (args excludes argv[0]). Normal output goes to
/// `out`, diagnostics to `err`. Never throws; returns the exit status.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace proctimes::cli
