// SPDX-License-Identifier: MIT
// The per-process files read_process_resources parses beside stat and status
// (src/parse/resources.hpp): io, limits, smaps_rollup, cgroup and wchan. The first
// byte picks the parser; each answer must be one the file could have meant.
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "parse/resources.hpp"

namespace parse = proctimes::parse;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 5) {
        case 0:
            if (parse::parse_io(text)) {
                FUZZ_CHECK(text.find("read_bytes:") != std::string_view::npos);
                FUZZ_CHECK(text.find("write_bytes:") != std::string_view::npos);
            }
            break;
        case 1:
            if (parse::parse_open_files_limit(text)) FUZZ_CHECK(text.find("Max open files") != std::string_view::npos);
            break;
        case 2:
            if (auto s = parse::parse_smaps_rollup(text)) {
                FUZZ_CHECK(text.find("Pss:") != std::string_view::npos);
                FUZZ_CHECK(s->pss_bytes % 1024 == 0 && s->swap_pss_bytes % 1024 == 0);
            }
            break;
        case 3: {
            // Lines of a cgroup file: each a view of the input with its two
            // colons between the parts, never past a newline.
            std::string_view rest = text;
            while (const auto l = parse::next_cgroup_line(rest)) {
                FUZZ_CHECK(l->hierarchy.find(':') == std::string_view::npos);
                FUZZ_CHECK(l->controllers.find(':') == std::string_view::npos);
                FUZZ_CHECK(l->path.find('\n') == std::string_view::npos);
                FUZZ_CHECK(l->path.data() >= text.data() &&
                           l->path.data() + l->path.size() <= text.data() + text.size());
            }
            break;
        }
        default: {
            // A view of the input, without the trailing newlines, never "0".
            const std::string_view w = parse::parse_wchan(text);
            FUZZ_CHECK(w.empty() || (w.data() == text.data() && w.size() <= text.size()));
            FUZZ_CHECK(w != "0");
            break;
        }
    }
    return 0;
}
