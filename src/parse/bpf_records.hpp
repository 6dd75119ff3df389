// SPDX-License-Identifier: MIT
// Pure parsers for the records the proctimes BPF programs write
// (src/linux/bpf/records.h): the task iterator's stream and one exit record
// from the ring buffer. No I/O; unit-tested (tests/unit/bpf_records_test.cpp)
// and fuzzed (fuzz/fuzz_bpf_records.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

extern "C" {
#include "parse/bpf_record_layout.h"
}

namespace proctimes::parse {

using bpf_task_record = ::pt_task_record;
using bpf_exit_record = ::pt_exit_record;

/// Appends the records of one read of the task iterator to `out`. The stream
/// is a whole number of fixed-size records; anything else (a short tail) is
/// malformed: returns false, and `out` holds the whole records before it.
bool parse_task_records(std::span<const std::byte> bytes, std::vector<bpf_task_record>& out);

/// One ring-buffer sample: exactly one record of the current version, else nullopt.
std::optional<bpf_exit_record> parse_exit_record(std::span<const std::byte> bytes) noexcept;

/// A comm field as text: up to its first NUL, at most 16 bytes.
std::string_view comm_view(const char (&comm)[PT_COMM_LEN]) noexcept;

/// The state letter /proc shows for a task's __state and exit_state, as the
/// kernel's task_state_index() computes it: R S D T t X Z P I.
char task_state_letter(std::uint32_t state, std::uint32_t exit_state) noexcept;

/// PF_KTHREAD in task->flags.
inline constexpr std::uint32_t bpf_pf_kthread = 0x00200000;
/// PF_FORKNOEXEC in task->flags: forked, and has not exec'd since.
inline constexpr std::uint32_t bpf_pf_forknoexec = 0x00000040;

}  // namespace proctimes::parse
