// SPDX-License-Identifier: MIT
// getdents64(2) buffers (struct linux_dirent64 records) as the snapshot walk
// reads them: records are consumed in order, never past the buffer, and every
// name is NUL-free and lies inside its record.
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "parse/procfs.hpp"

using namespace proctimes::parse;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view all(reinterpret_cast<const char*>(data), size);
    std::string_view rest = all;
    while (auto e = next_dirent(rest)) {
        FUZZ_CHECK(e->name.find('\0') == std::string_view::npos);
        FUZZ_CHECK(e->name.data() >= all.data() && e->name.data() + e->name.size() <= rest.data());
        FUZZ_CHECK(rest.data() + rest.size() == all.data() + all.size());
        (void)parse_id(e->name);
    }
    return 0;
}
