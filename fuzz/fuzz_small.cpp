// SPDX-License-Identifier: MIT
// The small formats: schedstat, /proc/stat btime, boot_id, the shared boot
// anchor file, and /proc directory names. The first byte picks the parser.
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "parse/procfs.hpp"

using namespace proctimes::parse;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 5) {
        case 0: {
            auto r = parse_schedstat(text);
            if (r) FUZZ_CHECK(parse_schedstat(text)->run_ns == r->run_ns);
            break;
        }
        case 1:
            (void)parse_proc_stat_btime(text);
            break;
        case 2: {
            // A parsed boot id prints back to the canonical form of its input.
            auto id = parse_boot_id(text);
            if (id) {
                auto again = parse_boot_id(id->to_string());
                FUZZ_CHECK(again && *again == *id);
            }
            break;
        }
        case 3: {
            auto a = parse_anchor(text);
            if (a) {
                const std::string line = "proctimes-boot-anchor 1 " + a->boot.to_string() + " " +
                                         std::to_string(a->realtime_minus_boottime_ns) + "\n";
                auto b = parse_anchor(line);
                FUZZ_CHECK(b && b->boot == a->boot && b->realtime_minus_boottime_ns == a->realtime_minus_boottime_ns);
            }
            break;
        }
        case 4: {
            auto id = parse_id(text);
            if (id) FUZZ_CHECK(*id >= 0 && std::to_string(*id).size() <= text.size());
            break;
        }
    }
    return 0;
}
