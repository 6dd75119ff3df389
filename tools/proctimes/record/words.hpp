// SPDX-License-Identifier: MIT
// tools/proctimes/record/words.hpp — the words of `proctimes report
// --group-by` (proctimes/words.hpp), for the store's groupings.
#pragma once

#include <array>

#include "proctimes/words.hpp"
#include "record/store.hpp"

namespace proctimes::cli::record {

inline constexpr auto group_by_words = std::to_array<word_row<group_by>>({
    {group_by::program, "program", "one row per program (the process name, comm)"},
    {group_by::user, "user", "one row per effective user"},
    {group_by::cgroup, "cgroup", "one row per cgroup (v2 path)"},
});
constexpr const auto& word_rows(group_by) noexcept { return group_by_words; }
static_assert(words_in_order(group_by_words));

}  // namespace proctimes::cli::record
