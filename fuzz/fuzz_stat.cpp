// /proc/<pid>/stat: whatever the bytes, the parser returns fields or nullopt,
// never reads outside the input, and comm is exactly the text between the first
// '(' and the last ')'.
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "parse/procfs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = proctimes::parse::parse_stat(text);
    if (!r) return 0;
    FUZZ_CHECK(r->comm.data() >= text.data());
    FUZZ_CHECK(r->comm.data() + r->comm.size() <= text.data() + text.size());
    FUZZ_CHECK(text.find('(') + 1 == static_cast<std::size_t>(r->comm.data() - text.data()));
    FUZZ_CHECK(text.rfind(')') == static_cast<std::size_t>(r->comm.data() - text.data()) + r->comm.size());
    FUZZ_CHECK(r->pid >= 0);
    // Parsing is a pure function of the text.
    auto again = proctimes::parse::parse_stat(text);
    FUZZ_CHECK(again && again->starttime == r->starttime && again->utime == r->utime && again->comm == r->comm);
    return 0;
}
