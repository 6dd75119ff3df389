// SPDX-License-Identifier: MIT
#include "serve/procfiles.hpp"
#include "serve/arith.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <limits>

#include "fd.hpp"

namespace proctimes::cli::serve {
namespace {

constexpr long proc_super_magic = 0x9fa0;

// A whole decimal number of 64 bits, nothing else ("NaN", "-1", "1e3", "" fail).
std::optional<std::uint64_t> whole(std::string_view s) {
    if (s.empty() || s.size() > 20) return std::nullopt;
    std::uint64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<std::int64_t> whole_signed(std::string_view s) {
    if (s.empty() || s.size() > 20) return std::nullopt;
    std::int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string_view trim(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
    return v;
}

// The value of "key:" at the start of a line, or nullopt when there is no such line.
std::optional<std::string_view> line_value(std::string_view text, std::string_view key) {
    std::size_t at = 0;
    while (at < text.size()) {
        const auto nl = text.find('\n', at);
        const std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
        if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':')
            return trim(line.substr(key.size() + 1));
        if (nl == std::string_view::npos) break;
        at = nl + 1;
    }
    return std::nullopt;
}

// "123 kB" in bytes; nullopt when malformed or beyond 64 bits.
std::optional<std::uint64_t> kilobytes(std::string_view v) {
    if (v.size() < 3 || v.substr(v.size() - 3) != " kB") return std::nullopt;
    const auto n = whole(trim(v.substr(0, v.size() - 3)));
    if (!n || *n > u64_max / 1024) return std::nullopt;
    return *n * 1024;
}

// Reads a whole small file relative to `dirfd`: 0, or the errno.
int read_at(int dirfd, const char* path, bool procfs, std::string& out) {
    const detail::unique_fd fd(detail::open_read(dirfd, path, 0, procfs));
    if (!fd) return errno;
    char buf[16384];
    const ssize_t n = detail::pread_small(fd.get(), buf, sizeof buf);
    if (n < 0) return errno;
    out.assign(buf, static_cast<std::size_t>(n));
    return 0;
}

bool gone(int err) { return err == ENOENT || err == ESRCH; }

// Entries of a directory relative to `dirfd` but "." and "..": calls `each`
// with each name. 0, or the errno of opening or reading it.
template <typename F>
int list_dir(int dirfd, const char* path, F&& each) {
    const int fd = ::openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return errno;
    DIR* d = ::fdopendir(fd);
    if (!d) {
        const int e = errno;
        ::close(fd);
        return e;
    }
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name(e->d_name);
        if (name != "." && name != "..") each(name);
        errno = 0;
    }
    const int e = errno;
    ::closedir(d);
    return e;
}

// Open descriptors: the size procfs reports for /proc/<pid>/fd (Linux 6.2
// and later), else its entries counted. 0, or the errno.
int count_fds(int dirfd, bool procfs, std::uint64_t& n) {
    struct stat st {};
    if (::fstatat(dirfd, "fd", &st, 0) != 0) return errno;
    if (procfs && st.st_size > 0) {
        n = static_cast<std::uint64_t>(st.st_size);
        return 0;
    }
    n = 0;
    return list_dir(dirfd, "fd", [&n](std::string_view) { ++n; });
}

}  // namespace

std::optional<stat_fields> parse_stat(std::string_view text) {
    const auto close = text.rfind(')');
    if (close == std::string_view::npos || text.find('(') > close) return std::nullopt;
    std::string_view rest = text.substr(close + 1);
    // Fields 3.. after the name, separated by single spaces.
    std::string_view f[22];  // fields 3..24
    std::size_t n = 0;
    while (n < 22) {
        if (rest.empty() || rest.front() != ' ') return std::nullopt;
        rest.remove_prefix(1);
        const auto sp = rest.find_first_of(" \n");
        f[n++] = rest.substr(0, sp);
        rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp);
    }
    stat_fields s;
    if (f[0].size() != 1) return std::nullopt;
    s.state = f[0][0];
    const auto minflt = whole(f[10 - 3]), majflt = whole(f[12 - 3]), utime = whole(f[14 - 3]), stime = whole(f[15 - 3]),
               start = whole(f[22 - 3]), vsize = whole(f[23 - 3]), rss = whole(f[24 - 3]);
    const auto threads = whole_signed(f[20 - 3]);
    if (!minflt || !majflt || !utime || !stime || !start || !vsize || !rss || !threads) return std::nullopt;
    s.utime = *utime;
    s.stime = *stime;
    s.minflt = *minflt;
    s.majflt = *majflt;
    s.start_ticks = *start;
    s.vsize = *vsize;
    s.rss_pages = *rss;
    s.num_threads = *threads;
    return s;
}

std::optional<status_fields> parse_status(std::string_view text) {
    status_fields s;
    const auto vol = line_value(text, "voluntary_ctxt_switches");
    const auto nonvol = line_value(text, "nonvoluntary_ctxt_switches");
    if (!vol || !nonvol) return std::nullopt;
    const auto v = whole(*vol), nv = whole(*nonvol);
    if (!v || !nv) return std::nullopt;
    s.voluntary_switches = *v;
    s.nonvoluntary_switches = *nv;
    if (const auto swap = line_value(text, "VmSwap")) {
        const auto b = kilobytes(*swap);
        if (!b) return std::nullopt;
        s.vm_swap_bytes = *b;
    }
    return s;
}

std::optional<io_fields> parse_io(std::string_view text) {
    const auto r = line_value(text, "read_bytes"), w = line_value(text, "write_bytes");
    if (!r || !w) return std::nullopt;
    const auto rv = whole(*r), wv = whole(*w);
    if (!rv || !wv) return std::nullopt;
    return io_fields{*rv, *wv};
}

std::optional<std::uint64_t> parse_open_files_limit(std::string_view text) {
    constexpr std::string_view key = "Max open files";
    std::size_t at = 0;
    while (at < text.size()) {
        const auto nl = text.find('\n', at);
        std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
        if (line.substr(0, key.size()) == key && line.size() > key.size() && line[key.size()] == ' ') {
            line = trim(line.substr(key.size()));
            const std::string_view soft = line.substr(0, line.find(' '));
            if (soft == "unlimited") return u64_max;
            return whole(soft);
        }
        if (nl == std::string_view::npos) break;
        at = nl + 1;
    }
    return std::nullopt;
}

std::optional<smaps_fields> parse_smaps_rollup(std::string_view text) {
    const auto pss = line_value(text, "Pss");
    if (!pss) return std::nullopt;
    smaps_fields s;
    const auto p = kilobytes(*pss);
    if (!p) return std::nullopt;
    s.pss_bytes = *p;
    if (const auto sw = line_value(text, "SwapPss")) {
        const auto b = kilobytes(*sw);
        if (!b) return std::nullopt;
        s.swap_pss_bytes = *b;
    }
    return s;
}

std::string parse_wchan(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    return text == "0" ? std::string() : std::string(text);
}

proc_files read_proc_files(const std::string& proc_root, pid_t pid, std::uint64_t start_ticks, bool smaps, bool threads,
                           bool thread_io, std::vector<thread_files>* out_threads, const read_hints& hints) {
    proc_files r;
    const std::string dir = proc_root + "/" + std::to_string(pid);
    const detail::unique_fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY));
    if (!d) {
        r.result = gone(errno) ? proc_files::outcome::vanished : proc_files::outcome::failed;
        return r;
    }
    struct statfs sfs {};
    const bool procfs = ::fstatfs(d.get(), &sfs) == 0 && sfs.f_type == proc_super_magic;
    // Asked before stat is read: a stat read through `d` after it proves the
    // pid still named this process when it was asked.
    std::optional<std::uint64_t> kernel_fd_limit;
    if (hints.live && procfs) {
        rlimit lim{};
        if (::prlimit(pid, RLIMIT_NOFILE, nullptr, &lim) == 0)
            kernel_fd_limit = lim.rlim_cur == RLIM_INFINITY ? u64_max : static_cast<std::uint64_t>(lim.rlim_cur);
    }
    std::string text;
    int err = read_at(d.get(), "stat", procfs, text);
    if (err != 0) {
        r.result = gone(err) ? proc_files::outcome::vanished : proc_files::outcome::failed;
        return r;
    }
    const auto st = parse_stat(text);
    if (!st) return r;
    if (st->start_ticks != start_ticks) {
        r.result = proc_files::outcome::vanished;  // the pid now names another process
        return r;
    }
    r.stat = *st;
    // A member that has not run since `was` was read: what only its running
    // changes (io, descriptors, wchan; status unless its pages moved) stands.
    const proc_files* was = hints.idle_since;
    const bool idle = !threads && was && was->result == proc_files::outcome::ok && was->stat.utime == st->utime &&
                      was->stat.stime == st->stime && was->stat.minflt == st->minflt &&
                      was->stat.majflt == st->majflt && was->stat.num_threads == st->num_threads;
    if (idle && was->stat.rss_pages == st->rss_pages && was->stat.vsize == st->vsize) {
        r.status = was->status;
    } else {
        err = read_at(d.get(), "status", procfs, text);
        if (err != 0) {
            r.result = gone(err) ? proc_files::outcome::vanished : proc_files::outcome::failed;
            return r;
        }
        const auto status = parse_status(text);
        if (!status) return r;
        r.status = *status;
    }
    r.result = proc_files::outcome::ok;

    // The rest may be refused (io, fd: another user's process without
    // CAP_SYS_PTRACE) or vanish with the process: partial.
    if (idle) {
        r.io = was->io;
        r.open_fds = was->open_fds;
        r.wchan = was->wchan;
    } else {
        if (read_at(d.get(), "io", procfs, text) == 0) r.io = parse_io(text);
        std::uint64_t fds = 0;
        if (count_fds(d.get(), procfs, fds) == 0) r.open_fds = fds;
        if (read_at(d.get(), "wchan", procfs, text) == 0) r.wchan = parse_wchan(text);
    }
    if (kernel_fd_limit)
        r.fd_limit = kernel_fd_limit;
    else if (read_at(d.get(), "limits", procfs, text) == 0)
        r.fd_limit = parse_open_files_limit(text);
    if (smaps && idle && hints.keep_smaps && was->smaps)
        r.smaps = was->smaps;
    else if (smaps && read_at(d.get(), "smaps_rollup", procfs, text) == 0)
        r.smaps = parse_smaps_rollup(text);
    r.partial = !r.io || !r.open_fds || !r.fd_limit || (smaps && !r.smaps);

    if (threads && out_threads) {
        out_threads->clear();
        std::vector<pid_t> tids;
        const int lerr = list_dir(d.get(), "task", [&tids](std::string_view name) {
            if (const auto t = whole(name); t && *t > 0 && *t <= static_cast<std::uint64_t>(INT32_MAX))
                tids.push_back(static_cast<pid_t>(*t));
        });
        if (lerr != 0) r.partial = true;
        for (const pid_t tid : tids) {
            if (hints.idle_threads) {
                const auto& idle = *hints.idle_threads;
                const auto it = std::lower_bound(idle.begin(), idle.end(), tid,
                                                 [](const thread_files& f, pid_t t) { return f.tid < t; });
                if (it != idle.end() && it->tid == tid) {
                    out_threads->push_back(*it);  // it has not run since: its files are as they were
                    continue;
                }
            }
            const std::string base = "task/" + std::to_string(tid) + "/";
            thread_files t;
            t.tid = tid;
            if (read_at(d.get(), (base + "stat").c_str(), procfs, text) != 0) continue;  // it ended
            const auto ts = parse_stat(text);
            if (ts) t.name = text.substr(text.find('(') + 1, text.rfind(')') - text.find('(') - 1);
            if (read_at(d.get(), (base + "status").c_str(), procfs, text) != 0) continue;
            const auto tst = parse_status(text);
            if (!ts || !tst) {
                r.partial = true;
                continue;
            }
            t.start_ticks = ts->start_ticks;
            t.utime = ts->utime;
            t.stime = ts->stime;
            t.minflt = ts->minflt;
            t.majflt = ts->majflt;
            t.voluntary_switches = tst->voluntary_switches;
            t.nonvoluntary_switches = tst->nonvoluntary_switches;
            if (thread_io && read_at(d.get(), (base + "io").c_str(), procfs, text) == 0) t.io = parse_io(text);
            if (thread_io && read_at(d.get(), (base + "wchan").c_str(), procfs, text) == 0) t.wchan = parse_wchan(text);
            out_threads->push_back(t);
        }
    }
    return r;
}

}  // namespace proctimes::cli::serve
