// SPDX-License-Identifier: MIT
// Building a Windows command line from an argument vector, so that
// CommandLineToArgvW (and the C runtime's parser, which follows the same
// documented rules) gives the vector back. Pure; tested under Wine against
// CommandLineToArgvW itself (tests/windows/windows_spawn_test.cpp).
#pragma once

#include <string>
#include <vector>

#include "proctimes/result.hpp"

namespace proctimes::inline v1::detail::win {

/// The command line for `argv` (UTF-16). argv[0] follows the program-name
/// rule (quotes group, backslashes are literal): one containing a '"' cannot
/// be written, invalid_argument. An argument containing NUL: invalid_argument.
result<std::wstring> command_line(const std::vector<std::wstring>& argv);

/// UTF-8 → UTF-16; invalid_argument for invalid UTF-8 or an embedded NUL.
result<std::wstring> wide(const std::string& s);

}  // namespace proctimes::inline v1::detail::win
