// SPDX-License-Identifier: MIT
// The environment hook (src/platform_env.hpp): getenv(3), or secure_getenv(3).
#include <cstdlib>

#include "platform_env.hpp"

namespace proctimes::detail {

std::optional<std::string> platform_getenv(const char* name, bool secure) noexcept {
    const char* v = secure ? ::secure_getenv(name) : std::getenv(name);
    if (v == nullptr) return std::nullopt;
    try {
        return std::string(v);
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace proctimes::detail
