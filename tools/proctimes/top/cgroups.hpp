// SPDX-License-Identifier: MIT
// tools/proctimes/top/cgroups.hpp — the cgroup of each process, for the view
// grouped by cgroup when the frame's rows do not carry it: read once per
// process (by pid and creation, so a reused pid is read again) through the
// library's process_cgroup, and only while that grouping is shown.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "top/frame.hpp"

namespace proctimes::cli::top {

class cgroup_names {
public:
    /// Sets the cgroup of every row of `frame` that has none and that is
    /// alive, or was seen alive by an earlier call.
    void fill(top_frame& frame);

private:
    struct known {
        instant creation;
        std::string path;
        std::uint64_t seen = 0;
    };
    std::unordered_map<proctimes::pid_t, known> by_pid_;
    std::uint64_t calls_ = 0;
};

}  // namespace proctimes::cli::top
