// SPDX-License-Identifier: MIT
// The exporter's own process_* metrics, with the names, types and help texts
// of the Prometheus Go client's process collector (which process-exporter
// serves): read from /proc/self as that collector reads them.
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include <dirent.h>

#include "fd.hpp"
#include "serve/exposition.hpp"
#include "serve/selfmetrics.hpp"

namespace proctimes::cli::serve {
namespace {

std::string slurp(const char* path) {
    std::string s;
    if (detail::read_file(path, s, std::size_t{1} << 16)) return {};
    return s;
}

// The soft limit of a "Max ..." row of /proc/self/limits; "unlimited" is
// 2^64-1, as the Go client reads it. Negative when absent.
double soft_limit(const std::string& limits, const std::string& row) {
    const auto at = limits.find(row);
    if (at == std::string::npos) return -1;
    std::istringstream in(limits.substr(at + row.size()));
    std::string soft;
    in >> soft;
    if (soft == "unlimited") return 18446744073709551615.0;
    char* end = nullptr;
    const double v = std::strtod(soft.c_str(), &end);
    return end != soft.c_str() ? v : -1;
}

double open_fds() {
    DIR* d = ::opendir("/proc/self/fd");
    if (!d) return -1;
    double n = 0;
    while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    return n - 1;  // the directory's own descriptor
}

}  // namespace

void self_process_families(std::vector<family>& out) {
    const std::string stat = slurp("/proc/self/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return;
    std::istringstream in(stat.substr(close + 1));
    std::vector<std::string> f{"", "", ""};  // fields 1-2 (pid, comm) and a pad: f[n] is field n
    for (std::string t; in >> t;) f.push_back(t);
    if (f.size() < 25) return;
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
    auto num = [&](std::size_t i) { return std::strtod(f[i].c_str(), nullptr); };
    double btime = -1;
    {
        const std::string s = slurp("/proc/stat");
        if (const auto at = s.find("\nbtime "); at != std::string::npos)
            btime = std::strtod(s.c_str() + at + 7, nullptr);
    }
    const std::string limits = slurp("/proc/self/limits");
    using mt = metric_type;
    auto one = [&](const char* name, const char* help, mt type, double v) {
        if (v < 0) return;
        auto fam = family_of(name, help, type);
        fam.samples.push_back({{}, v});
        out.push_back(std::move(fam));
    };
    one("process_cpu_seconds", "Total user and system CPU time spent in seconds.", mt::counter,
        (num(14) + num(15)) / tick);
    one("process_open_fds", "Number of open file descriptors.", mt::gauge, open_fds());
    one("process_max_fds", "Maximum number of open file descriptors.", mt::gauge, soft_limit(limits, "Max open files"));
    one("process_virtual_memory_bytes", "Virtual memory size in bytes.", mt::gauge, num(23));
    one("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", mt::gauge,
        soft_limit(limits, "Max address space"));
    one("process_resident_memory_bytes", "Resident memory size in bytes.", mt::gauge, num(24) * page);
    if (btime >= 0)
        one("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", mt::gauge,
            btime + num(22) / tick);
}

}  // namespace proctimes::cli::serve
