// SPDX-License-Identifier: MIT
// The exit stream's map of exit stamps read from user space (exits.bpf.c:
// one stamp per task between its exit and its free, keyed by the task's
// address).
#pragma once

#include <functional>

#include "parse/bpf_record_layout.h"

namespace proctimes::inline v1::detail {

/// Whether the stamp map `map_fd` holds a stamp for which `wanted` is true.
/// Reads the map in batches (a few system calls for the whole map); where the
/// kernel has no batch lookup, key by key (bounded: a deletion under the walk
/// restarts it at the first key). A failed read mid-map answers true.
bool any_exit_stamp(int map_fd, const std::function<bool(const pt_exit_stamp&)>& wanted);

}  // namespace proctimes::inline v1::detail
