// SPDX-License-Identifier: MIT
// The exporter's own process_* metrics, with the names, types and help texts
// of the Prometheus Go client's process collector (which process-exporter
// serves), and its semantics. Read every scrape, so read where it is cheap:
// CPU from getrusage (exact to the microsecond, where the client's
// /proc/self/stat gives 10 ms ticks), the sizes from statm, the descriptors
// from the size procfs gives the fd directory, the limits from getrlimit; the
// start (the boot second plus the start tick) once.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "parse/number.hpp"
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

// Virtual and resident size in bytes, from statm (pages): what stat's vsize
// and rss say.
struct sizes {
    double virtual_bytes = -1;
    double resident_bytes = -1;
};

sizes read_statm(const std::string& root) {
    sizes out;
    const int fd = ::open((root + "/self/statm").c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return out;
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n <= 0) return out;
    // "size resident shared text lib data dt\n": the first two, each a whole
    // number ended by a space.
    std::string_view text(buf, static_cast<std::size_t>(n));
    std::uint64_t pages[2] = {};
    for (std::uint64_t& v : pages) {
        const auto end = text.find(' ');
        const auto got = end == std::string_view::npos ? std::nullopt : parse::parse_whole_number(text.substr(0, end));
        if (!got) return out;
        v = *got;
        text.remove_prefix(end + 1);
    }
    const auto page = static_cast<double>(::sysconf(_SC_PAGESIZE));
    out.virtual_bytes = static_cast<double>(pages[0]) * page;
    out.resident_bytes = static_cast<double>(pages[1]) * page;
    return out;
}

// Open descriptors, less the reader's own: the size procfs gives fd/ (Linux
// 6.2 and later), else the count read_process_resources makes.
double open_fds(const std::string& root) {
    struct stat st {};
    if (::stat((root + "/self/fd").c_str(), &st) == 0 && st.st_size > 0) return static_cast<double>(st.st_size);
    resource_options o;
    o.proc_root = root;
    o.families = resource_family::files;
    const auto f = read_process_resources(::getpid(), o);
    if (!f || !f->open_files || *f->open_files == 0) return -1;
    return static_cast<double>(*f->open_files - 1);  // its descriptor of the process's directory
}

// The boot second plus the start tick, as the Go client computes it; kept
// once read, since neither moves.
std::optional<double> start_seconds(const std::string& root) {
    static std::mutex mu;  // collectors of different threads may ask at once
    static std::optional<double> at;
    const std::lock_guard lk(mu);
    if (at) return at;
    const auto self = process::open_self();
    const auto boot = read_boot_seconds(root);
    if (self && boot)
        at = static_cast<double>(*boot) +
             static_cast<double>(self->identity().start_ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
    return at;
}

}  // namespace

void self_process_families(std::vector<family>& out) {
    // The exporter's own files are those of the live table, whatever
    // --proc-root says.
    const std::string root = default_proc_root();
    rusage ru{};
    if (::getrusage(RUSAGE_SELF, &ru) != 0) return;
    const sizes mem = read_statm(root);
    if (mem.resident_bytes < 0) return;
    using mt = metric_type;
    auto one = [&](const char* name, const char* help, mt type, double v) {
        if (v < 0) return;
        auto fam = family_of(name, help, type);
        fam.add({}, v);
        out.push_back(std::move(fam));
    };
    auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    one("process_cpu_seconds", "Total user and system CPU time spent in seconds.", mt::counter,
        seconds(ru.ru_utime) + seconds(ru.ru_stime));
    one("process_open_fds", "Number of open file descriptors.", mt::gauge, open_fds(root));
    one("process_max_fds", "Maximum number of open file descriptors.", mt::gauge, soft_limit(RLIMIT_NOFILE));
    one("process_virtual_memory_bytes", "Virtual memory size in bytes.", mt::gauge, mem.virtual_bytes);
    one("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", mt::gauge,
        soft_limit(RLIMIT_AS));
    one("process_resident_memory_bytes", "Resident memory size in bytes.", mt::gauge, mem.resident_bytes);
    if (const auto at = start_seconds(root))
        one("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", mt::gauge, *at);
}

}  // namespace proctimes::cli::serve
