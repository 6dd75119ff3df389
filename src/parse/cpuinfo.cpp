// SPDX-License-Identifier: MIT
// /proc/cpuinfo flags: see src/parse/cpuinfo.hpp.
#include "parse/cpuinfo.hpp"

namespace proctimes::inline v1::parse {

std::optional<std::string_view> cpuinfo_flags_line(std::string_view text) noexcept {
    const auto pos = text.find("\nflags");
    if (pos == std::string_view::npos) return std::nullopt;
    const auto eol = text.find('\n', pos + 1);
    return text.substr(pos + 1, eol == std::string_view::npos ? std::string_view::npos : eol - pos - 1);
}

bool cpuinfo_has_flag(std::string_view line, std::string_view word) noexcept {
    if (word.empty()) return false;
    for (auto at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
        const bool starts = at > 0 && line[at - 1] == ' ';
        const bool ends = at + word.size() == line.size() || line[at + word.size()] == ' ';
        if (starts && ends) return true;
    }
    return false;
}

}  // namespace proctimes::inline v1::parse
