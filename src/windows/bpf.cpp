// SPDX-License-Identifier: MIT
// The windows backend's eBPF answer (proctimes/snapshot.hpp): eBPF is
// Linux's; there is no such snapshot source here.
#include "proctimes/snapshot.hpp"

namespace proctimes::inline v1 {

bpf_source_status bpf_snapshot_status() noexcept {
    return {.reason = "no eBPF on Windows", .load_time = {}, .program = {}};
}

}  // namespace proctimes::inline v1
