// SPDX-License-Identifier: MIT
#include "serve/collect/member_reader.hpp"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "serve/collect/arith.hpp"

namespace proctimes::cli::serve {
namespace {

using std::chrono::nanoseconds;

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) { return b > u64_max - a ? u64_max : a + b; }
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) { return a != 0 && b > u64_max / a ? u64_max : a * b; }
// What a counter grew by since `before`, never less than nothing.
std::uint64_t grown(std::uint64_t now, std::uint64_t before) { return now > before ? now - before : 0; }

nanoseconds ticks_to_ns(std::uint64_t ticks) {
    static const long hz = std::max(1L, ::sysconf(_SC_CLK_TCK));
    const std::uint64_t per_tick = 1'000'000'000ULL / static_cast<std::uint64_t>(hz);
    return nanoseconds(static_cast<std::int64_t>(std::min(mul_sat(ticks, per_tick), std::uint64_t{INT64_MAX})));
}

// process-exporter's five states: R, S, D, Z, and every other letter.
int state_index(char s) {
    switch (s) {
        case 'R':
            return 0;
        case 'S':
            return 1;
        case 'D':
            return 2;
        case 'Z':
            return 3;
        default:
            return 4;
    }
}

// The exact CPU total of a task (ns), or -1 when the snapshot's is not exact.
std::int64_t exact_total(const task_times& t) {
    const nanoseconds res = t.precision.total_resolution;
    if (res <= nanoseconds{0} || res > std::chrono::microseconds(1)) return -1;
    return (t.user + t.kernel).count();
}

// A thread as a read of its files would give it, from what the snapshot read
// with its CPU: the ticks are its exact CPU in whole clock ticks, as stat
// states them.
resource_thread known_thread(const snapshot_thread& t) {
    static const auto tick = static_cast<std::int64_t>(ticks_to_ns(1).count());
    resource_thread r;
    r.id = t.tid();
    r.start_ticks = t.identity.start_ticks;
    r.name = std::string(t.name.view());
    r.state = t.state;
    r.user_ticks = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t.times.user.count()) / tick);
    r.system_ticks = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t.times.kernel.count()) / tick);
    const task_counters& c = *t.counters;
    r.minor_faults = c.minor_faults;
    r.major_faults = c.major_faults;
    r.switches = resource_switches{c.voluntary_switches, c.involuntary_switches};
    if (c.read_bytes && c.write_bytes) {
        resource_io io{};
        io.read_bytes = *c.read_bytes;
        io.write_bytes = *c.write_bytes;
        r.io = io;
    }
    return r;
}

// A member's smaps_rollup is read at most once in this long, whether it ran
// or not: the read walks every mapping of the process (the costliest read of
// a member that holds much memory), and Pss moves with every process that
// maps the pages it shares, so no read is more than a sample anyway. In
// between, its last Pss and SwapPss stand (docs/SERVE.md). At Prometheus'
// usual intervals (15 s and more) every scrape reads it afresh.
constexpr auto smaps_refresh = std::chrono::seconds(10);

}  // namespace

resource_options member_reader::read_options(const snapshot& cur, const snapshot_process& p, const pe_proc& pe,
                                             bool read_threads) {
    resource_options o;
    o.proc_root = opts_.proc_root;
    o.start_ticks = p.identity.start_ticks;
    o.families = resource_family::memory | resource_family::switches | resource_family::io | resource_family::files |
                 resource_family::wait_channel;
    if (pss_due(p, pe)) o.families |= resource_family::proportional;
    if (read_threads) o.families |= resource_family::threads;
    if (read_threads && opts_.threads) o.families |= resource_family::thread_io;
    // What the snapshot read with the process's CPU is not read again: with
    // its switches and swap known, status is not read; with its I/O, io.
    known_ = resource_known{};
    if (p.counters) {
        known_.switches = resource_switches{p.counters->voluntary_switches, p.counters->involuntary_switches};
        if (p.counters->read_bytes && p.counters->write_bytes)
            known_.io = resource_io{*p.counters->read_bytes, *p.counters->write_bytes, {}, {}, {}, {}};
    }
    known_.open_files_limit = p.open_files_limit;
    if (p.memory)
        known_.swap_bytes = p.memory->swap_bytes;
    else if (no_swap_)
        known_.swap_bytes = 0;
    o.known = &known_;
    const std::int64_t total = exact_total(p.times);
    if (total >= 0 && pe.files_cpu.count() == total && pe.files) {
        o.previous = &*pe.files;
        return o;
    }
    // It ran: the threads that did not are taken as they were; of those that
    // did, what the snapshot read with their CPU (the eBPF walk) is taken
    // from it, and only the wait channel is read.
    idle_buf_.clear();
    known_buf_.clear();
    const auto& last = pe.thread_files_last;
    for (const snapshot_thread& t : cur.threads_of(p)) {
        const std::int64_t cpu = exact_total(t.times);
        if (cpu < 0) continue;
        const auto it = std::lower_bound(last.begin(), last.end(), t.tid(),
                                         [](const resource_thread& f, pid_t tid) { return f.id < tid; });
        if (it == last.end() || it->id != t.tid() || it->start_ticks != t.identity.start_ticks ||
            pe.thread_cpu_last[static_cast<std::size_t>(it - last.begin())] != cpu) {
            if (t.counters) known_buf_.push_back(known_thread(t));
            continue;
        }
        idle_buf_.push_back(*it);
        idle_buf_.back().name = std::string(t.name.view());  // another thread may have renamed it
    }
    if (!idle_buf_.empty()) o.idle_threads = &idle_buf_;
    if (!known_buf_.empty()) o.known_threads = &known_buf_;
    return o;
}

void member_reader::remember(const snapshot& cur, const snapshot_process& p, pe_proc& pe,
                             const result<process_resources>& r, bool read_threads, const resource_options& asked) {
    const bool read_pss = has(asked.families, resource_family::proportional);
    if (read_pss) pe.smaps_at = std::chrono::steady_clock::now();
    std::optional<resource_proportional> kept;
    if (!read_pss && pe.files) kept = pe.files->proportional;
    if (r) {
        pe.files = *r;
        if (!read_pss) pe.files->proportional = kept;  // its last Pss stands until the next is due
    } else {
        pe.files.reset();
    }
    pe.files_cpu = nanoseconds{exact_total(p.times)};
    if (!read_threads || !r) return;
    // Each thread with the CPU total this snapshot gave it (before the read).
    const auto threads = cur.threads_of(p);
    pe.thread_files_last = r->threads;  // sorted by id
    pe.thread_cpu_last.clear();
    for (const resource_thread& f : pe.thread_files_last) {
        const auto it = std::lower_bound(threads.begin(), threads.end(), f.id,
                                         [](const snapshot_thread& t, pid_t tid) { return t.tid() < tid; });
        pe.thread_cpu_last.push_back(it != threads.end() && it->tid() == f.id &&
                                             it->identity.start_ticks == f.start_ticks
                                         ? exact_total(it->times)
                                         : -1);
    }
    pe.files->threads.clear();  // kept once, in thread_files_last
}

bool member_reader::pss_due(const snapshot_process& p, const pe_proc& pe) const {
    // A kernel thread has no memory map: its smaps_rollup is refused (ESRCH)
    // at every read, so it is not read (update counts it missing).
    if (p.kernel_thread) return false;
    const bool have_pss = pe.files && pe.files->proportional;
    return opts_.gather_smaps && (!have_pss || std::chrono::steady_clock::now() - pe.smaps_at >= smaps_refresh);
}

void member_reader::begin_collection() {
    // sysinfo's total counts every swap area in use (and one being turned
    // off); with none, no page of any process is swapped out.
    struct sysinfo si {};
    no_swap_ = ::sysinfo(&si) == 0 && si.totalswap == 0;
}

void member_reader::update(const snapshot& snap, const snapshot_process& p, pe_proc& pe, pe_group& gp) {
    const nanoseconds total = p.times.user + p.times.kernel;
    // A process whose CPU total (1 ns) has not moved ran no thread: no thread
    // switched, faulted or did I/O, so its thread files need no new read.
    const nanoseconds res = p.times.precision.total_resolution;
    const bool idle = pe.have && res > nanoseconds{0} && res <= std::chrono::microseconds(1) && total == pe.cpu_at_read;
    const bool thread_families = opts_.threads && p.thread_entries >= 2;
    const bool multi = p.thread_count > 1 || thread_families;
    const bool read_threads = multi && !idle;
    // Nor has any file of it changed when, besides, the walk read its
    // memory as the last read found it (no page reclaimed or swapped out
    // meanwhile): that read stands, and nothing is read (its Pss aside, when
    // due). Its open files' limit, which another process can set
    // (prlimit(1)), is the walk's. A kernel thread has no address space, so
    // no memory for the walk to read: its stat says none.
    const bool same_memory =
        pe.files && (p.memory ? pe.files->memory == p.memory : p.kernel_thread && pe.files->memory == process_memory{});
    const bool unchanged =
        idle && same_memory && p.open_files_limit && pe.files->thread_count == p.thread_count && !pss_due(p, pe);
    result<process_resources> got = errc::no_such_process;
    if (unchanged) {
        got = *pe.files;
        got->open_files_limit = p.open_files_limit;
    } else {
        const resource_options asked = read_options(snap, p, pe, read_threads);
        got = read_process_resources(p.pid(), asked);
        remember(snap, p, pe, got, read_threads, asked);
    }
    if (!got) {
        // Ended while being read: nothing of it is added; else unreadable.
        ++(got.error() == errc::no_such_process ? partial_errors_ : procread_errors_);
        return;
    }
    const process_resources& r = *got;
    // A kernel thread's proportional memory is missing as a read of its
    // smaps_rollup would find it (pss_due), a partial read as
    // process-exporter counts it.
    const bool pss_missing = p.kernel_thread && opts_.gather_smaps;
    if (r.missing != resource_family::none || pss_missing) ++partial_errors_;

    // Gauges of this collection.
    if (r.memory) {
        gp.resident = add_sat(gp.resident, r.memory->resident_bytes);
        gp.virtual_bytes = add_sat(gp.virtual_bytes, r.memory->virtual_bytes);
        gp.swapped = add_sat(gp.swapped, r.memory->swap_bytes);
    }
    if (const auto& pss = pe.files->proportional) {  // read now, or its last (remember)
        gp.pss = add_sat(gp.pss, pss->pss_bytes);
        gp.swap_pss = add_sat(gp.swap_pss, pss->swap_pss_bytes);
    }
    if (r.open_files) {
        gp.open_fds = add_sat(gp.open_fds, *r.open_files);
        if (r.open_files_limit) {
            // open / soft limit, as process-exporter divides (an unlimited limit: ~0).
            const double ratio = static_cast<double>(*r.open_files) / static_cast<double>(*r.open_files_limit);
            if (!std::isnan(ratio) && ratio > gp.worst_fd_ratio) gp.worst_fd_ratio = ratio;
        }
    }
    ++gp.states[state_index(r.state)];
    if (thread_families)
        for (const auto& t : snap.threads_of(p)) ++gp.states[state_index(t.state)];

    // Counters of the whole process: faults and I/O include its ended threads.
    pe_counters cur = pe.last;
    cur.minor_faults = r.minor_faults;
    cur.major_faults = r.major_faults;
    if (r.io) {
        cur.read_bytes = r.io->read_bytes;
        cur.write_bytes = r.io->write_bytes;
    }
    const pe_counters before = pe.have ? pe.last : pe_counters{};
    gp.total.minor_faults = add_sat(gp.total.minor_faults, grown(cur.minor_faults, before.minor_faults));
    gp.total.major_faults = add_sat(gp.total.major_faults, grown(cur.major_faults, before.major_faults));
    if (r.io) {
        const pe_counters io_before = pe.have_io ? pe.last : pe_counters{};
        gp.total.read_bytes = add_sat(gp.total.read_bytes, grown(cur.read_bytes, io_before.read_bytes));
        gp.total.write_bytes = add_sat(gp.total.write_bytes, grown(cur.write_bytes, io_before.write_bytes));
        pe.have_io = true;
    }

    // Context switches are per thread in /proc: the process's are its
    // threads' (a single-threaded process: its status), each thread adding
    // what it grew by since its last read, so a thread that ends takes
    // nothing back.
    std::map<pid_t, pe_thread> now;
    bool took_threads = false;
    const resource_switches sw = r.switches.value_or(resource_switches{});
    if (!multi) {
        pe_thread t;
        t.start_ticks = p.identity.start_ticks;
        t.c.voluntary = sw.voluntary;
        t.c.nonvoluntary = sw.involuntary;
        if (const auto it = pe.threads.find(p.pid()); it != pe.threads.end() && it->second.start_ticks == t.start_ticks)
            t.c.read_bytes = it->second.c.read_bytes, t.c.write_bytes = it->second.c.write_bytes,
            t.c.minor_faults = it->second.c.minor_faults, t.c.major_faults = it->second.c.major_faults,
            t.user = it->second.user, t.system = it->second.system;
        now.emplace(p.pid(), t);
        took_threads = true;
    } else if (read_threads && !pe.thread_files_last.empty()) {
        for (const resource_thread& f : pe.thread_files_last) {
            pe_thread t;
            t.start_ticks = f.start_ticks;
            const resource_switches tsw = f.switches.value_or(resource_switches{});
            t.c.voluntary = tsw.voluntary;
            t.c.nonvoluntary = tsw.involuntary;
            t.c.minor_faults = f.minor_faults;
            t.c.major_faults = f.major_faults;
            t.user = ticks_to_ns(f.user_ticks);
            t.system = ticks_to_ns(f.system_ticks);
            t.wchan = f.wait_channel.value_or(std::string());
            const auto old = pe.threads.find(f.id);
            const bool known = old != pe.threads.end() && old->second.start_ticks == f.start_ticks;
            if (f.io) {
                t.c.read_bytes = f.io->read_bytes;
                t.c.write_bytes = f.io->write_bytes;
            } else if (known) {
                t.c.read_bytes = old->second.c.read_bytes;
                t.c.write_bytes = old->second.c.write_bytes;
            }
            if (thread_families) {
                const pe_thread b = known ? old->second : pe_thread{};
                pe_thread_name& n = gp.threads[f.name];
                n.user += t.user > b.user ? t.user - b.user : nanoseconds{0};
                n.system += t.system > b.system ? t.system - b.system : nanoseconds{0};
                n.c.read_bytes = add_sat(n.c.read_bytes, grown(t.c.read_bytes, b.c.read_bytes));
                n.c.write_bytes = add_sat(n.c.write_bytes, grown(t.c.write_bytes, b.c.write_bytes));
                n.c.minor_faults = add_sat(n.c.minor_faults, grown(t.c.minor_faults, b.c.minor_faults));
                n.c.major_faults = add_sat(n.c.major_faults, grown(t.c.major_faults, b.c.major_faults));
                n.c.voluntary = add_sat(n.c.voluntary, grown(t.c.voluntary, b.c.voluntary));
                n.c.nonvoluntary = add_sat(n.c.nonvoluntary, grown(t.c.nonvoluntary, b.c.nonvoluntary));
            }
            now.emplace(f.id, t);
        }
        took_threads = true;
    }
    if (took_threads) {
        for (const auto& [tid, t] : now) {
            const auto old = pe.threads.find(tid);
            const bool known = old != pe.threads.end() && old->second.start_ticks == t.start_ticks;
            gp.total.voluntary = add_sat(gp.total.voluntary, grown(t.c.voluntary, known ? old->second.c.voluntary : 0));
            gp.total.nonvoluntary =
                add_sat(gp.total.nonvoluntary, grown(t.c.nonvoluntary, known ? old->second.c.nonvoluntary : 0));
        }
        pe.threads = std::move(now);
        pe.cpu_at_read = total;
    }
    // Thread counts by name come from the snapshot's thread walk (no read).
    if (thread_families)
        for (const auto& t : snap.threads_of(p)) ++gp.threads[std::string(t.name.view())].count;
    // threads_wchan: the process's wchan (its main thread's), and with
    // --threads each thread's as well (the main thread again), as
    // process-exporter counts; a thread not reread has not run since, so it
    // still waits where it did.
    if (r.wait_channel && !r.wait_channel->empty()) ++gp.wchans[*r.wait_channel];
    if (thread_families)
        for (const auto& [tid, t] : pe.threads)
            if (!t.wchan.empty()) ++gp.wchans[t.wchan];

    pe.last = cur;
    pe.have = true;
}

}  // namespace proctimes::cli::serve
