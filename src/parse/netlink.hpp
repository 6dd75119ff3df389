// SPDX-License-Identifier: MIT
// Pure parsers for the generic-netlink datagrams of the kernel's taskstats
// exit records (Documentation/accounting/taskstats.rst). No I/O: each takes
// the bytes of one received datagram. Malformed or truncated messages are
// skipped, never read past; the parsers are fuzzed (fuzz/fuzz_netlink.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace proctimes::inline v1::parse {

/// What one exit record says about the task that ended.
struct taskstats_exit {
    std::uint32_t pid = 0;             // the task (thread) id, in the initial pid namespace
    std::uint16_t version = 0;         // struct taskstats version the kernel wrote
    bool group_dead = false;           // AGROUP: the last thread of its thread group
    bool group_record = false;         // the datagram also carried a thread-group record
    std::uint64_t utime_us = 0;        // ac_utime: tick-sampled user time, µs
    std::uint64_t stime_us = 0;        // ac_stime: tick-sampled system time, µs
    std::uint64_t run_ns = 0;          // cpu_run_virtual_total: the scheduler's run time, ns
    std::uint64_t sampled_run_ns = 0;  // cpu_run_real_total: utime + stime as sampled, ns
    std::uint64_t elapsed_us = 0;      // ac_etime: from the task's start to its exit, µs
};

/// The exit records in one datagram from a taskstats listener socket whose
/// family id is `family` (messages of other types are ignored). Appends to
/// `out` and returns how many it appended. Only the per-task record is kept:
/// the thread-group record the kernel adds when a multi-threaded group dies
/// holds only delay accounting, so it just sets `group_record`.
std::size_t parse_taskstats_exits(std::string_view datagram, std::uint16_t family, std::vector<taskstats_exit>& out);

/// The family id in a CTRL_CMD_GETFAMILY reply, or nullopt.
std::optional<std::uint16_t> parse_genl_family_id(std::string_view datagram);

/// The error code of the first NLMSG_ERROR message (0 is an acknowledgement,
/// otherwise a negative errno), or nullopt when the datagram has none.
std::optional<int> parse_netlink_error(std::string_view datagram);

}  // namespace proctimes::inline v1::parse
