// SPDX-License-Identifier: MIT
// The environment hook (src/backend/backend.hpp): getenv(3), or secure_getenv(3).
#include <cstdlib>

#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

const char* platform_env_lookup(const char* name, bool secure) noexcept {
    return secure ? ::secure_getenv(name) : std::getenv(name);
}

}  // namespace proctimes::inline v1::detail
