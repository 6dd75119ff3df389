// SPDX-License-Identifier: MIT
// tools/proctimes/record/store_impl.hpp — the inside of record::store,
// shared by the files that implement it (open, write, read, retain).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "record/sqlite.hpp"
#include "record/store.hpp"

namespace proctimes::cli::record {

/// What identifies a process in the store: one `process` row each.
struct identity {
    std::int64_t pid = 0, creation_ns = 0, ppid = 0;
    std::string name, command;
    std::optional<std::int64_t> uid;
    std::string user, cgroup;
    friend bool operator==(const identity&, const identity&) = default;
};

struct store::impl {
    std::string path;
    bool writer = false;
    sql::connection db;
    int lock_fd = -1;              ///< the writer's lock on PATH-lock; -1 for a reader
    int version = schema_version;  ///< the store's schema version (PRAGMA user_version)

    // The writer's statements, prepared once.
    sql::statement insert_interval, insert_sample, insert_process, find_process;
    // The readers' (and the writer's) statements.
    sql::statement select_samples;
    /// The writer's identities by (pid, creation_ns): ids known to be in
    /// the store. Cleared after a failed write (its rows were rolled back)
    /// and after retain() deleted identities.
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<identity, std::int64_t>>> identities;
    std::size_t identities_cached = 0;

    impl() = default;
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;
    ~impl();

    /// An error for SQLite's `rc`: its kind from the code, the message
    /// "<what>: <SQLite's message> (store <path>)".
    [[nodiscard]] record::error fail(int rc, const std::string& what) const;
    [[nodiscard]] record::error fail(error_kind k, const std::string& what) const;

    /// Prepares `s` once. SQLITE_OK or the error.
    int prepare(sql::statement& s, const char* text);

    /// Inside the caller's write transaction: deletes the intervals whose
    /// ids `list` gives (an SQL list or subquery, "(1,2)"), their samples,
    /// and the identities no other interval refers to; forgets the cached
    /// identities when some went. Returns how many identities went.
    outcome<std::int64_t> delete_intervals(const std::string& list);

    /// Frames of the intervals whose taken_ns is in [from, to], ascending or
    /// descending, at most `limit` (0: all).
    outcome<std::vector<top::top_frame>> frames(std::int64_t from, std::int64_t to, bool descending, std::size_t limit);
};

/// Nanoseconds since the epoch of an instant, and back.
inline std::int64_t ns_of(instant t) { return t.time_since_epoch().count(); }
inline instant instant_of(std::int64_t ns) { return instant(std::chrono::nanoseconds(ns)); }

}  // namespace proctimes::cli::record
