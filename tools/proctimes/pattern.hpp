// SPDX-License-Identifier: MIT
// tools/proctimes/pattern.hpp — the regular expressions users give proctimes
// (serve's --include/--exclude and config cmdline rules, watch --name), matched
// against process data any user controls (names, command lines of up to
// megabytes). RE2: matching takes time linear in the text and bounded stack
// and memory, whatever the pattern, so a pattern like `(a+)+$` or a 40 KB
// command line cannot stall or crash the caller. The syntax is RE2's, which is
// Go's regexp (process-exporter's): `(?P<name>...)`, `(?i)`, `\A`, `\z`,
// `\pL`, `\Q...\E`; no backreferences or lookaround.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace re2 {
class RE2;
}

namespace proctimes::cli {

class pattern {
public:
    /// Compiles `expr`; on failure returns nullptr and sets `error` (RE2's
    /// message, e.g. "missing ): (").
    static std::shared_ptr<const pattern> compile(std::string_view expr, std::string& error);
    ~pattern();
    pattern(const pattern&) = delete;
    pattern& operator=(const pattern&) = delete;

    /// Whether a match occurs anywhere in `text` (a search, not a whole-text
    /// match: anchor with ^...$ or \A...\z). Invalid UTF-8 bytes in `text`
    /// count as U+FFFD, as in Go: `.` matches them.
    [[nodiscard]] bool search(std::string_view text) const;

    /// As search(), and on a match fills `named` with each named group
    /// ((?P<name>...)) and what it matched ("" for a group that took no part).
    [[nodiscard]] bool search(std::string_view text, std::vector<std::pair<std::string, std::string>>& named) const;

    /// As search(), and on a match appends every group, the whole match first,
    /// in order, each with its name ("" when it has none) and what it matched
    /// ("" for a group that took no part): Go's SubexpNames() beside
    /// FindStringSubmatch().
    [[nodiscard]] bool search_captures(std::string_view text,
                                       std::vector<std::pair<std::string, std::string>>& captures) const;

    [[nodiscard]] const std::string& text() const noexcept { return text_; }

private:
    pattern() = default;
    std::unique_ptr<re2::RE2> re_;
    std::string text_;
};

}  // namespace proctimes::cli
