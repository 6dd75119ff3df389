// SPDX-License-Identifier: MIT
// The exporter's state: one snapshot per scrape, the exit records in between,
// per-process and per-group counters that only ever grow, and the CPU ledger.
// Thread-safe: scrapes are serialised by one mutex. Its parts: exit_drain
// (the exit records between collections, drained by a thread of its own),
// member_reader (--namedprocess: each member's resources into its group),
// the group membership (membership.cpp) and the exposition of the families
// (metrics.cpp, namedprocess.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "proctimes/ledger.hpp"
#include "proctimes/resources.hpp"
#include "proctimes/snapshot.hpp"
#include "serve/collect/exit_drain.hpp"
#include "serve/collect/exposition.hpp"
#include "serve/collect/member_reader.hpp"
#include "serve/collect/reaped.hpp"
#include "serve/error.hpp"
#include "serve/pe/grouping.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli::serve {

class collector {
public:
    /// Opens the snapshotter (and, if permitted and asked for, the exit
    /// stream). Errors: the classifier's (classifier::make), and
    /// error_kind::runtime when the process table cannot be read.
    static outcome<std::unique_ptr<collector>> open(const serve_options& opts);
    /// open(), with the error's message in `error`.
    static std::unique_ptr<collector> make(const serve_options& opts, std::string& error);
    ~collector();

    /// Takes a snapshot, updates every counter, and renders the result.
    /// Two scrapes closer than 100 ms share one collection.
    std::string scrape(format f);

    /// The exit stream's source ("bpf" or "taskstats") when ends are read, else why not.
    [[nodiscard]] std::string exit_source() const;

private:
    collector() = default;
    void collect();
    std::vector<family> families() const;

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
    struct group_state {
        std::chrono::nanoseconds user{}, system{}, estimated{};
        std::uint64_t ended = 0;
        std::uint64_t procs = 0, threads = 0;
        double oldest = 0;  ///< seconds since the epoch; 0: none
        pe_group pe;        ///< with --namedprocess
    };

    /// Decides the group of every process of cur_ that needs it (new ones; in
    /// process-exporter's way with its rules: a group once given is kept
    /// until the process ends, unmatched ones join their parent's group
    /// under -children) and returns each one's state (membership.cpp).
    std::vector<proc_state*> assign_groups();
    /// Credits the processes only exit records know (started and ended
    /// between two collections): to the group the rules give them, else
    /// (-children) their parent's; what nothing attributes goes to the
    /// unattributed counters (membership.cpp). Returns where each went.
    std::unordered_map<const ended_process*, destination> credit_unseen();
    /// With taskstats records, which lack each task's last stretch of run
    /// time: credits what the live parents' children times grew by beyond
    /// what the records and earlier readings hold, where the children went
    /// (reaped.hpp; membership.cpp).
    void credit_reaped(const std::unordered_map<const ended_process*, destination>& unseen_went);
    void namedprocess_families(std::vector<family>& out) const;

    serve_options opts_;
    std::unique_ptr<classifier> classify_;
    snapshotter snap_;
    snapshot prev_, cur_;
    bool have_prev_ = false;
    std::optional<system_cpu_times> stat_prev_;
    std::map<std::pair<pid_t, std::uint64_t>, proc_state> procs_;
    std::map<std::string, group_state> groups_;
    /// CPU of ended processes no group could be given (a rule needs their
    /// command line, which their exit record does not carry).
    std::chrono::nanoseconds unattributed_user_{}, unattributed_system_{};
    std::uint64_t unattributed_procs_ = 0;
    std::optional<cpu_ledger> ledger_;

    /// Exit records, drained by its thread between collections.
    std::unique_ptr<exit_drain> exits_;

    // Scrape state.
    std::mutex mu_;
    std::chrono::steady_clock::time_point last_collect_{};
    std::uint64_t collections_ = 0, failures_ = 0;
    double last_duration_ = 0;
    std::size_t tasks_read_ = 0, threads_read_ = 0;
    /// --namedprocess: reads each member and adds to its group.
    member_reader members_;
    std::string cached_[2];
};

}  // namespace proctimes::cli::serve
