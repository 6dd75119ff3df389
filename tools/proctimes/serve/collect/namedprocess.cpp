// SPDX-License-Identifier: MIT
// `serve --namedprocess`: process-exporter's families (names, labels, types
// and meanings of ncabatoff/process-exporter 0.7.10, docs/SERVE.md), from the
// groups member_reader (member_reader.hpp) fills, read once per process per
// collection.
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

}  // namespace

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
    for (const auto& [group_name, g] : membership_.groups()) {
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
        {"namedprocess_scrape_errors",
         {"general scrape errors: no proc metrics collected during a cycle", cache_.account().failures}},
        {"namedprocess_scrape_procread_errors",
         {"incremented each time a proc's metrics collection fails", members_.procread_errors()}},
        {"namedprocess_scrape_partial_errors",
         {"incremented each time a tracked proc's metrics collection fails partially, e.g. unreadable I/O stats",
          members_.partial_errors()}},
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
