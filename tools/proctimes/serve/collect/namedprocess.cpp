// SPDX-License-Identifier: MIT
// `serve --namedprocess`: process-exporter's families (names, labels, types
// and meanings of ncabatoff/process-exporter 0.7.10, docs/SERVE.md), from the
// per-process files each needs, read once per process per collection.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "proctimes/version.hpp"
#include "serve/collect/arith.hpp"
#include "serve/collect/collector.hpp"
#include "serve/collect/selfmetrics.hpp"

namespace proctimes::cli::serve {
namespace {

using std::chrono::nanoseconds;

// Go's name of the architecture this was built for (process-exporter's goarch label).
#if defined(__x86_64__)
constexpr const char* build_arch = "amd64";
#elif defined(__aarch64__)
constexpr const char* build_arch = "arm64";
#elif defined(__i386__)
constexpr const char* build_arch = "386";
#elif defined(__arm__)
constexpr const char* build_arch = "arm";
#else
constexpr const char* build_arch = "";
#endif

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

}  // namespace

void collector::update_namedprocess(const snapshot_process& p, proc_state& st, group_state& g) {
    pe_proc& pe = st.pe;
    const nanoseconds total = p.times.user + p.times.kernel;
    // A process whose CPU total (1 ns) has not moved ran no thread: no thread
    // switched, faulted or did I/O, so its thread files need no new read.
    const nanoseconds res = p.times.precision.total_resolution;
    const bool idle = pe.have && res > nanoseconds{0} && res <= std::chrono::microseconds(1) && total == pe.cpu_at_read;
    const bool thread_families = opts_.threads && p.thread_entries >= 2;
    const bool multi = p.thread_count > 1 || thread_families;
    const bool read_threads = multi && !idle;
    const resource_options asked = pe_read_options(p, pe, read_threads);
    const result<process_resources> got = read_process_resources(p.pid(), asked);
    pe_remember(p, pe, got, read_threads, asked);
    if (!got) {
        // Ended while being read: nothing of it is added; else unreadable.
        ++(got.error() == errc::no_such_process ? pe_partial_errors_ : pe_procread_errors_);
        return;
    }
    const process_resources& r = *got;
    if (r.missing != resource_family::none) ++pe_partial_errors_;

    // Gauges of this collection.
    pe_group& gp = g.pe;
    if (r.memory) {
        gp.resident = add_sat(gp.resident, r.memory->resident_bytes);
        gp.virtual_bytes = add_sat(gp.virtual_bytes, r.memory->virtual_bytes);
        gp.swapped = add_sat(gp.swapped, r.memory->swap_bytes);
    }
    if (r.proportional) {
        gp.pss = add_sat(gp.pss, r.proportional->pss_bytes);
        gp.swap_pss = add_sat(gp.swap_pss, r.proportional->swap_pss_bytes);
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
        for (const auto& t : cur_.threads_of(p)) ++gp.states[state_index(t.state)];

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
        for (const auto& t : cur_.threads_of(p)) ++gp.threads[std::string(t.name.view())].count;
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

void collector::namedprocess_families(std::vector<family>& out) const {
    const auto counter = metric_type::counter;
    const auto gauge = metric_type::gauge;
    auto cpu = family_of("namedprocess_namegroup_cpu_seconds", "Cpu user usage in seconds", counter);
    auto procs = family_of("namedprocess_namegroup_num_procs", "number of processes in this group", gauge);
    auto threads = family_of("namedprocess_namegroup_num_threads", "Number of threads", gauge);
    auto oldest = family_of("namedprocess_namegroup_oldest_start_time_seconds",
                            "start time in seconds since 1970/01/01 of oldest process in group", gauge);
    auto mem = family_of("namedprocess_namegroup_memory_bytes", "number of bytes of memory in use", gauge);
    auto rd = family_of("namedprocess_namegroup_read_bytes", "number of bytes read by this group", counter);
    auto wr = family_of("namedprocess_namegroup_write_bytes", "number of bytes written by this group", counter);
    auto maj = family_of("namedprocess_namegroup_major_page_faults", "Major page faults", counter);
    auto min = family_of("namedprocess_namegroup_minor_page_faults", "Minor page faults", counter);
    auto cs = family_of("namedprocess_namegroup_context_switches", "Context switches", counter);
    auto fds =
        family_of("namedprocess_namegroup_open_filedesc", "number of open file descriptors for this group", gauge);
    auto ratio =
        family_of("namedprocess_namegroup_worst_fd_ratio",
                  "the worst (closest to 1) ratio between open fds and max fds among all procs in this group", gauge);
    auto states = family_of("namedprocess_namegroup_states",
                            "Number of processes in states Running, Sleeping, Waiting, Zombie, or Other", gauge);
    auto wchan = family_of("namedprocess_namegroup_threads_wchan",
                           "Number of threads in this group waiting on each wchan", gauge);
    auto tcount =
        family_of("namedprocess_namegroup_thread_count", "Number of threads in this group with same threadname", gauge);
    auto tcpu = family_of("namedprocess_namegroup_thread_cpu_seconds", "Cpu user/system usage in seconds", counter);
    auto tio =
        family_of("namedprocess_namegroup_thread_io_bytes", "number of bytes read/written by these threads", counter);
    auto tmaj =
        family_of("namedprocess_namegroup_thread_major_page_faults", "Major page faults for these threads", counter);
    auto tmin =
        family_of("namedprocess_namegroup_thread_minor_page_faults", "Minor page faults for these threads", counter);
    auto tcs =
        family_of("namedprocess_namegroup_thread_context_switches", "Context switches for these threads", counter);
    static constexpr const char* state_names[5] = {"Running", "Sleeping", "Waiting", "Zombie", "Other"};
    const auto u = [](std::uint64_t v) { return static_cast<double>(v); };
    for (const auto& [group_name, g] : groups_) {
        const std::string& name = group_name;  // a variable lambdas can capture
        const pe_group& p = g.pe;
        using labels = std::vector<std::pair<std::string, std::string>>;
        const labels gl{{"groupname", name}};
        const auto with = [&name](const char* k, const char* v) { return labels{{"groupname", name}, {k, v}}; };
        cpu.samples.push_back({with("mode", "user"), seconds(g.user)});
        cpu.samples.push_back({with("mode", "system"), seconds(g.system)});
        procs.samples.push_back({gl, u(g.procs)});
        threads.samples.push_back({gl, u(g.threads)});
        if (g.procs > 0) oldest.samples.push_back({gl, g.oldest});
        mem.samples.push_back({with("memtype", "resident"), u(p.resident)});
        mem.samples.push_back({with("memtype", "virtual"), u(p.virtual_bytes)});
        mem.samples.push_back({with("memtype", "swapped"), u(p.swapped)});
        if (opts_.gather_smaps) {
            mem.samples.push_back({with("memtype", "proportionalResident"), u(p.pss)});
            mem.samples.push_back({with("memtype", "proportionalSwapped"), u(p.swap_pss)});
        }
        rd.samples.push_back({gl, u(p.total.read_bytes)});
        wr.samples.push_back({gl, u(p.total.write_bytes)});
        maj.samples.push_back({gl, u(p.total.major_faults)});
        min.samples.push_back({gl, u(p.total.minor_faults)});
        cs.samples.push_back({with("ctxswitchtype", "voluntary"), u(p.total.voluntary)});
        cs.samples.push_back({with("ctxswitchtype", "nonvoluntary"), u(p.total.nonvoluntary)});
        fds.samples.push_back({gl, u(p.open_fds)});
        ratio.samples.push_back({gl, p.worst_fd_ratio});
        for (int i = 0; i < 5; ++i) states.samples.push_back({with("state", state_names[i]), u(p.states[i])});
        for (const auto& [w, n] : p.wchans) wchan.samples.push_back({with("wchan", w.c_str()), u(n)});
        if (!opts_.threads) continue;
        for (const auto& [thread_name, t] : p.threads) {
            const std::string& tname = thread_name;
            if (t.count == 0) continue;  // as process-exporter: names with a thread now
            const auto tl = [&](const char* k, const char* v) {
                labels l{{"groupname", name}, {"threadname", tname}};
                if (k) l.emplace_back(k, v);
                return l;
            };
            tcount.samples.push_back({tl(nullptr, nullptr), u(t.count)});
            tcpu.samples.push_back({tl("mode", "user"), seconds(t.user)});
            tcpu.samples.push_back({tl("mode", "system"), seconds(t.system)});
            tio.samples.push_back({tl("iomode", "read"), u(t.c.read_bytes)});
            tio.samples.push_back({tl("iomode", "write"), u(t.c.write_bytes)});
            tmaj.samples.push_back({tl(nullptr, nullptr), u(t.c.major_faults)});
            tmin.samples.push_back({tl(nullptr, nullptr), u(t.c.minor_faults)});
            tcs.samples.push_back({tl("ctxswitchtype", "voluntary"), u(t.c.voluntary)});
            tcs.samples.push_back({tl("ctxswitchtype", "nonvoluntary"), u(t.c.nonvoluntary)});
        }
    }
    for (auto* f : {&cpu, &procs, &threads, &oldest, &mem, &rd, &wr, &maj, &min, &cs, &fds, &ratio, &states, &wchan})
        out.push_back(std::move(*f));
    if (opts_.threads)
        for (auto* f : {&tcount, &tcpu, &tio, &tmaj, &tmin, &tcs}) out.push_back(std::move(*f));

    // The exporter's error counters, named without _total as process-exporter's are.
    const std::pair<const char*, std::pair<const char*, std::uint64_t>> errors[] = {
        {"namedprocess_scrape_errors", {"general scrape errors: no proc metrics collected during a cycle", failures_}},
        {"namedprocess_scrape_procread_errors",
         {"incremented each time a proc's metrics collection fails", pe_procread_errors_}},
        {"namedprocess_scrape_partial_errors",
         {"incremented each time a tracked proc's metrics collection fails partially, e.g. unreadable I/O stats",
          pe_partial_errors_}},
    };
    for (const auto& [n, hv] : errors) {
        auto f = family_of(n, hv.first, counter);
        f.bare_counter = true;
        f.samples.push_back({{}, u(hv.second)});
        out.push_back(std::move(f));
    }
    auto info = family_of("process_exporter_build_info",
                          "A metric with a constant '1' value labeled by version, revision, branch, goversion from "
                          "which process_exporter was built, and the goos and goarch for the build.",
                          gauge);
    info.samples.push_back({{{"branch", ""},
                             {"goarch", build_arch},
                             {"goos", "linux"},
                             {"goversion", ""},
                             {"revision", ""},
                             {"version", "proctimes " PROCTIMES_VERSION_STRING}},
                            1});
    out.push_back(std::move(info));
    self_process_families(out);  // the Go client's process_* metrics, which process-exporter serves
}

}  // namespace proctimes::cli::serve
