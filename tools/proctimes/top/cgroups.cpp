// SPDX-License-Identifier: MIT
// The cgroups of the frame's processes, read once each (cgroups.hpp).
#include "top/cgroups.hpp"

#include <iterator>

#include "proctimes/cgroup.hpp"

namespace proctimes::cli::top {

void cgroup_names::fill(top_frame& frame) {
    ++calls_;
    for (top_row& r : frame.rows) {
        if (!r.cgroup.empty()) continue;
        auto it = by_pid_.find(r.pid);
        if (it != by_pid_.end() && it->second.creation != r.creation) {
            by_pid_.erase(it);
            it = by_pid_.end();
        }
        if (it == by_pid_.end()) {
            if (r.ended) continue;  // gone: nothing to read
            auto path = process_cgroup(r.pid);
            // A process that could not be read is asked again next frame.
            if (!path) continue;
            it = by_pid_.emplace(r.pid, known{r.creation, std::move(*path), 0}).first;
        }
        it->second.seen = calls_;
        r.cgroup = it->second.path;
    }
    // Processes not listed for a while are forgotten.
    if (calls_ % 32 == 0) std::erase_if(by_pid_, [this](const auto& e) { return e.second.seen + 4 < calls_; });
}

}  // namespace proctimes::cli::top
