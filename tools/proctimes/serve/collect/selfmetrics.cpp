// SPDX-License-Identifier: MIT
// The exporter's own process_* metrics, with the names, types and help texts
// of the Prometheus Go client's process collector (which process-exporter
// serves), and its semantics: CPU and memory from the exporter's own process
// files (read_process_resources, the reader of every other process), the limits
// from getrlimit, the start from the boot second and the start tick.
#include <sys/resource.h>
#include <unistd.h>

#include "commands.hpp"
#include "proctimes/process.hpp"
#include "proctimes/resources.hpp"
#include "serve/collect/exposition.hpp"
#include "serve/collect/selfmetrics.hpp"
#include "serve/pe/grouping.hpp"

namespace proctimes::cli::serve {
namespace {

// A soft limit as the Go client reports it: "unlimited" is 2^64-1.
double soft_limit(int resource) {
    rlimit r{};
    if (::getrlimit(resource, &r) != 0) return -1;
    return r.rlim_cur == RLIM_INFINITY ? 18446744073709551615.0 : static_cast<double>(r.rlim_cur);
}

}  // namespace

void self_process_families(std::vector<family>& out) {
    auto self = process::open_self();
    if (!self) return;
    // The exporter's own files are those of the live table, whatever
    // --proc-root says.
    const std::string root = default_proc_root();
    resource_options o;
    o.proc_root = root;
    o.start_ticks = self->identity().start_ticks;
    o.families = resource_family::memory | resource_family::files;
    const auto f = read_process_resources(::getpid(), o);
    if (!f || !f->memory) return;
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    using mt = metric_type;
    auto one = [&](const char* name, const char* help, mt type, double v) {
        if (v < 0) return;
        auto fam = family_of(name, help, type);
        fam.samples.push_back({{}, v});
        out.push_back(std::move(fam));
    };
    one("process_cpu_seconds", "Total user and system CPU time spent in seconds.", mt::counter,
        static_cast<double>(f->user_ticks + f->system_ticks) / tick);
    // Less the reader's own descriptor of the process's directory.
    one("process_open_fds", "Number of open file descriptors.", mt::gauge,
        f->open_files && *f->open_files > 0 ? static_cast<double>(*f->open_files - 1) : -1);
    one("process_max_fds", "Maximum number of open file descriptors.", mt::gauge, soft_limit(RLIMIT_NOFILE));
    one("process_virtual_memory_bytes", "Virtual memory size in bytes.", mt::gauge,
        static_cast<double>(f->memory->virtual_bytes));
    one("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", mt::gauge,
        soft_limit(RLIMIT_AS));
    one("process_resident_memory_bytes", "Resident memory size in bytes.", mt::gauge,
        static_cast<double>(f->memory->resident_bytes));
    if (const auto boot = read_boot_seconds(root))
        one("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", mt::gauge,
            static_cast<double>(*boot) + static_cast<double>(f->start_ticks) / tick);
}

}  // namespace proctimes::cli::serve
