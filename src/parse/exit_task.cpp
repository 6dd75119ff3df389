// SPDX-License-Identifier: MIT
#include "parse/exit_task.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

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

// f(type, body) for each netlink message / attribute that fits whole; the walk
// ends at the first header whose length is impossible.
template <class Header, class F>
void walk(std::string_view bytes, std::size_t header_size, F&& f) {
    while (bytes.size() >= header_size) {
        std::size_t len;
        std::uint16_t type;
        if constexpr (std::is_same_v<Header, nlmsghdr>) {
            len = load<std::uint32_t>(bytes, offsetof(nlmsghdr, nlmsg_len));
            type = load<std::uint16_t>(bytes, offsetof(nlmsghdr, nlmsg_type));
        } else {
            len = load<std::uint16_t>(bytes, offsetof(nlattr, nla_len));
            type = static_cast<std::uint16_t>(load<std::uint16_t>(bytes, offsetof(nlattr, nla_type)) & NLA_TYPE_MASK);
        }
        if (len < header_size || len > bytes.size()) return;
        f(type, bytes.substr(header_size, len - header_size));
        const std::size_t next = align4(len);
        if (next >= bytes.size()) return;
        bytes.remove_prefix(next);
    }
}

// Every struct taskstats version has the fields up to ac_stime (version 1);
// ac_tgid came with version 12 and is read only when present.
constexpr std::size_t needed = offsetof(taskstats, ac_stime) + sizeof(taskstats::ac_stime);
constexpr std::size_t tgid_end = offsetof(taskstats, ac_tgid) + sizeof(taskstats::ac_tgid);

bool read_stats(std::string_view v, exit_task_record& e) noexcept {
    if (v.size() < needed) return false;
    e.group_dead = (load<std::uint8_t>(v, offsetof(taskstats, ac_flag)) & agroup_flag) != 0;
    e.uid = load<std::uint32_t>(v, offsetof(taskstats, ac_uid));
    e.ppid = load<std::uint32_t>(v, offsetof(taskstats, ac_ppid));
    const std::size_t comm = offsetof(taskstats, ac_comm);
    std::memcpy(e.comm, v.data() + comm, TS_COMM_LEN);
    e.comm[TS_COMM_LEN] = '\0';
    e.run_ns = load<std::uint64_t>(v, offsetof(taskstats, cpu_run_virtual_total));
    e.elapsed_us = load<std::uint64_t>(v, offsetof(taskstats, ac_etime));
    e.utime_us = load<std::uint64_t>(v, offsetof(taskstats, ac_utime));
    e.stime_us = load<std::uint64_t>(v, offsetof(taskstats, ac_stime));
    const auto version = load<std::uint16_t>(v, offsetof(taskstats, version));
    if (version >= 12 && v.size() >= tgid_end) e.tgid = load<std::uint32_t>(v, offsetof(taskstats, ac_tgid));
    return true;
}

}  // namespace

std::size_t parse_exit_tasks(std::string_view datagram, std::uint16_t family, std::vector<exit_task_record>& out) {
    const std::size_t before = out.size();
    walk<nlmsghdr>(datagram, sizeof(nlmsghdr), [&](std::uint16_t type, std::string_view payload) {
        if ((family != 0 ? type != family : type <= GENL_ID_CTRL) || payload.size() < GENL_HDRLEN) return;
        if (load<std::uint8_t>(payload, offsetof(genlmsghdr, cmd)) != TASKSTATS_CMD_NEW) return;
        bool have = false, group = false;
        exit_task_record task;
        walk<nlattr>(payload.substr(GENL_HDRLEN), sizeof(nlattr), [&](std::uint16_t at, std::string_view value) {
            if (at == TASKSTATS_TYPE_AGGR_TGID) {
                group = true;
                return;
            }
            if (at != TASKSTATS_TYPE_AGGR_PID || have) return;
            std::uint32_t tid = 0;
            bool stats = false;
            exit_task_record e;
            walk<nlattr>(value, sizeof(nlattr), [&](std::uint16_t inner, std::string_view v) {
                if (inner == TASKSTATS_TYPE_PID && v.size() >= sizeof(std::uint32_t))
                    tid = load<std::uint32_t>(v, 0);
                else if (inner == TASKSTATS_TYPE_STATS)
                    stats = read_stats(v, e);
            });
            if (tid == 0 || !stats) return;
            e.tid = tid;
            task = e;
            have = true;
        });
        if (!have) return;
        task.group_record = group;
        out.push_back(task);
    });
    return out.size() - before;
}

}  // namespace proctimes::parse
