// SPDX-License-Identifier: MIT
// The metric families of one scrape, from the collector's parts: the groups
// and members of the membership, the ledger, the scrape cache's account of
// the collections, the exit stream (names and meanings: docs/SERVE.md).
#include <algorithm>

#include <sys/resource.h>

#include "serve/collect/arith.hpp"
#include "serve/collect/collector.hpp"

namespace proctimes::cli::serve {
namespace {

using std::chrono::nanoseconds;

}  // namespace

std::vector<family> collector::families() const {
    std::vector<family> out;
    const bool pe = opts_.namedprocess;

    auto cpu = family_of("proctimes_group_cpu_seconds",
                         "CPU time used by the group's processes, exited members included", metric_type::counter);
    auto est =
        family_of("proctimes_group_cpu_estimated_seconds",
                  "Part of proctimes_group_cpu_seconds_total from members that ended without an exact final value "
                  "(their last sample stands)",
                  metric_type::counter);
    auto ended = family_of("proctimes_group_ended_processes", "Members of the group that ended", metric_type::counter);
    auto procs = family_of("proctimes_group_processes", "Processes in the group now", metric_type::gauge);
    auto threads = family_of("proctimes_group_threads", "Threads of the group's processes now", metric_type::gauge);
    auto oldest = family_of("proctimes_group_oldest_start_time_seconds",
                            "Start time of the group's oldest process, seconds since the epoch (10 ms ticks)",
                            metric_type::gauge);
    for (const auto& [name, g] : membership_.groups()) {
        const bool live = g.procs > 0;
        cpu.add({{"group", name}, {"mode", "user"}}, seconds(g.user));
        cpu.add({{"group", name}, {"mode", "system"}}, seconds(g.system));
        est.add({{"group", name}}, seconds(g.estimated));
        ended.add({{"group", name}}, static_cast<double>(g.ended));
        procs.add({{"group", name}}, static_cast<double>(g.procs));
        threads.add({{"group", name}}, static_cast<double>(g.threads));
        if (live) oldest.add({{"group", name}}, g.oldest);
    }
    out.push_back(std::move(cpu));
    out.push_back(std::move(est));
    out.push_back(std::move(ended));
    out.push_back(std::move(procs));
    out.push_back(std::move(threads));
    out.push_back(std::move(oldest));
    if (pe) namedprocess_families(out);

    // The top N processes by CPU used in the last interval: bounded
    // cardinality; (pid, start ticks) keeps a reused pid a different series.
    if (opts_.top > 0) {
        std::vector<const proc_state*> top;
        for (const auto& [k, st] : membership_.processes())
            if (!st.group.empty()) top.push_back(&st);
        const std::size_t n = std::min(opts_.top, top.size());
        std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(n), top.end(),
                          [](const proc_state* a, const proc_state* b) {
                              if (a->last_interval != b->last_interval) return a->last_interval > b->last_interval;
                              return a->user + a->system > b->user + b->system;
                          });
        top.resize(n);
        auto pcpu = family_of("proctimes_process_cpu_seconds",
                              "CPU time of one of the busiest processes (the top N of the last interval)",
                              metric_type::counter);
        auto pstart = family_of("proctimes_process_start_time_seconds",
                                "Start time of one of the busiest processes, seconds since the epoch (10 ms ticks)",
                                metric_type::gauge);
        for (const proc_state* st : top) {
            const std::string pid = std::to_string(st->pid), start = std::to_string(st->start_ticks);
            const std::string name(shown_name(st->name.view()));
            pcpu.add({{"group", st->group}, {"name", name}, {"pid", pid}, {"start_ticks", start}, {"mode", "user"}},
                     seconds(st->user));
            pcpu.add({{"group", st->group}, {"name", name}, {"pid", pid}, {"start_ticks", start}, {"mode", "system"}},
                     seconds(st->system));
            pstart.add({{"group", st->group}, {"name", name}, {"pid", pid}, {"start_ticks", start}}, st->start_seconds);
        }
        out.push_back(std::move(pcpu));
        out.push_back(std::move(pstart));
    }

    // Ended processes that only an exit record knew and that no group can be
    // given: a rule needs their command line or executable. Also, with
    // taskstats records, what reaped children used beyond their records
    // where it cannot be placed (reaped.hpp): written once there is some.
    const unattributed_cpu& unattributed = membership_.unattributed();
    if (membership_.uses_rules() || unattributed.user + unattributed.system > nanoseconds{0}) {
        auto ucpu = family_of("proctimes_ended_unattributed_cpu_seconds",
                              "CPU time of ended processes no collection saw that no group could be given (a rule "
                              "needs their command line, which an exit record does not carry), and of reaped "
                              "children beyond their taskstats records that could not be placed",
                              metric_type::counter);
        ucpu.add({{"mode", "user"}}, seconds(unattributed.user));
        ucpu.add({{"mode", "system"}}, seconds(unattributed.system));
        out.push_back(std::move(ucpu));
        auto uprocs = family_of("proctimes_ended_unattributed_processes", "Those processes", metric_type::counter);
        uprocs.add({}, static_cast<double>(unattributed.procs));
        out.push_back(std::move(uprocs));
    }

    // The CPU ledger of the last interval (gauges: its unattributed part can
    // be negative by the skew between /proc/stat and the snapshot).
    if (ledger_) {
        auto part = family_of("proctimes_ledger_cpu_seconds",
                              "Where the machine's busy CPU time of the last interval went (part=busy is the total)",
                              metric_type::gauge);
        const auto& l = *ledger_;
        const std::pair<const char*, nanoseconds> parts[] = {
            {"busy", l.busy}, {"live", l.live},       {"ended", l.ended}, {"reaped_children", l.reaped_children},
            {"irq", l.irq},   {"softirq", l.softirq}, {"steal", l.steal}, {"unattributed", l.unattributed}};
        for (const auto& [k, v] : parts) part.add({{"part", k}}, seconds(v));
        out.push_back(std::move(part));
        auto iv = family_of("proctimes_ledger_interval_seconds", "Length of the interval the ledger covers",
                            metric_type::gauge);
        iv.add({}, seconds(l.interval));
        out.push_back(std::move(iv));
        auto gone =
            family_of("proctimes_ledger_ended_without_record",
                      "Processes that ended in the last interval with no exit record (their CPU since the previous "
                      "scrape is unattributed)",
                      metric_type::gauge);
        gone.add({}, static_cast<double>(l.ended_without_record));
        out.push_back(std::move(gone));
    }

    // The exporter's own cost and sources.
    auto dur = family_of("proctimes_scrape_duration_seconds", "Wall time of the last collection", metric_type::gauge);
    const collection_account& account = cache_.account();
    dur.add({}, account.last_duration);
    out.push_back(std::move(dur));
    auto tasks = family_of("proctimes_scrape_tasks", "Tasks read by the last collection", metric_type::gauge);
    tasks.add({{"kind", "process"}}, static_cast<double>(account.tasks_read));
    tasks.add({{"kind", "thread"}}, static_cast<double>(account.threads_read));
    out.push_back(std::move(tasks));
    auto cols = family_of("proctimes_scrape_collections", "Collections made (scrapes within 100 ms share one)",
                          metric_type::counter);
    cols.add({}, static_cast<double>(account.collections));
    out.push_back(std::move(cols));
    auto fails = family_of("proctimes_scrape_failures", "Collections that could not read /proc", metric_type::counter);
    fails.add({}, static_cast<double>(account.failures));
    out.push_back(std::move(fails));
    auto lost = family_of("proctimes_exit_records_lost",
                          "Exit records lost: each end with eBPF, the times the kernel dropped some with taskstats, "
                          "and each one the exporter's buffer had no room for",
                          metric_type::counter);
    lost.add({}, static_cast<double>(exits_->lost()));
    out.push_back(std::move(lost));
    // What the last snapshot was read from (the snapshotter picks eBPF where it
    // can), and the exit stream's source: docs/SERVE.md lists every value.
    auto src = family_of("proctimes_exporter_source", "Sources in use (value 1)", metric_type::gauge);
    const std::string snapshot_from = prev_.source == snapshot_source::bpf ? "bpf" : "proc";
    src.add({{"snapshot", opts_.threads ? snapshot_from + "+threads" : snapshot_from},
             {"exits", exits_->source() ? std::string(to_string(*exits_->source())) : std::string("none")}},
            1);
    out.push_back(std::move(src));
    rusage ru{};
    if (::getrusage(RUSAGE_SELF, &ru) == 0) {
        auto self =
            family_of("proctimes_exporter_cpu_seconds", "CPU time of the exporter itself", metric_type::counter);
        self.add({{"mode", "user"}},
                 static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6);
        self.add({{"mode", "system"}},
                 static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6);
        out.push_back(std::move(self));
    }
    return out;
}

}  // namespace proctimes::cli::serve
