// SPDX-License-Identifier: MIT
// Group membership, the collector's one part that knows who belongs where:
// which group each process is in over its life (decided when first seen, by
// the grouping or process-exporter's rules; unmatched children join their
// parent's group with -children), which group an ended process only exit
// records know is credited to, and each member and group tracked from one
// collection to the next, with CPU counters that only ever grow. The rules
// it follows: membership.cpp. Not thread-safe: the collector serialises it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"
#include "serve/collect/member_reader.hpp"
#include "serve/collect/reaped.hpp"
#include "serve/error.hpp"
#include "serve/pe/grouping.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli::serve {

/// A process as membership tracks it, from its first sight to its end.
struct proc_state {
    std::string group;                          ///< "" when excluded
    task_name name;                             ///< the name the group was decided on (exec changes it)
    std::chrono::nanoseconds user{}, system{};  ///< exported so far (monotone)
    /// What of user + system was added to `group`: the group changes when
    /// the process renames itself, and only this part is the group's.
    std::chrono::nanoseconds in_group{};
    std::chrono::nanoseconds last_interval{};  ///< CPU in the last interval (top-N order)
    std::uint64_t start_ticks = 0;
    double start_seconds = 0;
    pid_t pid = 0;
    pid_t parent = 0;  ///< when first seen
    bool seen = false;
    /// The rules could not read its command line (it was ending): it is
    /// classified again at its next sight.
    bool undecided = false;
    /// With rules that need them: the facts its group was decided on,
    /// which a child that forks without exec'ing shares.
    std::shared_ptr<const process_facts> facts;
    task_name facts_name;  ///< its comm when `facts` were read
    /// As a reaping parent, with taskstats records: what they and earlier
    /// readings held beyond its children's growth (<= 0), for the next
    /// interval (reaped.hpp).
    std::chrono::nanoseconds reaped_carry{};
    pe_proc pe;  ///< with --namedprocess
};

/// A group: its counters (monotone) and its gauges (of the last collection).
struct group_state {
    std::chrono::nanoseconds user{}, system{}, estimated{};
    std::uint64_t ended = 0;
    std::uint64_t procs = 0, threads = 0;
    double oldest = 0;  ///< seconds since the epoch; 0: none
    pe_group pe;        ///< with --namedprocess
};

/// CPU of ended processes no group could be given (a rule needs their
/// command line, which their exit record does not carry), and of reaped
/// children beyond their taskstats records that could not be placed.
struct unattributed_cpu {
    std::chrono::nanoseconds user{}, system{};
    std::uint64_t procs = 0;
};

class group_membership {
public:
    /// A process's identity across collections: its pid and start tick.
    using process_key = std::pair<pid_t, std::uint64_t>;

    /// The grouping `opts` asks for. Errors: the classifier's (classifier::make).
    static outcome<group_membership> make(const serve_options& opts);

    /// One collection: `cur`, the snapshot that closes the interval `prev`
    /// opened. Each process of `cur` gets its group (new ones, and those to
    /// decide again) and adds what it used since its last sample, per mode,
    /// never less than nothing; with `members` (--namedprocess), each member
    /// is read into its group too. With `ledger` (exit records), the ended
    /// processes no collection saw are credited, and with `taskstats` (its
    /// records lack each task's last stretch) what the reaping parents'
    /// children times say they missed. Last, the processes gone since `prev`
    /// are counted as ended and forgotten.
    void update(const snapshot& prev, const snapshot& cur, const cpu_ledger* ledger, bool taskstats,
                member_reader* members);

    [[nodiscard]] const std::map<std::string, group_state>& groups() const noexcept { return groups_; }
    /// The processes of the last collection.
    [[nodiscard]] const std::map<process_key, proc_state>& processes() const noexcept { return procs_; }
    [[nodiscard]] const unattributed_cpu& unattributed() const noexcept { return unattributed_; }
    /// process-exporter's rules name the groups (classifier::uses_config).
    [[nodiscard]] bool uses_rules() const noexcept { return classify_->uses_config(); }

private:
    group_membership() = default;
    /// The groups' gauges of this collection start at zero, and no process is seen yet.
    void begin_collection();
    /// Decides the group of every process of `cur` that needs it (new ones; in
    /// process-exporter's way with its rules: a group once given is kept
    /// until the process ends, unmatched ones join their parent's group
    /// under -children) and returns each one's state.
    std::vector<proc_state*> assign_groups(const snapshot& cur);
    /// Credits the processes only exit records know (started and ended
    /// between two collections): to the group the rules give them, else
    /// (-children) their parent's; what nothing attributes goes to the
    /// unattributed counters. Returns where each went.
    std::unordered_map<const ended_process*, destination> credit_unseen(const cpu_ledger& ledger);
    /// With taskstats records, which lack each task's last stretch of run
    /// time: credits what the live parents' children times grew by beyond
    /// what the records and earlier readings hold, where the children went
    /// (reaped.hpp).
    void credit_reaped(const snapshot& prev, const snapshot& cur, const cpu_ledger& ledger,
                       const std::unordered_map<const ended_process*, destination>& unseen_went);
    /// Processes gone since the previous collection: their final values
    /// where a record gives them exactly, else their last sample stands.
    void retire_gone(const cpu_ledger* ledger);

    std::unique_ptr<classifier> classify_;
    bool recheck_ = false;   ///< -recheck: unmatched processes are tried again at every collection
    bool children_ = false;  ///< -children: unmatched processes join their parent's group
    std::map<process_key, proc_state> procs_;
    std::map<std::string, group_state> groups_;
    unattributed_cpu unattributed_;
};

}  // namespace proctimes::cli::serve
