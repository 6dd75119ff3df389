// SPDX-License-Identifier: MIT
// An eBPF exit record (parse/bpf_records.hpp) as the end it tells of.
#pragma once

#include <cstdint>

#include "linux/bpf/exit_ring_reader.hpp"
#include "parse/bpf_records.hpp"
#include "proctimes/boot.hpp"

namespace proctimes::inline v1::detail {

/// The end of the task `r` tells of: its instants on `anchor`'s clock, its
/// exact CPU split by the record's tick-sampled utime:stime (`tick`: a clock
/// tick in ns), its wait(2) status.
bpf_task_end to_task_end(const parse::bpf_exit_record& r, const boot_anchor& anchor, std::int64_t tick);

}  // namespace proctimes::inline v1::detail
