// SPDX-License-Identifier: MIT
// /proc/cpuinfo flags (parse/cpuinfo.hpp). The first byte says where the
// input splits into a word and a cpuinfo text. Checked: the flags line found
// is a whole line of the text that starts "flags" and is not the first; a
// word without spaces is a flag exactly when it is one of the line's
// space-separated fields after the first (the reference parser); every such
// field is found.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "parse/cpuinfo.hpp"

using namespace proctimes::parse;

namespace {

std::vector<std::string_view> fields(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t from = 0;
    for (;;) {
        const auto sp = line.find(' ', from);
        out.push_back(line.substr(from, sp == std::string_view::npos ? std::string_view::npos : sp - from));
        if (sp == std::string_view::npos) return out;
        from = sp + 1;
    }
}

bool reference_has(std::string_view line, std::string_view word) {
    if (word.empty()) return false;
    const auto f = fields(line);
    for (std::size_t i = 1; i < f.size(); ++i)
        if (f[i] == word) return true;
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view all(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::size_t cut = data[0] < all.size() ? data[0] : all.size();
    const std::string_view word = all.substr(0, cut);
    const std::string_view text = all.substr(cut);

    const auto line = cpuinfo_flags_line(text);
    if (!line) return 0;
    // A view into text, after a newline, up to the next newline or the end.
    FUZZ_CHECK(line->data() > text.data() && line->data() + line->size() <= text.data() + text.size());
    FUZZ_CHECK(line->data()[-1] == '\n');
    FUZZ_CHECK(line->substr(0, 5) == "flags");
    FUZZ_CHECK(line->find('\n') == std::string_view::npos);
    const std::size_t end = static_cast<std::size_t>(line->data() - text.data()) + line->size();
    FUZZ_CHECK(end == text.size() || text[end] == '\n');

    if (word.find(' ') == std::string_view::npos)
        FUZZ_CHECK(cpuinfo_has_flag(*line, word) == reference_has(*line, word));
    const auto f = fields(*line);
    for (std::size_t i = 1; i < f.size() && i < 64; ++i)
        if (!f[i].empty()) FUZZ_CHECK(cpuinfo_has_flag(*line, f[i]));
    return 0;
}
