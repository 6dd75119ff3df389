// SPDX-License-Identifier: MIT
// tools/proctimes/numbers.hpp — one check for every numeric option: a strict
// parse (parse/number.hpp: no "nan", "inf" or exponent, no overflow) and a
// range named in human terms, so a bad value is a one-line usage error
// (exit 2) before any conversion can overflow. And one way to take a word
// of a closed set (proctimes/words.hpp) into its enum.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include <CLI/CLI.hpp>

#include "proctimes/words.hpp"

namespace proctimes::cli {

/// A number of seconds ("0.5", "2", ".25") from `min` to `max`; `human` names
/// the range in the error ("1 ms to 1 day").
CLI::Validator seconds_in(std::chrono::nanoseconds min, std::chrono::nanoseconds max, const std::string& human);

/// A whole number (decimal digits only) from `min` to `max`.
CLI::Validator whole_number_in(std::uint64_t min, std::uint64_t max);

/// A process id as typed after show or watch. Empty when it is not a decimal
/// number ("proctimes: 'x': not a process id") or does not fit a pid_t
/// ("proctimes: pid N: " and the library's invalid_argument message); the
/// message goes to `err` when one is given. Numbers a pid cannot be (0,
/// negative) are left to process::open, which answers invalid_argument.
std::optional<pid_t> pid_argument(const std::string& arg, std::ostream* err);

/// Option `name` of `app` into `into` (which must outlive the parse), set
/// only when the option is given: its text is checked first, then read as T.
template <class T>
CLI::Option* add_optional(CLI::App* app, const std::string& name, std::optional<T>& into, const std::string& help) {
    return app->add_option_function<T>(
        name, [&into](const T& value) { into = value; }, help);
}

/// The rows of `rows` a command line offers: those of the values in `only`
/// (every one when it is empty) that have a word.
template <class E, std::size_t N>
std::vector<word_row<E>> offered_rows(const std::array<word_row<E>, N>& rows, std::initializer_list<E> only = {}) {
    std::vector<word_row<E>> kept;
    for (const auto& row : rows)
        if (!row.word.empty() && (only.size() == 0 || std::find(only.begin(), only.end(), row.value) != only.end()))
            kept.push_back(row);
    return kept;
}

/// A check (CLI11 transform) that takes a row's word, or its alias (an older
/// spelling) which it turns into the word, and refuses any other text with
/// the list of words. Its description, the words as {a,b,c}, follows the
/// type name in the help, which is what shell completion offers.
template <class E>
CLI::Validator word_check(std::vector<word_row<E>> kept) {
    std::string set = "{";
    for (const auto& row : kept) set += (set.size() > 1 ? "," : "") + std::string(row.word);
    set += "}";
    return CLI::Validator(
        [kept = std::move(kept), set](std::string& word) -> std::string {
            for (const auto& row : kept) {
                if (row.word != word && (row.alias.empty() || row.alias != word)) continue;
                word = std::string(row.word);
                return {};
            }
            return word + " not in " + set;
        },
        set);
}

/// Option `name` of `app` takes one word of a closed set's table (`rows`,
/// proctimes/words.hpp; word_check) into `into` (an E, or a std::optional<E>
/// set only when the option is given), which must outlive the parse. `only`,
/// when not empty, keeps the rows of those values.
template <class T, class E, std::size_t N>
CLI::Option* add_choice(CLI::App* app, const std::string& name, T& into, const std::array<word_row<E>, N>& rows,
                        const std::string& help, std::initializer_list<E> only = {}) {
    auto kept = offered_rows(rows, only);
    auto check = word_check(kept);
    return app
        ->add_option_function<std::string>(
            name,
            [&into, kept = std::move(kept)](const std::string& word) {
                for (const auto& row : kept)
                    if (row.word == word) into = row.value;
            },
            help)
        ->transform(check);
}

}  // namespace proctimes::cli
