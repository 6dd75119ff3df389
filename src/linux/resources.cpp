// SPDX-License-Identifier: MIT
// The Linux backend's per-process resources (backend/backend.hpp;
// proctimes/resources.hpp): <proc_root>/<pid>'s files, each read at most
// once through one descriptor of the process's directory, parsed by
// src/parse/procfs.hpp (stat, status) and src/parse/resources.hpp.
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "backend/backend.hpp"
#include "linux/sys.hpp"
#include "parse/procfs.hpp"
#include "parse/resources.hpp"

namespace proctimes::inline v1::detail {
namespace {

constexpr long proc_super_magic = 0x9fa0;
constexpr std::uint64_t u64_max = UINT64_MAX;

// A small /proc file relative to a directory descriptor: its text, or the errno.
class file_reader {
public:
    file_reader(int dirfd, bool procfs) noexcept : dirfd_(dirfd), procfs_(procfs) {}
    // 0 and the text in view(), or the errno.
    int read(const char* path) noexcept {
        const unique_fd fd(open_read(dirfd_, path, 0, procfs_));
        if (!fd) return errno;
        const ssize_t n = pread_small(fd.get(), buf_, sizeof buf_);
        if (n < 0) return errno;
        len_ = static_cast<std::size_t>(n);
        return 0;
    }
    [[nodiscard]] std::string_view view() const noexcept { return {buf_, len_}; }
    [[nodiscard]] int dirfd() const noexcept { return dirfd_; }
    [[nodiscard]] bool procfs() const noexcept { return procfs_; }

private:
    int dirfd_;
    bool procfs_;
    char buf_[16384];
    std::size_t len_ = 0;
};

// A file of any length relative to dirfd, at most `cap` bytes of it; false
// when it cannot be opened or a read fails.
bool read_whole(int dirfd, const char* path, bool procfs, std::size_t cap, std::string& out) {
    out.clear();
    const unique_fd fd(open_read(dirfd, path, 0, procfs));
    if (!fd) return false;
    char buf[4096];
    while (out.size() < cap) {
        const ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, cap - out.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

bool gone(int err) noexcept { return err == ENOENT || err == ESRCH; }

std::error_code read_error(int err) noexcept {
    if (gone(err)) return make_error_code(errc::no_such_process);
    return file_error(err);
}

// Calls each(name) for every entry of `path` (relative to dirfd) but "." and
// "..". 0, or the errno of opening or reading it. The entries are read with
// getdents64 on the descriptor itself: a DIR stream would first stat it and
// set its flags again, three more calls for each thread list of a member.
template <typename F>
int list_dir(int dirfd, const char* path, F&& each) noexcept {
    const unique_fd fd(::openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY));
    if (!fd) return errno;
    alignas(dirent64) char buf[8192];
    for (;;) {
        const ssize_t n = ::getdents64(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return 0;
        for (ssize_t at = 0; at < n;) {
            const auto* e = reinterpret_cast<const dirent64*>(buf + at);
            const std::string_view name(e->d_name);
            if (name != "." && name != "..") each(name);
            at += e->d_reclen;
        }
    }
}

// Open descriptors: the size procfs reports for fd/ (Linux 6.2 and later),
// else its entries counted.
std::optional<std::uint64_t> count_fds(int dirfd, bool procfs) noexcept {
    struct stat st {};
    if (::fstatat(dirfd, "fd", &st, 0) != 0) return std::nullopt;
    if (procfs && st.st_size > 0) return static_cast<std::uint64_t>(st.st_size);
    std::uint64_t n = 0;
    if (list_dir(dirfd, "fd", [&n](std::string_view) { ++n; }) != 0) return std::nullopt;
    return n;
}

// Whether <proc_root>'s pids are this process's: it is procfs and its "self"
// names this process (not a procfs of another pid namespace). The live /proc
// is checked once.
bool pids_are_ours(const std::string& proc_root) noexcept {
    const auto check = [](const std::string& root) noexcept {
        char link[32] = {};
        const ssize_t n = ::readlink((root + "/self").c_str(), link, sizeof link - 1);
        return n > 0 && std::string_view(link, static_cast<std::size_t>(n)) == std::to_string(::getpid());
    };
    if (proc_root == "/proc") {
        // fork keeps the answer right: a child's /proc/self is its own pid.
        static const pid_t checked_by = ::getpid();
        static const bool ours = check(proc_root);
        return checked_by == ::getpid() ? ours : check(proc_root);
    }
    return check(proc_root);
}

void fill_task(resource_task& t, const parse::stat_record& st) {
    t.start_ticks = st.starttime;
    t.name.assign(st.comm);
    t.state = st.state;
    t.user_ticks = st.utime;
    t.system_ticks = st.stime;
    t.minor_faults = st.minflt;
    t.major_faults = st.majflt;
}

std::optional<resource_io> io_of(std::string_view text) {
    const auto r = parse::parse_io(text);
    if (!r) return std::nullopt;
    return resource_io{r->read_bytes,  r->write_bytes,   r->read_chars,
                       r->write_chars, r->read_syscalls, r->write_syscalls};
}

// Each thread of the process into out.threads (sorted by tid).
void read_threads(file_reader& f, const resource_options& o, process_resources& out) {
    std::vector<pid_t> tids;
    const int lerr = list_dir(f.dirfd(), "task", [&tids](std::string_view name) {
        if (const auto t = parse::parse_id(name); t && *t > 0 && *t <= pid_max_limit)
            tids.push_back(static_cast<pid_t>(*t));
    });
    if (lerr != 0) out.missing |= resource_family::threads;
    std::sort(tids.begin(), tids.end());
    const bool with_io = has(o.families, resource_family::thread_io);
    std::string base;
    for (const pid_t tid : tids) {
        if (o.idle_threads) {
            const auto& idle = *o.idle_threads;
            const auto it = std::lower_bound(idle.begin(), idle.end(), tid,
                                             [](const resource_thread& t, pid_t id) { return t.id < id; });
            if (it != idle.end() && it->id == tid) {
                out.threads.push_back(*it);  // it has not run since: its files are as they were
                continue;
            }
        }
        base = "task/" + std::to_string(tid) + "/";
        if (o.known_threads) {
            const auto& known = *o.known_threads;
            const auto it = std::lower_bound(known.begin(), known.end(), tid,
                                             [](const resource_thread& t, pid_t id) { return t.id < id; });
            if (it != known.end() && it->id == tid) {
                // Its counters were read with its CPU: only where it waits is not among them.
                resource_thread t = *it;
                if (with_io && f.read((base + "wchan").c_str()) == 0)
                    t.wait_channel = std::string(parse::parse_wchan(f.view()));
                out.threads.push_back(std::move(t));
                continue;
            }
        }
        if (f.read((base + "stat").c_str()) != 0) continue;  // it ended
        const auto ts = parse::parse_stat(f.view());
        if (!ts) {
            out.missing |= resource_family::threads;
            continue;
        }
        resource_thread t;
        t.id = tid;
        fill_task(t, *ts);
        if (f.read((base + "status").c_str()) != 0) continue;  // it ended
        const auto tst = parse::parse_status(f.view());
        if (!tst || !tst->voluntary_switches || !tst->nonvoluntary_switches) {
            out.missing |= resource_family::threads;
            continue;
        }
        t.switches = resource_switches{*tst->voluntary_switches, *tst->nonvoluntary_switches};
        if (with_io) {
            if (f.read((base + "io").c_str()) == 0) t.io = io_of(f.view());
            if (f.read((base + "wchan").c_str()) == 0) t.wait_channel = std::string(parse::parse_wchan(f.view()));
        }
        out.threads.push_back(std::move(t));
    }
}

result<process_resources> read_linux(pid_t pid, const resource_options& o) {
    const std::string dir = o.proc_root + "/" + std::to_string(pid);
    const unique_fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY));
    if (!d) return read_error(errno);
    struct statfs sfs {};
    const bool procfs = ::fstatfs(d.get(), &sfs) == 0 && sfs.f_type == proc_super_magic;
    const resource_family fam = o.families;
    // Asked before stat is read: the stat read through `d` after it proves
    // the pid still named this process when the kernel was asked.
    std::optional<std::uint64_t> kernel_fd_limit = o.known ? o.known->open_files_limit : std::nullopt;
    if (has(fam, resource_family::files) && !kernel_fd_limit && procfs && pids_are_ours(o.proc_root)) {
        rlimit lim{};
        if (::prlimit(pid, RLIMIT_NOFILE, nullptr, &lim) == 0)
            kernel_fd_limit = lim.rlim_cur == RLIM_INFINITY ? u64_max : static_cast<std::uint64_t>(lim.rlim_cur);
    }
    file_reader f(d.get(), procfs);
    if (const int err = f.read("stat"); err != 0) return read_error(err);
    const auto st = parse::parse_stat(f.view());
    if (!st || !st->vsize || !st->rss_pages) return errc::malformed_data;
    if (o.start_ticks && st->starttime != *o.start_ticks) return errc::no_such_process;  // the pid was reused

    process_resources r;
    r.id = pid;
    fill_task(r, *st);
    r.thread_count = st->num_threads;
    static const auto page = static_cast<std::uint64_t>(std::max(1L, ::sysconf(_SC_PAGESIZE)));
    const std::uint64_t resident =
        *st->rss_pages > u64_max / page ? u64_max : *st->rss_pages * page;  // saturates, as the kernel cannot

    // A process that has not run since `was` was read: what only its running
    // changes stands.
    const process_resources* was = o.previous;
    const bool idle = was && was->user_ticks == r.user_ticks && was->system_ticks == r.system_ticks &&
                      was->minor_faults == r.minor_faults && was->major_faults == r.major_faults &&
                      was->thread_count == r.thread_count && was->start_ticks == r.start_ticks;
    const bool same_pages =
        idle && was->memory && was->memory->resident_bytes == resident && was->memory->virtual_bytes == *st->vsize;

    const bool want_status =
        has(fam, resource_family::memory) || has(fam, resource_family::switches) || has(fam, resource_family::owner);
    const resource_known* known = o.known;
    if (want_status) {
        std::optional<std::uint64_t> swap;
        // A process that has not run has changed neither its switches nor its ids.
        if (known && (known->swap_bytes || !has(fam, resource_family::memory)) &&
            (known->switches || !has(fam, resource_family::switches)) && !has(fam, resource_family::owner)) {
            swap = known->swap_bytes.value_or(0);
            r.switches = known->switches;
        } else if (same_pages && (was->switches || !has(fam, resource_family::switches)) &&
                   (was->owner || !has(fam, resource_family::owner))) {
            swap = was->memory->swap_bytes;
            r.switches = was->switches;
            r.owner = was->owner;
        } else {
            if (const int err = f.read("status"); err != 0) return read_error(err);
            const auto status = parse::parse_status(f.view());
            if (!status || !status->voluntary_switches || !status->nonvoluntary_switches) return errc::malformed_data;
            swap = status->vm_swap_bytes.value_or(0);
            r.switches = resource_switches{*status->voluntary_switches, *status->nonvoluntary_switches};
            if (status->uid_real >= 0 && status->uid_effective >= 0)
                r.owner =
                    resource_owner{static_cast<user_id>(status->uid_real), static_cast<user_id>(status->uid_effective)};
        }
        if (has(fam, resource_family::memory)) r.memory = resource_memory{resident, *st->vsize, *swap};
        if (!has(fam, resource_family::switches)) r.switches.reset();
        if (!has(fam, resource_family::owner))
            r.owner.reset();
        else if (!r.owner)
            r.missing |= resource_family::owner;
    }

    // The rest may be refused (io, fd: another user's process without
    // CAP_SYS_PTRACE) or vanish with the process: `missing`.
    if (has(fam, resource_family::io)) {
        if (known && known->io) {
            r.io = known->io;
            r.io->read_chars = r.io->write_chars = r.io->read_calls = r.io->write_calls = std::nullopt;
        } else if (idle && was->io) {
            r.io = was->io;
        } else if (f.read("io") == 0) {
            r.io = io_of(f.view());
        }
        if (!r.io) r.missing |= resource_family::io;
    }
    if (has(fam, resource_family::files)) {
        r.open_files = idle && was->open_files ? was->open_files : count_fds(d.get(), procfs);
        if (kernel_fd_limit)
            r.open_files_limit = kernel_fd_limit;
        else if (f.read("limits") == 0)
            r.open_files_limit = parse::parse_open_files_limit(f.view());
        if (!r.open_files || !r.open_files_limit) r.missing |= resource_family::files;
    }
    if (has(fam, resource_family::wait_channel)) {
        if (idle && was->wait_channel)
            r.wait_channel = was->wait_channel;
        else if (f.read("wchan") == 0)
            r.wait_channel = std::string(parse::parse_wchan(f.view()));
        if (!r.wait_channel) r.missing |= resource_family::wait_channel;
    }
    if (has(fam, resource_family::proportional)) {
        if (idle && o.keep_proportional && was->proportional)
            r.proportional = was->proportional;
        else if (f.read("smaps_rollup") == 0)
            if (const auto s = parse::parse_smaps_rollup(f.view()))
                r.proportional = resource_proportional{s->pss_bytes, s->swap_pss_bytes};
        if (!r.proportional) r.missing |= resource_family::proportional;
    }
    if (has(fam, resource_family::command_line)) {
        std::string text;
        if (read_whole(d.get(), "cmdline", procfs, std::size_t{64} * 1024, text))
            r.command_line = std::move(text);
        else
            r.missing |= resource_family::command_line;
    }
    if (has(fam, resource_family::executable)) {
        char buf[4096];
        const ssize_t n = ::readlinkat(d.get(), "exe", buf, sizeof buf);
        if (n > 0 && static_cast<std::size_t>(n) < sizeof buf)
            r.executable = std::string(buf, static_cast<std::size_t>(n));
        else
            r.missing |= resource_family::executable;
    }
    if (has(fam, resource_family::cgroups)) {
        if (f.read("cgroup") == 0) {
            std::vector<resource_cgroup> lines;
            std::string_view text = f.view();
            while (const auto l = parse::next_cgroup_line(text))
                lines.push_back({std::string(l->hierarchy), std::string(l->controllers), std::string(l->path)});
            r.cgroups = std::move(lines);
        } else {
            r.missing |= resource_family::cgroups;
        }
    }
    if (has(fam, resource_family::threads)) read_threads(f, o, r);
    return r;
}

}  // namespace

result<std::int64_t> boot_time_seconds(const std::string& proc_root) noexcept {
    try {
        std::string text;
        if (const auto ec = read_file((proc_root + "/stat").c_str(), text)) return ec;
        const auto v = parse::parse_proc_stat_btime(text);
        if (!v || *v > std::uint64_t{1} << 40) return errc::malformed_data;
        return static_cast<std::int64_t>(*v);
    } catch (const std::bad_alloc&) {
        return errno_code(ENOMEM);
    }
}

result<process_resources> read_resources(pid_t pid, const resource_options& options) noexcept {
    try {
        return read_linux(pid, options);
    } catch (const std::bad_alloc&) {
        return errno_code(ENOMEM);
    }
}

}  // namespace proctimes::inline v1::detail
