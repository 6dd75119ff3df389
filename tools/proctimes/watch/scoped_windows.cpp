// SPDX-License-Identifier: MIT
// `watch --all/--name/--user/--cgroup` on Windows: not built. A scope follows
// the processes that come and go across the whole system, by uid, cgroup and
// name pattern, from the system's exit stream or from successive /proc
// snapshots (watch/scoped.cpp); Windows has no uids or cgroups, and the
// pattern matcher (RE2) is not part of the Windows build. Watching pids is.
#include <ostream>

#include "cli.hpp"
#include "commands.hpp"

namespace proctimes::cli {

int run_watch_scoped(const watch_options& /*opts*/, std::ostream& /*out*/, std::ostream& err) {
    err << "proctimes: watch: --all, --name, --user and --cgroup are not available on Windows; "
           "give process ids instead (proctimes watch PID...)\n";
    return exit_usage;
}

}  // namespace proctimes::cli
