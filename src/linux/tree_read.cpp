// SPDX-License-Identifier: MIT
// The /proc reads of run_tree's ptrace recorder (tree_trace.hpp): a task's
// process and parent, a process's CPU and the program it runs.
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "clock_ns.hpp"
#include "cpu_split.hpp"
#include "linux/sys.hpp"
#include "linux/task.hpp"
#include "linux/tree_trace.hpp"
#include "parse/procfs.hpp"
#include "proctimes/linux.hpp"

namespace proctimes::inline v1::detail {

using std::chrono::nanoseconds;

namespace {

// A small /proc file of task `id` (/proc/<id>/<name>); bytes or -1 with errno.
ssize_t read_small(pid_t id, const char* name, char* buf, std::size_t cap) noexcept {
    char path[64];
    std::snprintf(path, sizeof path, "%s/%d/%s", proc_root, static_cast<int>(id), name);
    unique_fd fd{open_read(AT_FDCWD, path)};
    if (!fd) return -1;
    return pread_small(fd.get(), buf, cap);
}

}  // namespace

std::error_code read_task_kin(pid_t tid, task_kin& out) noexcept {
    char buf[small_file_max];
    const ssize_t n = read_small(tid, "status", buf, sizeof buf);
    if (n < 0) return file_error(errno);
    auto rec = parse::parse_status(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!rec || rec->tgid <= 0) return make_error_code(errc::malformed_data);
    out.tgid = static_cast<pid_t>(rec->tgid);
    out.ppid = static_cast<pid_t>(rec->ppid);
    return {};
}

std::error_code read_process_cpu(pid_t pid, tree_process& into, pid_t* ppid, parse::stat_record* stat) noexcept {
    // The clock first, then stat: the stat read confirms the pid still names
    // the same process (it cannot be reaped while the recorder holds it: a
    // traced zombie waits for its tracer).
    timespec ts{};
    const bool clock = ::clock_gettime(process_cpu_clock_id(pid), &ts) == 0;
    char buf[small_file_max];
    const ssize_t n = read_small(pid, "stat", buf, sizeof buf);
    if (n < 0) return file_error(errno);
    auto rec = parse::parse_stat(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!rec) return make_error_code(errc::malformed_data);
    if (ppid) *ppid = static_cast<pid_t>(rec->ppid);
    if (stat) *stat = *rec;
    if (clock) {
        const auto ku = split_by_ticks(to_ns(ts), rec->utime, rec->stime);
        into.kernel = ku.kernel;
        into.user = ku.user;
        into.precision = precision_of(cpu_source::cpu_clock_and_stat);
    } else {
        const nanoseconds tick = creation_resolution();
        into.kernel = tick * static_cast<std::int64_t>(rec->stime);
        into.user = tick * static_cast<std::int64_t>(rec->utime);
        into.precision = precision_of(cpu_source::stat_ticks);
    }
    return {};
}

tree_program read_program(pid_t pid, std::size_t max_argv_bytes, instant started) {
    tree_program p;
    p.started = started;
    char path[64];
    std::snprintf(path, sizeof path, "%s/%d/exe", proc_root, static_cast<int>(pid));
    char exe[4096];
    const ssize_t e = ::readlink(path, exe, sizeof exe);
    if (e > 0 && static_cast<std::size_t>(e) < sizeof exe) p.executable.assign(exe, static_cast<std::size_t>(e));

    std::snprintf(path, sizeof path, "%s/%d/cmdline", proc_root, static_cast<int>(pid));
    unique_fd fd{open_read(AT_FDCWD, path)};
    if (!fd) return p;
    // One byte more than allowed tells whether there was more.
    std::string text(max_argv_bytes + 1, '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    if (got > max_argv_bytes) {
        p.argv_truncated = true;
        got = max_argv_bytes;
    }
    text.resize(got);
    std::size_t start = 0;
    while (start < text.size()) {
        const auto nul = text.find('\0', start);
        if (nul == std::string::npos) {
            p.argv.push_back(text.substr(start));  // cut short (or a process that rewrote its arguments)
            break;
        }
        p.argv.push_back(text.substr(start, nul - start));
        start = nul + 1;
    }
    return p;
}

std::string ptrace_refusal_note(int err) {
    std::string note = "ptrace: ";
    note += std::strerror(err);
    std::string scope;
    if (!read_file("/proc/sys/kernel/yama/ptrace_scope", scope, 64)) {
        while (!scope.empty() && (scope.back() == '\n' || scope.back() == ' ')) scope.pop_back();
        if (!scope.empty() && scope != "0" && scope != "1") note += " (kernel.yama.ptrace_scope=" + scope + ")";
    }
    if (err == EPERM || err == EACCES) {
        std::string status;
        if (!read_file("/proc/thread-self/status", status, 1 << 16)) {
            if (status.find("\nSeccomp:\t2") != std::string::npos)
                note += " (a seccomp filter applies to this process)";
        }
        if (::prctl(PR_GET_DUMPABLE) != 1)
            note += " (this process is not dumpable: it changed its user or group ids, or set PR_SET_DUMPABLE 0)";
    }
    return note;
}

}  // namespace proctimes::inline v1::detail
