// SPDX-License-Identifier: MIT
// tools/proctimes/watch/tracker.hpp — what `watch` over a scope knows about
// the processes in it: the ones seen alive in snapshots, the ends the exit
// stream reported, and the totals (docs/CLI.md, "proctimes watch").
//
// Fed by one thread: snapshots (in order) and exit records (as read). Each
// process end it learns becomes one task_record, handed back by the feeding
// call; finish() gives the totals.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "output/output.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"
#include "watch/scope.hpp"

namespace proctimes::cli {

class scope_tracker {
public:
    /// `with_stream`: ends come from an exit stream (records), and snapshots
    /// only say who is in scope and what the living used; otherwise a process
    /// seen alive that is gone from a later snapshot (or a zombie in it) is an end.
    scope_tracker(const watch_scope& scope, std::string proc_root, bool with_stream);

    /// The first snapshot, taken when the watch begins: its processes' CPU is
    /// the baseline of the totals. Call once, before any other.
    void begin(const snapshot& s, std::chrono::nanoseconds stream_opened_since_boot);
    /// A later snapshot. Appends the ends it shows to `ended`.
    void take(const snapshot& s, std::vector<task_record>& ended);
    /// Exit records, as read from the stream; `complete` is false when the
    /// stream said records were lost before these.
    void records(const std::vector<ended_task>& exits, bool complete, std::vector<task_record>& ended);
    /// Reports the processes gone from a snapshot whose record has not come:
    /// with their last sample (exited_partial). Those gone for at least
    /// `grace` before `before` (since boot); all of them without it (at the end).
    void flush_gone(std::vector<task_record>& ended, std::optional<std::chrono::nanoseconds> before = std::nullopt);
    /// How long a process gone from a snapshot waits for its record.
    static constexpr std::chrono::milliseconds grace{250};
    [[nodiscard]] bool has_gone() const noexcept { return !gone_.empty(); }
    /// The totals, from the last snapshot (given to take()) and the cgroup's counter.
    [[nodiscard]] scope_totals totals(std::chrono::nanoseconds watched,
                                      std::optional<std::chrono::nanoseconds> cgroup_delta) const;

private:
    struct seen {
        std::uint64_t start_ticks = 0;
        std::string name;
        user_id uid = 0;  // real
        pid_t ppid = 0;
        task_times last{};  // the last sample
        // Its CPU when the watch began (0 if created after).
        std::chrono::nanoseconds base_kernel{}, base_user{};
        bool reported = false;  // its end was written (a zombie): it is forgotten when it is gone
    };
    // Per thread group, what the stream said about its threads that ended.
    struct threads_ended {
        std::chrono::nanoseconds kernel{}, user{};
        std::string leader_name;
        std::chrono::nanoseconds leader_start{};  // since boot, from the leader's record
    };
    // Known facts about a process identity, cached so that /proc/<pid>/status
    // and .../cgroup are read once per process.
    struct facts {
        std::uint64_t start_ticks = 0;
        std::optional<user_id> real_uid;
        std::optional<bool> in_cgroup;
    };

    bool in_scope(const snapshot_process& p);
    user_id real_uid(const snapshot_process& p);
    seen make_seen(const snapshot_process& p, bool at_begin);
    struct walk_time {
        instant taken{};
        std::chrono::nanoseconds since_boot{};
    };
    void lose(pid_t pid, seen&& w, const snapshot& now, std::vector<task_record>& ended);
    task_record record_of(pid_t pid, const std::string& name, user_id uid, pid_t ppid, const task_times& t,
                          end_seen_by end_source);
    void vanished(pid_t pid, const seen& s, const walk_time& now, std::vector<task_record>& ended);
    void ended_record(const ended_task& e, std::vector<task_record>& ended);
    void emit(const ended_task& e, const threads_ended& te, std::optional<std::chrono::nanoseconds> start,
              const seen* w, std::vector<task_record>& ended);
    void count(const task_record& r, std::chrono::nanoseconds base_kernel, std::chrono::nanoseconds base_user);

    watch_scope scope_;
    std::string proc_root_;
    bool with_stream_;
    instant anchor_{};  // boot on the snapshots' scale
    std::chrono::nanoseconds began_since_boot_{}, stream_opened_{};
    std::chrono::nanoseconds last_lost_{};  // since boot: records lost before this
    bool began_ = false;
    std::unordered_map<pid_t, seen> alive_;
    std::unordered_map<pid_t, threads_ended> threads_;
    // Seen alive, gone from a later snapshot, their record not read yet (stream only).
    struct gone_entry {
        seen w;
        walk_time noticed;
    };
    std::unordered_map<pid_t, gone_entry> gone_;
    std::unordered_map<pid_t, facts> facts_;
    // Processes whose end a record reported since the last snapshot was
    // taken, by pid: their start (since boot). That snapshot may still list
    // them alive: they must not be taken for new processes.
    struct ended_mark {
        std::chrono::nanoseconds start_since_boot{};
        // --cgroup, a process never seen alive: its record, until that snapshot says whether it was in scope.
        std::optional<ended_task> pending;
        threads_ended threads;
        std::optional<std::chrono::nanoseconds> start;
    };
    std::unordered_map<pid_t, ended_mark> ended_since_;
    user_names users_;
    scope_totals totals_;
};

}  // namespace proctimes::cli
