// SPDX-License-Identifier: MIT
// The portable part of tree.hpp: the names of the sources.
#include "proctimes/tree.hpp"

namespace proctimes::inline v1 {

std::string_view to_string(tree_source s) noexcept { return word_of(s); }

}  // namespace proctimes::inline v1
