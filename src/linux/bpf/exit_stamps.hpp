// SPDX-License-Identifier: MIT
// The exit stream's map of exit stamps read from user space (exits.bpf.c:
// one stamp per task between its exit and its free, keyed by the task's
// address).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "parse/bpf_record_layout.h"

namespace proctimes::inline v1::detail {

/// A stamp of the map: its key (the task's address) and exit instant.
struct exit_stamp_key {
    std::uint64_t key = 0;
    std::uint64_t exit_boottime = 0;
};

/// Whether the stamp map `map_fd` holds a stamp for which `wanted` is true.
/// Reads the map in batches (a few system calls for the whole map); where the
/// kernel has no batch lookup, key by key (bounded: a deletion under the walk
/// restarts it at the first key). A failed read mid-map answers true. With
/// `found`, reads the whole map and appends every wanted stamp to it (then a
/// failed read mid-map answers true with `found` cleared: not all are known).
bool any_exit_stamp(int map_fd, const std::function<bool(const pt_exit_stamp&)>& wanted,
                    std::vector<exit_stamp_key>* found = nullptr);

/// Whether the stamp `s` is still in the map, unconsumed: its key holds a
/// stamp of the same exit instant (a task freed and a new one stamped at the
/// same address meanwhile is another stamp). One lookup.
bool exit_stamp_pending(int map_fd, const exit_stamp_key& s);

}  // namespace proctimes::inline v1::detail
