// SPDX-License-Identifier: MIT
// Pure parser of the "flags" line of /proc/cpuinfo (x86: one line per CPU,
// "flags\t\t: fpu vme de ... constant_tsc ... nonstop_tsc ..."). No I/O;
// unit-tested (tests/unit/cpuinfo_test.cpp) and fuzzed (fuzz/fuzz_cpuinfo.cpp).
#pragma once

#include <optional>
#include <string_view>

namespace proctimes::inline v1::parse {

/// The first line of `text` that begins with "flags" after a newline (so
/// never the file's first line, which is "processor" on every architecture
/// that has a flags line), without its newline; it views `text`. nullopt
/// when there is none (e.g. arm64, whose cpuinfo says "Features").
std::optional<std::string_view> cpuinfo_flags_line(std::string_view text) noexcept;

/// Whether `word` is a whole word of a flags line: preceded by a space and
/// followed by a space or the end of the line. The line's own "flags" key
/// never matches (it has no space before it). An empty word never matches.
bool cpuinfo_has_flag(std::string_view line, std::string_view word) noexcept;

}  // namespace proctimes::inline v1::parse
