// SPDX-License-Identifier: MIT
#include "parse/netlink.hpp"

#include <cstddef>
#include <cstring>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

namespace proctimes::parse {
namespace {

constexpr std::uint8_t agroup_flag = 0x20;  // AGROUP of ac_flag (include/uapi/linux/acct.h)

constexpr std::size_t align4(std::size_t n) noexcept { return (n + 3) & ~std::size_t{3}; }

template <class T>
T load(std::string_view bytes, std::size_t at) noexcept {
    T v{};
    std::memcpy(&v, bytes.data() + at, sizeof v);
    return v;
}

// Walks the netlink messages of a datagram: f(type, payload) for each whole
// one. A message whose length is too short or runs past the datagram ends
// the walk (nothing after it can be framed).
template <class F>
void for_each_message(std::string_view dgram, F&& f) {
    while (dgram.size() >= sizeof(nlmsghdr)) {
        const auto len = load<std::uint32_t>(dgram, offsetof(nlmsghdr, nlmsg_len));
        const auto type = load<std::uint16_t>(dgram, offsetof(nlmsghdr, nlmsg_type));
        if (len < sizeof(nlmsghdr) || len > dgram.size()) return;
        f(type, dgram.substr(sizeof(nlmsghdr), len - sizeof(nlmsghdr)));
        const std::size_t next = align4(len);
        if (next >= dgram.size()) return;
        dgram.remove_prefix(next);
    }
}

// Walks the attributes of a payload: f(type without flag bits, value).
template <class F>
void for_each_attr(std::string_view attrs, F&& f) {
    while (attrs.size() >= sizeof(nlattr)) {
        const auto len = load<std::uint16_t>(attrs, offsetof(nlattr, nla_len));
        const auto type =
            static_cast<std::uint16_t>(load<std::uint16_t>(attrs, offsetof(nlattr, nla_type)) & NLA_TYPE_MASK);
        if (len < sizeof(nlattr) || len > attrs.size()) return;
        f(type, attrs.substr(sizeof(nlattr), len - sizeof(nlattr)));
        const std::size_t next = align4(len);
        if (next >= attrs.size()) return;
        attrs.remove_prefix(next);
    }
}

// The fields proctimes reads must all be present: every struct taskstats
// version has them (basic accounting, version 1), and later versions only
// append fields.
constexpr std::size_t stats_needed = offsetof(taskstats, ac_stime) + sizeof(taskstats::ac_stime);

bool read_stats(std::string_view v, taskstats_exit& e) noexcept {
    if (v.size() < stats_needed) return false;
    e.version = load<std::uint16_t>(v, offsetof(taskstats, version));
    e.group_dead = (load<std::uint8_t>(v, offsetof(taskstats, ac_flag)) & agroup_flag) != 0;
    e.run_ns = load<std::uint64_t>(v, offsetof(taskstats, cpu_run_virtual_total));
    e.sampled_run_ns = load<std::uint64_t>(v, offsetof(taskstats, cpu_run_real_total));
    e.elapsed_us = load<std::uint64_t>(v, offsetof(taskstats, ac_etime));
    e.utime_us = load<std::uint64_t>(v, offsetof(taskstats, ac_utime));
    e.stime_us = load<std::uint64_t>(v, offsetof(taskstats, ac_stime));
    return true;
}

}  // namespace

std::size_t parse_taskstats_exits(std::string_view datagram, std::uint16_t family, std::vector<taskstats_exit>& out) {
    const std::size_t before = out.size();
    for_each_message(datagram, [&](std::uint16_t type, std::string_view payload) {
        if (type != family || payload.size() < GENL_HDRLEN) return;
        if (load<std::uint8_t>(payload, offsetof(genlmsghdr, cmd)) != TASKSTATS_CMD_NEW) return;
        std::optional<taskstats_exit> task;
        bool group = false;
        for_each_attr(payload.substr(GENL_HDRLEN), [&](std::uint16_t at, std::string_view value) {
            if (at == TASKSTATS_TYPE_AGGR_TGID) {
                group = true;
                return;
            }
            if (at != TASKSTATS_TYPE_AGGR_PID || task) return;
            std::optional<std::uint32_t> pid;
            taskstats_exit e;
            bool stats = false;
            for_each_attr(value, [&](std::uint16_t inner, std::string_view v) {
                if (inner == TASKSTATS_TYPE_PID && v.size() >= sizeof(std::uint32_t))
                    pid = load<std::uint32_t>(v, 0);
                else if (inner == TASKSTATS_TYPE_STATS)
                    stats = read_stats(v, e);
            });
            if (!pid || *pid == 0 || !stats) return;
            e.pid = *pid;
            task = e;
        });
        if (!task) return;
        task->group_record = group;
        out.push_back(*task);
    });
    return out.size() - before;
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

}  // namespace proctimes::parse
