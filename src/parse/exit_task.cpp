// SPDX-License-Identifier: MIT
#include "parse/exit_task.hpp"

#include <cstddef>
#include <cstring>

#include <linux/genetlink.h>
#include <linux/taskstats.h>

#include "parse/netlink_walk.hpp"

namespace proctimes::inline v1::parse {
namespace {

using nl::load;

// ac_tgid came with struct taskstats version 12 and is read only when present.
constexpr std::size_t tgid_end = offsetof(taskstats, ac_tgid) + sizeof(taskstats::ac_tgid);

bool read_stats(std::string_view v, exit_task_record& e) noexcept {
    if (v.size() < nl::taskstats_basic_size) return false;
    const auto flags = load<std::uint8_t>(v, offsetof(taskstats, ac_flag));
    e.group_dead = (flags & nl::agroup_flag) != 0;
    e.forked_no_exec = (flags & nl::afork_flag) != 0;
    e.uid = load<std::uint32_t>(v, offsetof(taskstats, ac_uid));
    e.ppid = load<std::uint32_t>(v, offsetof(taskstats, ac_ppid));
    const std::size_t comm = offsetof(taskstats, ac_comm);
    std::memcpy(e.comm, v.data() + comm, TS_COMM_LEN);
    e.comm[TS_COMM_LEN] = '\0';
    e.run_ns = load<std::uint64_t>(v, offsetof(taskstats, cpu_run_virtual_total));
    e.elapsed_us = load<std::uint64_t>(v, offsetof(taskstats, ac_etime));
    e.utime_us = load<std::uint64_t>(v, offsetof(taskstats, ac_utime));
    e.stime_us = load<std::uint64_t>(v, offsetof(taskstats, ac_stime));
    e.exit_code = load<std::uint32_t>(v, offsetof(taskstats, ac_exitcode));
    const auto version = load<std::uint16_t>(v, offsetof(taskstats, version));
    if (version >= 12 && v.size() >= tgid_end) e.tgid = load<std::uint32_t>(v, offsetof(taskstats, ac_tgid));
    return true;
}

}  // namespace

std::size_t parse_exit_tasks(std::string_view datagram, std::uint16_t family, std::vector<exit_task_record>& out) {
    // family 0: any generic-netlink family but the controller's.
    return nl::collect_exit_records(
        datagram, [family](std::uint16_t type) { return family != 0 ? type == family : type > GENL_ID_CTRL; },
        [](std::uint32_t tid, std::string_view stats, exit_task_record& e) {
            e.tid = tid;
            return read_stats(stats, e);
        },
        out);
}

}  // namespace proctimes::inline v1::parse
