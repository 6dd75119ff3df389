// SPDX-License-Identifier: MIT
// The library's environment settings (the PROCTIMES_* variables; the table is
// in docs/API.md, "Environment variables"): one reader per kind of value, so
// that every switch accepts the same words and refuses the same mistakes.
//
// - An on/off flag is one of 1, on, true, yes or 0, off, false, no (ASCII,
//   any case). Any other value is invalid: the setting then keeps its default
//   (exactly as when the variable is unset), and the refusal is reported, by
//   setting_problems() (proctimes/settings.hpp) and by the status function of
//   that setting where it has one.
// - A number is decimal digits only (no sign, spaces, exponent, "nan"), and
//   must fit in 64 bits; anything else is invalid, and the reader says so.
// - A path is any non-empty value, read through the backend's secure lookup.
// An empty value counts as unset for every kind (`VAR= command` clears it).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proctimes/result.hpp"

namespace proctimes::inline v1::detail {

/// A flag's value as read.
enum class flag_value : std::uint8_t { unset, off, on, invalid };

/// Parses a flag's text (pure): unset for "", invalid for anything that is
/// not one of the eight words.
flag_value parse_flag(std::string_view text) noexcept;

/// Reads the flag `name` now.
flag_value env_flag(const char* name) noexcept;

/// Parses a number's text (pure): the value, or nullopt when it is not
/// decimal digits that fit in 64 bits. "" gives nullopt too (unset, for the
/// reader).
std::optional<std::uint64_t> parse_setting_number(std::string_view text) noexcept;

/// Reads the number `name` now: nullopt when unset (or empty), the value, or
/// errc::invalid_argument when the text is not a number.
result<std::optional<std::uint64_t>> env_number(const char* name) noexcept;

/// Reads the path `name` now through the backend's secure lookup
/// (platform_getenv(name, true)): nullopt when unset or empty.
std::optional<std::string> env_path(const char* name) noexcept;

/// An on/off setting of the library: its setter, when called, decides;
/// otherwise its variable, read once (valid values only); otherwise its
/// default, which a caller may change (set_default). Thread-safe; constinit.
class switch_setting {
public:
    constexpr switch_setting(const char* variable, bool fallback) noexcept : variable_(variable), default_(fallback) {}

    void set(bool on) noexcept { set_.store(on ? 1 : 0, std::memory_order_relaxed); }
    void set_default(bool on) noexcept { default_.store(on, std::memory_order_relaxed); }
    bool on() const noexcept;
    /// True when the value came from neither the setter nor the variable,
    /// because the variable's value was invalid: the default decided.
    bool invalid_value_ignored() const noexcept;
    const char* variable() const noexcept { return variable_; }

private:
    flag_value env() const noexcept;

    const char* variable_;
    std::atomic<int> set_{-1};          // -1: the setter was not called
    mutable std::atomic<int> env_{-1};  // a flag_value once read, -1 before
    std::atomic<bool> default_;
};

}  // namespace proctimes::inline v1::detail
