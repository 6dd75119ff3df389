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
        const auto one = [&name](family& f, double v) { f.add({{"groupname", name}}, v); };
        const auto with = [&name](family& f, const char* k, std::string_view v, double x) {
            f.add({{"groupname", name}, {k, v}}, x);
        };
        with(cpu, "mode", "user", seconds(g.user));
        with(cpu, "mode", "system", seconds(g.system));
        one(procs, u(g.procs));
        one(threads, u(g.threads));
        if (g.procs > 0) one(oldest, g.oldest);
        with(mem, "memtype", "resident", u(p.resident));
        with(mem, "memtype", "virtual", u(p.virtual_bytes));
        with(mem, "memtype", "swapped", u(p.swapped));
        if (opts_.gather_smaps) {
            with(mem, "memtype", "proportionalResident", u(p.pss));
            with(mem, "memtype", "proportionalSwapped", u(p.swap_pss));
        }
        one(rd, u(p.total.read_bytes));
        one(wr, u(p.total.write_bytes));
        one(maj, u(p.total.major_faults));
        one(min, u(p.total.minor_faults));
        with(cs, "ctxswitchtype", "voluntary", u(p.total.voluntary));
        with(cs, "ctxswitchtype", "nonvoluntary", u(p.total.nonvoluntary));
        one(fds, u(p.open_fds));
        one(ratio, p.worst_fd_ratio);
        for (int i = 0; i < 5; ++i) with(states, "state", state_names[i], u(p.states[i]));
        for (const auto& [w, n] : p.wchans) with(wchan, "wchan", w, u(n));
        if (!opts_.threads) continue;
        for (const auto& [thread_name, t] : p.threads) {
            const std::string& tname = thread_name;
            if (t.count == 0) continue;  // as process-exporter: names with a thread now
            const auto one_t = [&](family& f, double v) { f.add({{"groupname", name}, {"threadname", tname}}, v); };
            const auto with_t = [&](family& f, const char* k, const char* v, double x) {
                f.add({{"groupname", name}, {"threadname", tname}, {k, v}}, x);
            };
            one_t(tcount, u(t.count));
            with_t(tcpu, "mode", "user", seconds(t.user));
            with_t(tcpu, "mode", "system", seconds(t.system));
            with_t(tio, "iomode", "read", u(t.c.read_bytes));
            with_t(tio, "iomode", "write", u(t.c.write_bytes));
            one_t(tmaj, u(t.c.major_faults));
            one_t(tmin, u(t.c.minor_faults));
            with_t(tcs, "ctxswitchtype", "voluntary", u(t.c.voluntary));
            with_t(tcs, "ctxswitchtype", "nonvoluntary", u(t.c.nonvoluntary));
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
        f.add({}, u(hv.second));
        out.push_back(std::move(f));
    }
    auto info = family_of("process_exporter_build_info",
                          "A metric with a constant '1' value labeled by version, revision, branch, goversion from "
                          "which process_exporter was built, and the goos and goarch for the build.",
                          gauge);
    info.add({{"branch", ""},
              {"goarch", build_arch},
              {"goos", "linux"},
              {"goversion", ""},
              {"revision", ""},
              {"version", "proctimes " PROCTIMES_VERSION_STRING}},
             1);
    out.push_back(std::move(info));
    self_process_families(out);  // the Go client's process_* metrics, which process-exporter serves
}

}  // namespace proctimes::cli::serve
