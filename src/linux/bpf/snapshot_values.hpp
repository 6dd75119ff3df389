// SPDX-License-Identifier: MIT
// What a snapshot's process or thread takes of its eBPF task records besides
// its CPU (src/linux/bpf/task_record.bpf.h): its counters and its memory, as
// its /proc files state them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "parse/bpf_records.hpp"
#include "proctimes/snapshot.hpp"

namespace proctimes::inline v1::detail {

/// A task's own counters, as its task/<tid>/ stat, status and io state them;
/// empty where the programs could read none.
std::optional<task_counters> task_counters_of(const parse::bpf_task_record& r) noexcept;

/// Fills `p`'s counters and memory from its leader's record `lead` and the
/// records of all its threads (`group`: positions in `recs`), as
/// /proc/<pid>/stat, status and io add them up.
void fill_process_values(snapshot_process& p, const parse::bpf_task_record& lead,
                         std::span<const parse::bpf_task_record> recs,
                         std::span<const std::pair<std::uint64_t, std::size_t>> group) noexcept;

}  // namespace proctimes::inline v1::detail
