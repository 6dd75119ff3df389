// SPDX-License-Identifier: MIT
#include "linux/bpf/snapshot_values.hpp"

#include <unistd.h>

namespace proctimes::inline v1::detail {

std::optional<task_counters> task_counters_of(const parse::bpf_task_record& r) noexcept {
    if ((r.counters & PT_COUNTERS_FAULTS_SWITCHES) == 0) return std::nullopt;
    task_counters c;
    c.minor_faults = r.min_flt;
    c.major_faults = r.maj_flt;
    c.voluntary_switches = r.nvcsw;
    c.involuntary_switches = r.nivcsw;
    if ((r.counters & PT_COUNTERS_IO) != 0) c.read_bytes = r.read_bytes, c.write_bytes = r.write_bytes;
    return c;
}

void fill_process_values(snapshot_process& p, const parse::bpf_task_record& lead,
                         std::span<const parse::bpf_task_record> recs,
                         std::span<const std::pair<std::uint64_t, std::size_t>> group) noexcept {
    // Faults and I/O: the ended threads' (the leader's group_* fields) and
    // each live thread's own; switches are the leader's own, as status
    // states them.
    if (auto c = task_counters_of(lead)) {
        c->minor_faults = lead.group_min_flt;
        c->major_faults = lead.group_maj_flt;
        std::uint64_t read = lead.group_read_bytes, written = lead.group_write_bytes;
        for (const auto& [key, k] : group) {
            c->minor_faults += recs[k].min_flt;
            c->major_faults += recs[k].maj_flt;
            read += recs[k].read_bytes;
            written += recs[k].write_bytes;
        }
        if (c->read_bytes) c->read_bytes = read, c->write_bytes = written;
        p.counters = c;
    }
    // Its address space's counters: stat's rss (pages, as the page size
    // makes them bytes) and vsize (total_vm pages), status's VmSwap.
    if ((lead.counters & PT_COUNTERS_MEMORY) != 0) {
        static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
        p.memory = process_memory{lead.rss_pages * page, lead.total_vm * page, lead.swap_pages * page};
    }
    if ((lead.counters & PT_COUNTERS_LIMIT) != 0) p.open_files_limit = lead.nofile_cur;
}

}  // namespace proctimes::inline v1::detail
