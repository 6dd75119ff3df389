// SPDX-License-Identifier: MIT
// The platform seam's environment hook: how a backend reads one environment
// variable. Portable code reads settings through src/settings.hpp, which
// calls this; nothing else reads the environment.
#pragma once

#include <optional>
#include <string>

namespace proctimes::detail {

/// The value of the environment variable `name`, or nullopt when it is not
/// set (or the value cannot be copied). With `secure`, a backend ignores the
/// environment of a program that gained privileges at its start (Linux:
/// secure_getenv(3), which answers nothing in a setuid, setgid or
/// file-capability program); settings that name files use it.
std::optional<std::string> platform_getenv(const char* name, bool secure) noexcept;

}  // namespace proctimes::detail
