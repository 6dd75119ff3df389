// SPDX-License-Identifier: MIT
// tools/proctimes/ps/internal.hpp — the parts of `proctimes ps` shared by its
// files: ps.cpp (options, one snapshot), frames.cpp (the --interval loop),
// ledger.cpp (the ledger's lines and records) and group.cpp (--group-by).
// The records, the exit stream and the ledger of a frame are in frames/
// (frames/frames.hpp), which `proctimes top` shares.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <sys/types.h>

#include "commands.hpp"
#include "frames/frames.hpp"
#include "output.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"
#include "users.hpp"

namespace proctimes::cli::ps_detail {

using cli::user_names;

// Orders records (and the threads of each) by `key`; ties by pid, then tid.
void sort_records(std::vector<task_record>& records, ps_sort key);
void keep_top(std::vector<task_record>& records, std::optional<std::size_t> n);
void report_failures(const snapshot& s, std::ostream& err);
snapshot_options snapshot_options_of(const ps_options& opts);

int run_once(const ps_options& opts, std::optional<user_id> only_uid, std::ostream& out, std::ostream& err);
int run_interval(const ps_options& opts, std::optional<user_id> only_uid, std::ostream& out, std::ostream& err);

// ---- the ledger of a frame (frames/frames.hpp, shared with top) -----------------

using frames::add_ledger_records;
using frames::build_records;
using frames::ledger_record;
using frames::ledger_sources;
using frames::ledger_terms;
using frames::used_of;

/// The ledger after a frame's records: lines of at most 80 columns (table),
/// or with --ledger a JSON object / a CSV row of its own (docs/CLI.md).
void write_ledger(std::ostream& out, const result<cpu_ledger>& l, const ledger_sources& src, output_format format);

// ---- --group-by (group.cpp) ------------------------------------------------------

/// The cgroup counters read next to each snapshot, by cgroup path.
struct cgroup_readings {
    std::map<std::string, std::chrono::nanoseconds> usage;
    std::unordered_map<pid_t, std::string> cgroup_of;  ///< each process's cgroup
};
cgroup_readings read_cgroups(const snapshot& s, const std::string& proc_root);

/// One row of --group-by: the processes of one group.
struct group_row {
    std::string key;
    std::size_t processes = 0, ended = 0;
    std::chrono::nanoseconds kernel{}, user{}, children{};
    std::optional<std::chrono::nanoseconds> cgroup_usage;  ///< the counter's growth (cgroup only)
    std::chrono::nanoseconds subtree{};                    ///< cpu of this cgroup's rows and its descendants'

    [[nodiscard]] std::chrono::nanoseconds cpu() const { return kernel + user + children; }
};

/// The frame's rows summed per group, busiest first, at most --top of them.
std::vector<group_row> group_rows(const std::vector<task_record>& records, const cpu_ledger* l, const ps_options& opts,
                                  const cgroup_readings* before, const cgroup_readings* after);

/// Writes the groups' rows instead of one per process (the table's columns as
/// wide as their widest cell).
void write_groups(std::ostream& out, const std::vector<group_row>& rows, const cpu_ledger* l, const ps_options& opts);

}  // namespace proctimes::cli::ps_detail
