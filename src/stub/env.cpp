// SPDX-License-Identifier: MIT
// The stub's environment hook (src/backend/backend.hpp): the C library's
// getenv(3) for both kinds. Where the stub is built there is no notion of a
// privileged start that the standard library could check.
#include <cstdlib>

#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

const char* platform_env_lookup(const char* name, bool /*secure*/) noexcept { return std::getenv(name); }

}  // namespace proctimes::inline v1::detail
