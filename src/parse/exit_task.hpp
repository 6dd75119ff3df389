// SPDX-License-Identifier: MIT
// Pure parser for taskstats exit records (Documentation/accounting/taskstats.rst)
// that keeps who the task was — thread group, parent, owner, command name — as
// well as its final CPU times, for readers that must attribute a task nobody
// saw alive (the CPU ledger, `proctimes serve`). parse/netlink.hpp keeps only
// what a handle needs; this one keeps the naming fields too. No I/O; fuzzed
// (fuzz/fuzz_exit_task.cpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace proctimes::inline v1::parse {

struct exit_task_record {
    std::uint32_t tid = 0;  ///< ac_pid: the task (thread) id, initial pid namespace
    /// ac_tgid: its thread group (process) id; 0 when the kernel's struct is
    /// older than version 12 and does not carry it.
    std::uint32_t tgid = 0;
    std::uint32_t ppid = 0;        ///< ac_ppid
    std::uint32_t uid = 0;         ///< ac_uid (real uid)
    char comm[33] = {};            ///< ac_comm, NUL-terminated (TS_COMM_LEN 32)
    bool group_dead = false;       ///< AGROUP: the last thread of its thread group
    bool forked_no_exec = false;   ///< AFORK: forked and never exec'd
    bool group_record = false;     ///< the datagram also carried a thread-group record
    std::uint64_t run_ns = 0;      ///< cpu_run_virtual_total: scheduler run time, ns
    std::uint64_t utime_us = 0;    ///< ac_utime, tick-sampled
    std::uint64_t stime_us = 0;    ///< ac_stime, tick-sampled
    std::uint64_t elapsed_us = 0;  ///< ac_etime: start to exit
    /// ac_exitcode: the task's exit code in wait(2)'s form (the code in bits
    /// 8-15, or the signal in bits 0-6 and the core-dump flag in bit 7). Every
    /// thread that ends in a group exit (exit_group(2), a fatal signal) has the
    /// group's.
    std::uint32_t exit_code = 0;
};

/// The exit records of one datagram from a taskstats listener whose family id
/// is `family` (0: any generic-netlink family, for a socket that only the
/// TASKSTATS family and the controller talk to); appends to `out`, returns how many. Truncated or malformed
/// messages and attributes are skipped, never read past.
std::size_t parse_exit_tasks(std::string_view datagram, std::uint16_t family, std::vector<exit_task_record>& out);

}  // namespace proctimes::inline v1::parse
