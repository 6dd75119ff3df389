// SPDX-License-Identifier: MIT
// Names of the snapshot sources (always built, with or without PROCTIMES_BPF).
#include "proctimes/snapshot.hpp"

namespace proctimes::inline v1 {

std::string_view to_string(snapshot_source s) noexcept { return word_of(s); }

}  // namespace proctimes::inline v1
