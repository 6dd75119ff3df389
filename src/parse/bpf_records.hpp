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
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include "parse/bpf_record_layout.h"
}

namespace proctimes::inline v1::parse {

using bpf_task_record = ::pt_task_record;
using bpf_exit_record = ::pt_exit_record;

/// Appends the records of one read of the task iterator to `out`. The stream
/// is a whole number of fixed-size records; anything else (a short tail) is
/// malformed: returns false, and `out` holds the whole records before it.
bool parse_task_records(std::span<const std::byte> bytes, std::vector<bpf_task_record>& out);

/// One ring-buffer sample: exactly one record of the current version, else nullopt.
std::optional<bpf_exit_record> parse_exit_record(std::span<const std::byte> bytes) noexcept;

/// One exec record of the exit stream's ring (a sample that is not
/// sizeof(bpf_exit_record) bytes), checked: the magic, at least the minimum
/// size, argv_len bytes present and within argv_total and the copy limit.
struct bpf_exec_record {
    std::uint64_t start_boottime = 0;  ///< the process's start, ns since boot
    std::uint32_t tgid = 0;
    std::uint32_t argv_total = 0;  ///< bytes of the whole argument area
    std::string_view argv;         ///< the argument area copied (points into the input)
    /// The whole argument area was copied (argv_len == argv_total): a
    /// command line, rather than an unknown one.
    [[nodiscard]] bool whole() const noexcept { return argv.size() == argv_total; }
};
std::optional<bpf_exec_record> parse_exec_record(std::span<const std::byte> bytes) noexcept;

/// One event of run_tree's eBPF source (tree.bpf.c), checked: a known kind,
/// the size that kind has (an exec event is a pt_tree_exec_event), an exec's
/// path NUL-terminated and its argv_len within the argument buffer and
/// within argv_total.
struct bpf_tree_event {
    ::pt_tree_event head{};
    std::string_view path;  ///< exec: the interpreter or the file exec'd (points into the input)
    std::string_view argv;  ///< exec: the argument area copied, argv_len bytes (points into the input)
};
std::optional<bpf_tree_event> parse_tree_event(std::span<const std::byte> bytes) noexcept;

/// An argument area ("a\0b\0c\0") as arguments, at most `max_bytes` of it
/// counting each NUL; `truncated` set when bytes were left out (here, or
/// already when the area was copied: `complete` false). An argument cut in
/// the middle is kept, cut.
std::vector<std::string> split_argv(std::string_view area, std::size_t max_bytes, bool complete, bool& truncated);

/// A comm field as text: up to its first NUL, at most 16 bytes.
std::string_view comm_view(const char (&comm)[PT_COMM_LEN]) noexcept;

/// The state letter /proc shows for a task's __state and exit_state, as the
/// kernel's task_state_index() computes it: R S D T t X Z P I.
char task_state_letter(std::uint32_t state, std::uint32_t exit_state) noexcept;

/// PF_KTHREAD in task->flags.
inline constexpr std::uint32_t bpf_pf_kthread = 0x00200000;
/// PF_FORKNOEXEC in task->flags: forked, and has not exec'd since.
inline constexpr std::uint32_t bpf_pf_forknoexec = 0x00000040;

}  // namespace proctimes::inline v1::parse
