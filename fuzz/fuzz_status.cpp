// SPDX-License-Identifier: MIT
// /proc/<pid>/status.
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "parse/procfs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = proctimes::parse::parse_status(text);
    if (!r) return 0;
    FUZZ_CHECK(r->tgid >= 0 && r->pid >= 0);
    FUZZ_CHECK(r->name.data() >= text.data() && r->name.data() + r->name.size() <= text.data() + text.size());
    FUZZ_CHECK(r->name.find('\n') == std::string_view::npos);
    return 0;
}
