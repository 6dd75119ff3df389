// SPDX-License-Identifier: MIT
// Windows command lines and environment blocks, for CreateProcessA.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace proctimes::inline v1::win32 {

/// Splits a command line into arguments the way the Microsoft C runtime
/// builds argv (and CommandLineToArgvW agrees):
///  * arguments are separated by spaces and tabs outside quotes;
///  * the FIRST argument (the program) ends at the first space or tab outside
///    quotes; quotes in it only group and are removed, backslashes are literal;
///  * elsewhere, 2n backslashes followed by '"' give n backslashes and the
///    quote toggles quoting; 2n+1 backslashes followed by '"' give n
///    backslashes and a literal '"'; backslashes not followed by '"' are
///    literal; inside quotes, "" gives a literal '"' (quoting continues).
std::vector<std::string> split_command_line(std::string_view line);

/// The strings of an ANSI environment block ("A=1\0B=2\0\0"): the entries up
/// to the empty one. nullopt if no terminating empty entry is found within
/// `max_bytes` (a guard against unterminated blocks).
std::optional<std::vector<std::string>> parse_environment_block(const char* block, std::size_t max_bytes = 1u << 24);

}  // namespace proctimes::inline v1::win32
