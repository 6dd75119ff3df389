// SPDX-License-Identifier: MIT
// The stub backend's eBPF answer (proctimes/snapshot.hpp): no such source
// here. The eBPF exit stream is the Linux backend's own (src/linux/), so the
// stub has nothing else of eBPF to define.
#include "backend/backend.hpp"

namespace proctimes::inline v1 {

bpf_source_status bpf_snapshot_status() noexcept {
    return {.reason = "no eBPF on this platform", .load_time = {}, .program = {}};
}

}  // namespace proctimes::inline v1
