// SPDX-License-Identifier: MIT
#include "linux/bpf/exit_record.hpp"

#include <chrono>

#include "cpu_split.hpp"

namespace proctimes::inline v1::detail {

using std::chrono::nanoseconds;

bpf_task_end to_task_end(const parse::bpf_exit_record& r, const boot_anchor& anchor, std::int64_t tick) {
    bpf_task_end e;
    e.pid = static_cast<pid_t>(r.tgid);
    e.tid = static_cast<pid_t>(r.pid);
    e.parent_pid = static_cast<pid_t>(r.ppid);
    e.uid = r.euid;
    e.kernel_thread = (r.flags & parse::bpf_pf_kthread) != 0;
    e.forked_no_exec = (r.flags & parse::bpf_pf_forknoexec) != 0;
    e.name.assign(parse::comm_view(r.comm));
    e.start_ticks = r.start_boottime / static_cast<std::uint64_t>(tick);
    auto at = [&](std::uint64_t boottime) { return anchor.boot + nanoseconds{static_cast<std::int64_t>(boottime)}; };
    e.creation = at(r.start_boottime);
    if (r.exit_boottime) e.exit = at(r.exit_boottime);
    e.released = at(r.free_boottime);
    e.released_since_boot = nanoseconds{static_cast<std::int64_t>(r.free_boottime)};
    e.threads_known = (r.reserved & PT_GROUP_KNOWN) != 0;
    e.had_threads = (r.reserved & PT_GROUP_HAD_THREADS) != 0;
    auto own = split_by_ticks(nanoseconds{static_cast<std::int64_t>(r.runtime)}, r.utime, r.stime, e.kernel_thread);
    e.kernel = own.kernel;
    e.user = own.user;
    if (e.is_process()) {
        auto all = split_by_ticks(nanoseconds{static_cast<std::int64_t>(r.group_runtime)}, r.group_utime, r.group_stime,
                                  e.kernel_thread);
        e.group_kernel = all.kernel;
        e.group_user = all.user;
    }
    // A wait(2) status: the exit code in bits 8-15, or the signal in bits
    // 0-6 with the core-dump flag in bit 7.
    const int st = r.exit_code;
    if ((st & 0x7f) == 0) {
        e.status.code = (st >> 8) & 0xff;
    } else {
        e.status.signal = st & 0x7f;
        e.status.core_dumped = (st & 0x80) != 0;
    }
    return e;
}

}  // namespace proctimes::inline v1::detail
