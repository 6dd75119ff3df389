// SPDX-License-Identifier: MIT
// The windows backend's environment hook (src/backend/backend.hpp): settings
// are read from the process environment. Windows has no set-user-ID
// programs: a secure lookup is the plain one.
#include <cstdlib>

#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

const char* platform_env_lookup(const char* name, bool /*secure*/) noexcept { return std::getenv(name); }

}  // namespace proctimes::inline v1::detail
