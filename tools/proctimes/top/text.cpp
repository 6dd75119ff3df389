// SPDX-License-Identifier: MIT
// Safe text for the terminal (text.hpp).
#include "top/text.hpp"

#include <cwchar>

#include <fmt/format.h>

#include "utf8.hpp"

namespace proctimes::cli::top {

namespace {

char32_t decode(std::string_view v, std::size_t n) {
    const auto b = [&v](std::size_t i) { return static_cast<unsigned char>(v[i]); };
    switch (n) {
        case 1:
            return b(0);
        case 2:
            return (char32_t{b(0)} & 0x1FU) << 6U | (b(1) & 0x3FU);
        case 3:
            return (char32_t{b(0)} & 0x0FU) << 12U | (b(1) & 0x3FU) << 6U | (b(2) & 0x3FU);
        default:
            return (char32_t{b(0)} & 0x07U) << 18U | (b(1) & 0x3FU) << 12U | (b(2) & 0x3FU) << 6U | (b(3) & 0x3FU);
    }
}

// Characters that move or hide text without drawing: the bidirectional
// controls, zero-width characters, and the line and paragraph separators.
bool invisible_format(char32_t c) {
    return (c >= 0x200B && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) ||
           c == 0xFEFF || c == 0x061C || c == 0x00AD;
}

int width_of(char32_t c) {
    if (c < 0x80) return 1;
    const int w = ::wcwidth(static_cast<wchar_t>(c));
    return w < 0 ? 1 : w;
}

}  // namespace

std::string safe_text(std::string_view raw, bool utf8) {
    std::string out;
    out.reserve(raw.size());
    while (!raw.empty()) {
        const std::size_t n = utf8_length(raw);
        if (n == 0) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(raw[0]));
            raw.remove_prefix(1);
            continue;
        }
        const char32_t c = decode(raw, n);
        if (c < 0x20 || c == 0x7F) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
        } else if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c <= 0x9F || invisible_format(c) || (utf8 && ::wcwidth(static_cast<wchar_t>(c)) < 0)) {
            // C1 controls, invisible formatting, and (in UTF-8) what this
            // locale cannot print: named, never sent.
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else if (!utf8) {
            out += '?';
        } else {
            out.append(raw.data(), n);
        }
        raw.remove_prefix(n);
    }
    return out;
}

std::string_view fit_width(std::string_view safe, int width, int* used) {
    int w = 0;
    std::size_t at = 0;
    while (at < safe.size()) {
        std::size_t n = utf8_length(safe.substr(at));
        if (n == 0) n = 1;
        const int cw = width_of(decode(safe.substr(at), n));
        if (w + cw > width) break;
        w += cw;
        at += n;
    }
    if (used != nullptr) *used = w;
    return safe.substr(0, at);
}

int display_width(std::string_view safe) {
    int used = 0;
    fit_width(safe, 1 << 30, &used);
    return used;
}

}  // namespace proctimes::cli::top
