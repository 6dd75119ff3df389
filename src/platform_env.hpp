// SPDX-License-Identifier: MIT
// The platform seam's environment hook: how a backend reads one environment
// variable. Portable code reads settings through src/settings.hpp, which
// calls this; nothing else reads the environment.
#pragma once

#include <optional>
#include <string>

namespace proctimes::inline v1::detail {

/// The backend's lookup of the environment variable `name`: its value, or
/// null when it is not set. With `secure`, a backend ignores the environment
/// of a program that gained privileges at its start (Linux: secure_getenv(3),
/// which answers nothing in a setuid, setgid or file-capability program);
/// settings that name files use it.
const char* platform_env_lookup(const char* name, bool secure) noexcept;

/// That value as a string, or nullopt when it is not set (or cannot be copied).
inline std::optional<std::string> platform_getenv(const char* name, bool secure) noexcept {
    const char* v = platform_env_lookup(name, secure);
    if (v == nullptr) return std::nullopt;
    try {
        return std::string(v);
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace proctimes::inline v1::detail
