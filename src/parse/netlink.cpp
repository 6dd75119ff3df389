// SPDX-License-Identifier: MIT
#include "parse/netlink.hpp"

#include <cstddef>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "parse/netlink_walk.hpp"

namespace proctimes::inline v1::parse {
namespace {

using nl::for_each_attr;
using nl::for_each_message;
using nl::load;

bool read_stats(std::string_view v, taskstats_exit& e) noexcept {
    if (v.size() < nl::taskstats_basic_size) return false;
    e.version = load<std::uint16_t>(v, offsetof(taskstats, version));
    e.group_dead = (load<std::uint8_t>(v, offsetof(taskstats, ac_flag)) & nl::agroup_flag) != 0;
    e.run_ns = load<std::uint64_t>(v, offsetof(taskstats, cpu_run_virtual_total));
    e.sampled_run_ns = load<std::uint64_t>(v, offsetof(taskstats, cpu_run_real_total));
    e.elapsed_us = load<std::uint64_t>(v, offsetof(taskstats, ac_etime));
    e.utime_us = load<std::uint64_t>(v, offsetof(taskstats, ac_utime));
    e.stime_us = load<std::uint64_t>(v, offsetof(taskstats, ac_stime));
    return true;
}

}  // namespace

std::size_t parse_taskstats_exits(std::string_view datagram, std::uint16_t family, std::vector<taskstats_exit>& out) {
    return nl::collect_exit_records(
        datagram, [family](std::uint16_t type) { return type == family; },
        [](std::uint32_t tid, std::string_view stats, taskstats_exit& e) {
            e.pid = tid;
            return read_stats(stats, e);
        },
        out);
}

std::optional<std::uint16_t> parse_genl_family_id(std::string_view datagram) {
    std::optional<std::uint16_t> id;
    for_each_message(datagram, [&](std::uint16_t type, std::string_view payload) {
        if (id || type != GENL_ID_CTRL || payload.size() < GENL_HDRLEN) return;
        if (load<std::uint8_t>(payload, offsetof(genlmsghdr, cmd)) != CTRL_CMD_NEWFAMILY) return;
        for_each_attr(payload.substr(GENL_HDRLEN), [&](std::uint16_t at, std::string_view v) {
            if (at == CTRL_ATTR_FAMILY_ID && v.size() >= sizeof(std::uint16_t)) {
                const auto f = load<std::uint16_t>(v, 0);
                if (f > GENL_ID_CTRL) id = f;  // ids below are reserved
            }
        });
    });
    return id;
}

std::optional<int> parse_netlink_error(std::string_view datagram) {
    std::optional<int> err;
    for_each_message(datagram, [&](std::uint16_t type, std::string_view payload) {
        if (err || type != NLMSG_ERROR || payload.size() < sizeof(int)) return;
        const int e = load<int>(payload, 0);
        if (e <= 0) err = e;  // the kernel sends 0 or a negative errno
    });
    return err;
}

}  // namespace proctimes::inline v1::parse
