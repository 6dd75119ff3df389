// SPDX-License-Identifier: MIT
// Names of the snapshot sources (always built, with or without PROCTIMES_BPF).
#include "proctimes/snapshot.hpp"

namespace proctimes::inline v1 {

std::string_view to_string(snapshot_source s) noexcept {
    switch (s) {
        case snapshot_source::automatic:
            return "automatic";
        case snapshot_source::procfs:
            return "procfs";
        case snapshot_source::bpf:
            return "bpf";
        case snapshot_source::windows:
            return "windows";
    }
    return "unknown";
}

}  // namespace proctimes::inline v1
