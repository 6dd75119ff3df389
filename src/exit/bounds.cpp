// SPDX-License-Identifier: MIT
#include "exit/bounds.hpp"

namespace proctimes::inline v1 {

std::string_view to_string(exit_source s) noexcept { return word_of(s); }

}  // namespace proctimes::inline v1
