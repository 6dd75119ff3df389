// SPDX-License-Identifier: MIT
// The per-process files `serve --namedprocess` parses (tools/proctimes/serve/
// procfiles.cpp): stat, status, io, limits and smaps_rollup. The first byte
// picks the parser; each answer must be one the file could have meant.
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "serve/procfiles.hpp"

namespace serve = proctimes::cli::serve;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 5) {
        case 0:
            if (auto s = serve::parse_stat(text)) {
                // The fields follow the last ')': the state is a byte found after it.
                const auto close = text.rfind(')');
                FUZZ_CHECK(close != std::string_view::npos);
                FUZZ_CHECK(text.find(s->state, close) != std::string_view::npos);
            }
            break;
        case 1:
            if (auto s = serve::parse_status(text)) {
                FUZZ_CHECK(text.find("voluntary_ctxt_switches:") != std::string_view::npos);
                FUZZ_CHECK(s->vm_swap_bytes % 1024 == 0);
            }
            break;
        case 2:
            if (serve::parse_io(text)) {
                FUZZ_CHECK(text.find("read_bytes:") != std::string_view::npos);
                FUZZ_CHECK(text.find("write_bytes:") != std::string_view::npos);
            }
            break;
        case 3:
            if (serve::parse_open_files_limit(text)) FUZZ_CHECK(text.find("Max open files") != std::string_view::npos);
            break;
        default:
            if (auto s = serve::parse_smaps_rollup(text)) {
                FUZZ_CHECK(text.find("Pss:") != std::string_view::npos);
                FUZZ_CHECK(s->pss_bytes % 1024 == 0 && s->swap_pss_bytes % 1024 == 0);
            }
            break;
    }
    return 0;
}
