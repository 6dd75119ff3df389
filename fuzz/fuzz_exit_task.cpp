// SPDX-License-Identifier: MIT
// The taskstats exit-record parser that keeps names (parse/exit_task.hpp):
// never reads past the datagram (ASan), agrees with parse/netlink.hpp on which
// records a datagram holds and on their CPU values, and keeps comm terminated.
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "parse/exit_task.hpp"
#include "parse/netlink.hpp"

using namespace proctimes::parse;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::uint16_t family = static_cast<std::uint16_t>(data[0] | (data[1] << 8));
    const std::string_view d(reinterpret_cast<const char*>(data) + 2, size - 2);
    std::vector<exit_task_record> named;
    std::vector<taskstats_exit> plain;
    const std::size_t n = parse_exit_tasks(d, family, named);
    const std::size_t m = parse_taskstats_exits(d, family, plain);
    if (family != 0) {
        FUZZ_CHECK(n == m);
        for (std::size_t i = 0; i < n && i < m; ++i) {
            FUZZ_CHECK(named[i].tid == plain[i].pid);
            FUZZ_CHECK(named[i].run_ns == plain[i].run_ns);
            FUZZ_CHECK(named[i].utime_us == plain[i].utime_us && named[i].stime_us == plain[i].stime_us);
            FUZZ_CHECK(named[i].group_dead == plain[i].group_dead && named[i].group_record == plain[i].group_record);
        }
    }
    for (const auto& r : named) FUZZ_CHECK(std::memchr(r.comm, '\0', sizeof r.comm) != nullptr);
    return 0;
}
