// SPDX-License-Identifier: MIT
// tools/proctimes/utf8.hpp — UTF-8 validity, byte by byte: process names and
// command lines are whatever bytes a program chose, and both the regex
// matcher (pattern.hpp) and the Prometheus writers (serve/collect/exposition.cpp)
// must treat the invalid ones deliberately.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace proctimes::cli {

/// Length of the valid UTF-8 sequence at the start of `v` (1 to 4), or 0 when
/// it starts with an invalid byte or is empty (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF).
inline std::size_t utf8_length(std::string_view v) noexcept {
    if (v.empty()) return 0;
    const auto b = [&v](std::size_t i) { return static_cast<unsigned char>(v[i]); };
    const unsigned char c = b(0);
    std::size_t n = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (v.size() < n) return 0;
    if (b(1) < lo || b(1) > hi) return 0;
    for (std::size_t i = 2; i < n; ++i)
        if (b(i) < 0x80 || b(i) > 0xBF) return 0;
    return n;
}

/// Whether all of `v` is valid UTF-8.
inline bool valid_utf8(std::string_view v) noexcept {
    while (!v.empty()) {
        const std::size_t n = utf8_length(v);
        if (n == 0) return false;
        v.remove_prefix(n);
    }
    return true;
}

/// `text` as RE2 in UTF-8 mode should see it: a byte that is not UTF-8 is
/// U+FFFD, as Go's regexp reads it (RE2 would not let `.` match it). Returns
/// `text` itself when it is valid, else a copy rewritten into `scratch`.
inline std::string_view as_utf8(std::string_view text, std::string& scratch) {
    if (valid_utf8(text)) return text;
    scratch.clear();
    scratch.reserve(text.size() + 16);
    while (!text.empty()) {
        const std::size_t n = utf8_length(text);
        if (n == 0) {
            scratch += "\xEF\xBF\xBD";
            text.remove_prefix(1);
        } else {
            scratch.append(text.data(), n);
            text.remove_prefix(n);
        }
    }
    return scratch;
}

}  // namespace proctimes::cli
