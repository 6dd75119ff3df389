// SPDX-License-Identifier: MIT
// The exit stream's map of exit stamps read from user space (exits.bpf.c:
// one stamp per task between its exit and its free, keyed by the task's
// address).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <utility>
#include <vector>

#include "parse/bpf_record_layout.h"

namespace proctimes::inline v1::detail {

/// A stamp of the map: its key (the task's address) and exit instant.
struct exit_stamp_key {
    std::uint64_t key = 0;
    std::uint64_t exit_boottime = 0;
};

/// Whether the stamp map `map_fd` holds a stamp for which `wanted` is true.
/// Reads the map in batches (a few system calls for the whole map); where the
/// kernel has no batch lookup, key by key (bounded: a deletion under the walk
/// restarts it at the first key). A failed read mid-map answers true. With
/// `found`, reads the whole map and appends every wanted stamp to it (then a
/// failed read mid-map answers true with `found` cleared: not all are known).
bool any_exit_stamp(int map_fd, const std::function<bool(const pt_exit_stamp&)>& wanted,
                    std::vector<exit_stamp_key>* found = nullptr);

/// Whether the stamp `s` is still in the map, unconsumed: its key holds a
/// stamp of the same exit instant (a task freed and a new one stamped at the
/// same address meanwhile is another stamp). One lookup.
bool exit_stamp_pending(int map_fd, const exit_stamp_key& s);

/// Waits until none of the stamp maps `fds` holds a stamp that `wanted`
/// picks, calling `pause` between looks; false when `deadline` came first.
/// A map for which `readable` says false is not read this time. A full read
/// of the maps finds the stamps to wait for; then only those are looked up,
/// one by one, every pause, until each is consumed (its free ran, or a sweep
/// counted it lost). Another full read then looks for any that became one
/// to wait for meanwhile (a zombie reaped): done when one finds none, as a
/// full read every pause would conclude.
bool wait_out_exit_stamps(std::initializer_list<int> fds, const std::function<bool(int)>& readable,
                          const std::function<bool(const pt_exit_stamp&)>& wanted,
                          std::chrono::steady_clock::time_point deadline, const std::function<void()>& pause);

/// How long after its exit a stamp whose task is gone counts as a loss.
inline constexpr std::uint64_t stamp_grace_ns = 5'000'000'000;

/// What a sweep of the stamp map did: the stamps it counted lost and
/// deleted, and when the first stamp it left (not a zombie's: one whose task
/// is still listed) can become one (its exit + stamp_grace_ns; UINT64_MAX
/// when none can).
struct stamp_sweep {
    std::vector<pt_exit_stamp> lost;
    std::uint64_t next_due = UINT64_MAX;
    std::uint64_t deleted = 0;  ///< stamps it deleted: the lost and the consumed left behind
};

/// The exact loss count's last part. The free program does not run for
/// every task whose exit ran: on kernel 6.18, a few ends per 10,000 in a
/// fork/exit storm never reach it, and no kernel counter shows them
/// (docs/BPF.md, "Losses"). Each such task leaves its stamp in the map. A
/// stamp stamp_grace_ns old at `now` (CLOCK_BOOTTIME, ns) whose task `listed`
/// says is gone from /proc (released: its free is due an RCU grace period
/// on) and was gone already at a sweep stamp_grace_ns before (`gone_since`:
/// when each stamp, by key and exit instant, was first seen gone; updated)
/// is such a loss: it is deleted and returned. The age alone is not enough:
/// a zombie reaped long after its exit would be counted lost between its
/// release and its free (seen under AddressSanitizer, 18 of 4,396 zombies
/// reaped at once). Should its free still come, the program finds its stamp
/// gone on delete and takes the count back (found_after_sweep). Stamps
/// consumed stamp_grace_ns ago whose delete failed (the map was busy) are
/// deleted too, as no loss.
stamp_sweep sweep_exit_stamps(int map_fd, std::uint64_t now, const std::function<bool(const pt_exit_stamp&)>& listed,
                              std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t>& gone_since);

/// Deletes the marks of lost exec records (map `map_fd`: tgid → start)
/// whose process's end record was lost too: those whose process is gone from
/// /proc at this sweep and was at the one before (`gone_before`, updated; its
/// free, which takes the mark, runs within an RCU grace period of its
/// release), so that the map keeps room for new ones.
void sweep_exec_marks(int map_fd, std::vector<std::pair<std::uint32_t, std::uint64_t>>& gone_before,
                      const std::function<bool(const pt_exit_stamp&)>& listed);

}  // namespace proctimes::inline v1::detail
