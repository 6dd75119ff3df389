// SPDX-License-Identifier: MIT
// Pure parsers of the per-process /proc files behind read_process_resources
// (proctimes/resources.hpp) that procfs.hpp does not cover: io, limits,
// smaps_rollup and wchan. stat and status are procfs.hpp's. No I/O; nullopt
// when the text does not have the shape proc(5) documents. Unit-tested on
// fixtures and fuzzed (fuzz/fuzz_resources.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace proctimes::inline v1::parse {

/// /proc/<pid>/io (and task/<tid>/io).
struct io_record {
    std::uint64_t read_bytes = 0;   ///< "read_bytes:" fetched from storage
    std::uint64_t write_bytes = 0;  ///< "write_bytes:" sent to storage
    /// "rchar:", "wchar:", "syscr:", "syscw:"; empty when absent.
    std::optional<std::uint64_t> read_chars, write_chars, read_syscalls, write_syscalls;
};
/// nullopt when read_bytes or write_bytes is missing, or any of the six lines
/// is not a whole 64-bit number.
std::optional<io_record> parse_io(std::string_view text) noexcept;

/// The soft limit of "Max open files" in /proc/<pid>/limits; UINT64_MAX for
/// "unlimited"; nullopt when the line is missing or malformed.
std::optional<std::uint64_t> parse_open_files_limit(std::string_view text) noexcept;

/// Pss and SwapPss of /proc/<pid>/smaps_rollup, in bytes.
struct smaps_record {
    std::uint64_t pss_bytes = 0;
    std::uint64_t swap_pss_bytes = 0;  ///< 0 when absent (kernels without swap accounting)
};
/// nullopt when the Pss line is missing, or Pss or SwapPss is not "N kB"
/// that fits 64 bits in bytes.
std::optional<smaps_record> parse_smaps_rollup(std::string_view text) noexcept;

/// The kernel function a task waits in, from its wchan file: empty for "0"
/// (running) and for an empty file (the kernel hides it); trailing newlines
/// and spaces are dropped. A view of `text`.
std::string_view parse_wchan(std::string_view text) noexcept;

/// One line of /proc/<pid>/cgroup, "ID:CONTROLLERS:PATH"; views the input.
struct cgroup_line {
    std::string_view hierarchy, controllers, path;
};
/// Takes the next line off the front of `text`; nullopt at the end. A line
/// without two colons is skipped (a PATH may hold colons: it is everything
/// after the second).
std::optional<cgroup_line> next_cgroup_line(std::string_view& text) noexcept;

}  // namespace proctimes::inline v1::parse
