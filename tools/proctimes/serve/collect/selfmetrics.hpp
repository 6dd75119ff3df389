// SPDX-License-Identifier: MIT
// The exporter's own process_* metrics (the Go client's process collector,
// which process-exporter serves): CPU, memory, descriptors, start time.
#pragma once

#include <vector>

#include "serve/collect/exposition.hpp"

namespace proctimes::cli::serve {

/// Appends process_cpu_seconds_total, process_open_fds, process_max_fds,
/// process_virtual_memory_bytes, process_virtual_memory_max_bytes,
/// process_resident_memory_bytes and process_start_time_seconds of this
/// process, with the Go client's meanings (the start: the boot second plus
/// the start tick), the CPU exact to the microsecond.
/// A value that cannot be read is left out.
void self_process_families(std::vector<family>& out);

}  // namespace proctimes::cli::serve
