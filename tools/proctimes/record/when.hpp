// SPDX-License-Identifier: MIT
// tools/proctimes/record/when.hpp — the durations, sizes and instants that
// `proctimes record`, `report` and `top --replay` take on their command
// lines, read strictly: a text is all of one form or it is refused with a
// message that says what was expected.
//
//   durations  "10s", "500ms", "1.5m", "12h", "7d", "2w"; a bare number is
//              seconds where `bare_seconds` allows it (--interval)
//   sizes      "500M", "2G", "2GB", "2GiB", "800K", "4096B" (powers of 1024;
//              the units are upper case, "m" being minutes)
//   instants   "2026-11-28T03:00:00Z", "2026-11-28 03:00" (local time when
//              no zone is given), "+01:00"-style offsets, fractions of a
//              second; "now"; "-1h", "-90m", "-1h30m" (before now);
//              "today 03:00", "yesterday 23:30" (local); "@1732762800"
//              (seconds since the Unix epoch)
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "proctimes/filetime.hpp"

namespace proctimes::cli::record {

/// A value read from a command line, or the sentence saying why the text is
/// not one.
template <class T>
struct parsed {
    std::variant<T, std::string> v;
    [[nodiscard]] bool ok() const noexcept { return v.index() == 0; }
    [[nodiscard]] const T& value() const { return std::get<0>(v); }
    [[nodiscard]] const std::string& why() const { return std::get<1>(v); }
};

parsed<std::chrono::nanoseconds> parse_duration(std::string_view text, bool bare_seconds);
parsed<std::uint64_t> parse_size(std::string_view text);
/// `now` is the instant relative forms count back from.
parsed<instant> parse_instant(std::string_view text, instant now);

/// --retain: an age ("7d") or a size ("2G"), or both, comma-separated.
struct retention {
    std::chrono::nanoseconds max_age{0};  ///< 0: no age limit
    std::uint64_t max_bytes = 0;          ///< 0: no size limit
    [[nodiscard]] bool any() const noexcept { return max_age.count() > 0 || max_bytes > 0; }
};
parsed<retention> parse_retention(std::string_view text);

/// "10 s", "1.5 h", "7 d": a duration for messages.
std::string describe_duration(std::chrono::nanoseconds d);

}  // namespace proctimes::cli::record
