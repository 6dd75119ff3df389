// SPDX-License-Identifier: MIT
// Generic-netlink datagrams of the taskstats exit listener: exit records, the
// controller's family reply, and error/acknowledgement messages. The input's
// first two bytes choose the family id the exit parser looks for.
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include <linux/genetlink.h>

#include "check.hpp"
#include "parse/netlink.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    std::uint16_t family = 0;
    std::memcpy(&family, data, sizeof family);
    const std::string_view dgram(reinterpret_cast<const char*>(data) + 2, size - 2);

    std::vector<proctimes::parse::taskstats_exit> out;
    const std::size_t n = proctimes::parse::parse_taskstats_exits(dgram, family, out);
    FUZZ_CHECK(n == out.size());
    // Each record needs a netlink header, a genl header and two nested attributes.
    FUZZ_CHECK(n * (16 + 4 + 4 + 8) <= dgram.size());
    for (const auto& e : out) FUZZ_CHECK(e.pid != 0);

    if (auto id = proctimes::parse::parse_genl_family_id(dgram)) FUZZ_CHECK(*id > GENL_ID_CTRL);
    if (auto err = proctimes::parse::parse_netlink_error(dgram)) FUZZ_CHECK(*err <= 0);
    return 0;
}
