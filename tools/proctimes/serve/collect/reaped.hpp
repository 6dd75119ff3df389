// SPDX-License-Identifier: MIT
// What taskstats exit records miss of the processes that ended, recovered from
// the kernel's account of the parents that reaped them (docs/SERVE.md, "Ended
// processes with taskstats").
//
// A taskstats record is filled in do_exit(), from the scheduler's run time as
// it was at the task's last accounting update (its last tick, switch or
// preemption check): the stretch since then, up to one tick (4 ms at HZ=250),
// and the teardown after the record are not in it. For a process that lives a
// few ms, that is most of its CPU. When its parent reaps it, the kernel adds
// its final run time (every thread, and the children it reaped in turn) to
// the parent's children times (stat fields 16-17). Over an interval, a live
// parent's children times grow by exactly what it reaped; less what the
// records and earlier readings already hold, the rest is what the records
// missed. Pure: no I/O.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"

namespace proctimes::cli::serve {

/// Where an ended process's CPU went: a group, "" (none: excluded or
/// unmatched), or nullopt (no group could be given: unattributed).
using destination = std::optional<std::string>;

/// A part of the reaped rest, and where it goes.
struct reaped_share {
    destination to;
    std::chrono::nanoseconds kernel{}, user{};
};

struct reaped_inputs {
    const snapshot& before;
    const snapshot& after;
    /// The ledger's ended processes of the interval (before, after].
    std::span<const ended_process> ended;
    /// Where a process of `before` that is gone from `after` went (its group).
    std::function<destination(const snapshot_process&)> gone_to;
    /// Where an ended process `before` did not list went.
    std::function<destination(const ended_process&)> unseen_to;
    /// The carry of a live parent of `after` (what the records and readings
    /// held beyond its children's growth, <= 0, kept for the next interval);
    /// null: the parent is not tracked.
    std::function<std::chrono::nanoseconds*(const snapshot_process&)> carry_of;
};

/// For each parent alive in `after` whose children's times can be read in
/// both snapshots (or that began after `before`): its children's growth,
/// less the ended processes it reaped (their CPU in the interval, by the
/// ledger, and what `before` read of them, their own reaped children
/// included), plus its carry. A positive rest is split among the ended
/// processes charged to it, in equal shares (each record lacks at most about
/// a tick), and goes where each of them went; with none, it is unattributed.
/// A negative one is carried. The kernel:user split is the growth's.
std::vector<reaped_share> reaped_rest(const reaped_inputs& in);

}  // namespace proctimes::cli::serve
