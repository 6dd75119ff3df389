// SPDX-License-Identifier: MIT
// The stub's environment hook (src/platform_env.hpp): the C library's
// getenv(3) for both kinds. Where the stub is built there is no notion of a
// privileged start that the standard library could check.
#include <cstdlib>

#include "platform_env.hpp"

namespace proctimes::detail {

std::optional<std::string> platform_getenv(const char* name, bool /*secure*/) noexcept {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    try {
        return std::string(v);
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace proctimes::detail
