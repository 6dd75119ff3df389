// SPDX-License-Identifier: MIT
// proctimes/words.hpp — a closed set of values (an enum) and its words, in
// one table: the word printed for a value (text, JSON and CSV alike), the
// word a command line takes for it, an older spelling still accepted, and a
// one-line description. Printing, parsing, shell completion and the
// documentation all read the same rows, so that a value cannot have two
// names in two places.
//
// A set declares its table next to its enum, as a function found by
// argument-dependent lookup:
//
//     enum class colour : std::uint8_t { red, green };
//     inline constexpr auto colour_words = std::to_array<word_row<colour>>({
//         {colour::red, "red", "the first"},
//         {colour::green, "green", "the second", "verdant"},
//     });
//     constexpr const auto& word_rows(colour) noexcept { return colour_words; }
//     static_assert(words_in_order(colour_words));
//
// and then word_of(colour::green) is "green", and word_value<colour>("verdant")
// is colour::green.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace proctimes::inline v1 {

/// One value of a closed set and its words.
template <class E>
struct word_row {
    E value;
    /// The one word for the value: printed (text, JSON, CSV) and typed on a
    /// command line. Empty for a value that is never printed nor typed.
    std::string_view word;
    /// What the value means, in one line (help text and documentation).
    std::string_view description;
    /// An older spelling a command line still accepts for the value; empty
    /// when there is none. Never printed.
    std::string_view alias = {};
};

/// True when `rows` hold the values 0, 1, 2, ... in that order, each once:
/// the static_assert beside every table, so that a row left out or moved
/// fails the build.
template <class Rows>
[[nodiscard]] constexpr bool words_in_order(const Rows& rows) noexcept {
    std::size_t i = 0;
    for (const auto& row : rows)
        if (static_cast<std::size_t>(row.value) != i++) return false;
    return true;
}

/// The word of `v` in its set's table; `unknown` for a value not in it (an
/// out-of-range cast).
template <class E>
[[nodiscard]] constexpr std::string_view word_of(E v, std::string_view unknown = "unknown") noexcept {
    for (const auto& row : word_rows(v))
        if (row.value == v) return row.word;
    return unknown;
}

/// The value whose word or alias is `word` (exact, case-sensitive); nullopt
/// for any other text, the empty one included.
template <class E>
[[nodiscard]] constexpr std::optional<E> word_value(std::string_view word) noexcept {
    if (word.empty()) return std::nullopt;
    for (const auto& row : word_rows(E{}))
        if (row.word == word || row.alias == word) return row.value;
    return std::nullopt;
}

}  // namespace proctimes::inline v1
