// SPDX-License-Identifier: MIT
// The exporter's collector, which only orchestrates. One scrape is:
//  1. read the members: a snapshot of the processes, the exit records up to
//     it and the CPU ledger of the interval it closes (read_interval);
//  2. update the membership with them (group_membership, membership.hpp:
//     who is in which group, and the counters of members and groups across
//     collections; with --namedprocess its member_reader reads each
//     member's resources into its group);
//  3. the metric families (metrics.cpp, namedprocess.cpp);
//  4. their exposition in the format asked for, which scrape_cache keeps
//     for the scrapes within 100 ms, with the account of the collections.
// exit_drain holds the exit records between collections, drained by a
// thread of its own. Thread-safe: scrapes are serialised by one mutex.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proctimes/ledger.hpp"
#include "proctimes/resources.hpp"
#include "proctimes/snapshot.hpp"
#include "serve/collect/exit_drain.hpp"
#include "serve/collect/exposition.hpp"
#include "serve/collect/member_reader.hpp"
#include "serve/collect/membership.hpp"
#include "serve/collect/scrape_cache.hpp"
#include "serve/error.hpp"
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
    explicit collector(group_membership membership) : membership_(std::move(membership)) {}
    /// One collection: read_interval(), then the membership's update.
    void collect();
    /// Takes the snapshot that closes the interval the previous one opened
    /// (into cur_), the exit records up to it, and the interval's ledger
    /// when both ends and /proc/stat's readings are there (into ledger_;
    /// `stat`, the new reading). Errors: error_kind::runtime when the
    /// snapshot cannot be taken (no records or ledger are then taken).
    status read_interval(std::optional<system_cpu_times>& stat);
    /// The metric families of the last collection (metrics.cpp).
    [[nodiscard]] std::vector<family> families() const;
    /// process-exporter's families, with --namedprocess (namedprocess.cpp).
    void namedprocess_families(std::vector<family>& out) const;

    serve_options opts_;
    snapshotter snap_;
    /// The last collection's snapshot (after a collection) and the next one's.
    snapshot prev_, cur_;
    bool have_prev_ = false;
    std::optional<system_cpu_times> stat_prev_;
    /// The CPU ledger of the last interval (with both ends and /proc/stat).
    std::optional<cpu_ledger> ledger_;
    /// Exit records, drained by its thread between collections.
    std::unique_ptr<exit_drain> exits_;
    /// Ends of processes the last snapshot still listed (each with its
    /// leader's record), held for the next interval: a process that ended
    /// after the walk read it, or a zombie (taskstats sends a task's record
    /// as it exits, before its parent reaps it). Counted in the interval
    /// whose first snapshot lists it, not also as an end nobody saw.
    std::vector<ended_task> held_;
    /// --namedprocess: reads each member and adds to its group.
    member_reader members_;
    group_membership membership_;

    std::mutex mu_;  ///< serialises scrapes
    scrape_cache cache_;
};

}  // namespace proctimes::cli::serve
