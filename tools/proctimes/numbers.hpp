// SPDX-License-Identifier: MIT
// tools/proctimes/numbers.hpp — one check for every numeric option: a strict
// parse (parse/number.hpp: no "nan", "inf" or exponent, no overflow) and a
// range named in human terms, so a bad value is a one-line usage error
// (exit 2) before any conversion can overflow. And one way to take a word
// from a fixed set into an enum.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include <CLI/CLI.hpp>

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

/// Option `name` of `app` takes one word of `choices` into `into` (which
/// must outlive the parse): any other word is a usage error that lists them.
template <class E>
CLI::Option* add_choice(CLI::App* app, const std::string& name, E& into,
                        const std::vector<std::pair<std::string, E>>& choices, const std::string& help) {
    std::vector<std::string> words;
    words.reserve(choices.size());
    for (const auto& [word, value] : choices) words.push_back(word);
    return app
        ->add_option_function<std::string>(
            name,
            [&into, choices](const std::string& word) {
                for (const auto& [w, value] : choices)
                    if (w == word) into = value;
            },
            help)
        ->check(CLI::IsMember(words));
}

}  // namespace proctimes::cli
