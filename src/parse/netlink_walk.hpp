// SPDX-License-Identifier: MIT
// The framing of netlink datagrams (netlink(7)) and of taskstats exit records
// (Documentation/accounting/taskstats.rst), shared by the two taskstats
// parsers (parse/netlink.cpp, parse/exit_task.cpp): walking the messages of a
// datagram and the attributes of a payload, reading a field that may sit at
// any alignment in the received bytes, and finding each message's per-task
// record. The parsers differ only in which fields of struct taskstats they keep. Header-only templates: each walk
// calls the caller's lambda directly. No I/O; fuzzed through both parsers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

namespace proctimes::inline v1::parse::nl {

/// NLMSG_ALIGN / NLA_ALIGN: messages and attributes start on 4-byte boundaries.
constexpr std::size_t align4(std::size_t n) noexcept { return (n + 3) & ~std::size_t{3}; }

/// The T at byte `at` of `bytes` (the caller checked that it fits): memcpy,
/// since a datagram's fields need not be aligned for T.
template <class T>
T load(std::string_view bytes, std::size_t at) noexcept {
    T v{};
    std::memcpy(&v, bytes.data() + at, sizeof v);
    return v;
}

/// Walks the netlink messages of a datagram: f(type, payload) for each whole
/// one. A message whose length is too short or runs past the datagram ends
/// the walk (nothing after it can be framed).
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

/// Walks the attributes of a payload: f(type without the NLA_F_NESTED and
/// NLA_F_NET_BYTEORDER flag bits, value). Ends as for_each_message does.
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

/// AGROUP of taskstats::ac_flag (include/uapi/linux/acct.h): the task was the
/// last thread of its thread group.
constexpr std::uint8_t agroup_flag = 0x20;
/// AFORK of taskstats::ac_flag: the task was forked and never exec'd.
constexpr std::uint8_t afork_flag = 0x01;

/// Every struct taskstats version has the fields up to ac_stime (basic
/// accounting, version 1); later versions only append fields.
constexpr std::size_t taskstats_basic_size = offsetof(taskstats, ac_stime) + sizeof(taskstats::ac_stime);

/// The per-task exit records of one datagram from a taskstats listener. For
/// each TASKSTATS_CMD_NEW message whose type `accept(type)` allows, the first
/// TASKSTATS_TYPE_AGGR_PID attribute for which `read(tid, stats, record)`
/// returns true is appended to `out` (tid: its TASKSTATS_TYPE_PID, never 0;
/// stats: the bytes of its TASKSTATS_TYPE_STATS, of any length), with
/// `group_record` set when the message also carries the thread-group record
/// (TASKSTATS_TYPE_AGGR_TGID) the kernel adds when a multi-threaded group
/// dies. Returns how many it appended.
template <class Record, class Accept, class Read>
std::size_t collect_exit_records(std::string_view dgram, Accept&& accept, Read&& read, std::vector<Record>& out) {
    const std::size_t before = out.size();
    for_each_message(dgram, [&](std::uint16_t type, std::string_view payload) {
        if (!accept(type) || payload.size() < GENL_HDRLEN) return;
        if (load<std::uint8_t>(payload, offsetof(genlmsghdr, cmd)) != TASKSTATS_CMD_NEW) return;
        std::optional<Record> task;
        bool group = false;
        for_each_attr(payload.substr(GENL_HDRLEN), [&](std::uint16_t at, std::string_view value) {
            if (at == TASKSTATS_TYPE_AGGR_TGID) {
                group = true;
                return;
            }
            if (at != TASKSTATS_TYPE_AGGR_PID || task) return;
            std::uint32_t tid = 0;
            std::optional<std::string_view> stats;
            for_each_attr(value, [&](std::uint16_t inner, std::string_view v) {
                if (inner == TASKSTATS_TYPE_PID && v.size() >= sizeof(std::uint32_t))
                    tid = load<std::uint32_t>(v, 0);
                else if (inner == TASKSTATS_TYPE_STATS)
                    stats = v;
            });
            Record r{};
            if (tid == 0 || !stats || !read(tid, *stats, r)) return;
            task = r;
        });
        if (!task) return;
        task->group_record = group;
        out.push_back(*task);
    });
    return out.size() - before;
}

}  // namespace proctimes::inline v1::parse::nl
