// SPDX-License-Identifier: MIT
// The portable part of cycles.hpp: the names of the rate sources.
#include "proctimes/cycles.hpp"

namespace proctimes::inline v1 {

std::string_view to_string(tsc_rate_source s) noexcept { return word_of(s); }

}  // namespace proctimes::inline v1
