// SPDX-License-Identifier: MIT
// tools/proctimes/cli.hpp — the proctimes command as a function, so tests can
// run it in-process with string streams. main() only wires stdio to it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace proctimes::cli {

/// Exit statuses of the command (docs/CLI.md, "Exit status").
inline constexpr int exit_success = 0;  ///< everything asked for was shown
inline constexpr int exit_failure = 1;  ///< some pid (or one of its threads) could not be shown
inline constexpr int exit_usage = 2;    ///< bad command line: nothing was done
/// run: the command ran, but its report could not be opened, could not be
/// written (a full disk, a closed pipe) or is incomplete (its exit status is
/// unknown, threads that could not be read); the reason and the command's own
/// status go to standard error.
inline constexpr int exit_run_report_failed = 125;

/// What main() does first, in the tool's own process (not for the in-process
/// tests): SIGCHLD back to its default disposition (inherited as ignored, the
/// kernel would reap the commands run starts and their exit status would be
/// lost), and the soft limit on open files raised to the hard one (a handle
/// holds descriptors: run --threads keeps three per thread). Both are given
/// back to the commands run starts as proctimes found them, except SIGCHLD,
/// which a command always starts with at its default.
void prepare_process() noexcept;

/// The soft RLIMIT_NOFILE proctimes was started with, when prepare_process()
/// raised it; empty otherwise.
std::optional<std::uint64_t> inherited_open_files_soft_limit() noexcept;

/// Runs `proctimes <args...>` (args excludes argv[0]). Normal output goes to
/// `out`, diagnostics to `err`. Never throws; returns the exit status.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace proctimes::cli
