// SPDX-License-Identifier: MIT
// tools/proctimes/top/live_feed.hpp — the frame_feed of the live machine: the
// snapshots, exit stream and ledger of `ps --interval` (ps/internal.hpp), the
// machine's load, memory and per-CPU counters (proctimes/machine.hpp), and
// each process's memory, I/O, context switches and command line
// (proctimes/resources.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proctimes/result.hpp"
#include "proctimes/times.hpp"
#include "top/frame.hpp"

namespace proctimes::cli::top {

struct live_options {
    bool threads = false;                ///< -H: the rows carry their threads
    std::vector<proctimes::pid_t> pids;  ///< -p: only these processes (empty: all)
    std::optional<user_id> only_uid;     ///< -u: only this effective user's processes
    std::string proc_root;               ///< where procfs is mounted ("": the library's default)
};

/// Opens the snapshotter (its eBPF programs are loaded here, once) and the
/// exit stream where permitted. The first next() returns at once a frame
/// without an interval (no CPU used, no ledger); each later one waits until
/// `interval` after the previous frame was taken.
result<std::unique_ptr<frame_feed>> open_live_feed(const live_options& opts);

}  // namespace proctimes::cli::top
