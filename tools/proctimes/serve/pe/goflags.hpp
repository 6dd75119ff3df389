// SPDX-License-Identifier: MIT
// process-exporter's command line, accepted by `serve` beside its own: the
// flags as Go's flag package reads them (-name, --name, -name=value, -name
// value; a bool flag alone is true, or -name=false), and the -procnames /
// -namemapping way of naming groups.
#pragma once

#include <string>
#include <vector>

#include "serve/error.hpp"
#include "serve/pe/grouping.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli::serve {

/// What process-exporter's flags set that `serve`'s own options also set;
/// the command checks them against each other.
struct go_flags_seen {
    bool listen = false, config = false, threads = false, smaps = false, grouping = false;
    std::string listen_value;
};

/// Applies `args` (what the option parser did not know, in order) to `o`.
/// Errors (error_kind::usage, naming the flag): an unknown flag, a value that
/// is missing or not what the flag takes, or a flag whose meaning proctimes
/// does not implement yet (which is never silently ignored).
status apply_go_flags(const std::vector<std::string>& args, serve_options& o, go_flags_seen& seen);

/// process-exporter's rules for -procnames and -namemapping: each name of
/// `procnames` (comma-separated) is a group of the processes with that comm;
/// `namemapping` alternates a comm and a regex (RE2), and names a process of
/// that comm "comm:" + the regex's first non-empty capture in its command
/// line (no capture: not in any group). Errors (error_kind::usage): an odd
/// count of tokens, an empty token or a regex that does not compile.
outcome<std::vector<pe_rule>> rules_from_procnames(const std::string& procnames, const std::string& namemapping);

}  // namespace proctimes::cli::serve
