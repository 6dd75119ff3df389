// SPDX-License-Identifier: MIT
// The /proc reads of run_tree's recorders (tree_trace.hpp): a task's process
// and parent, a process's CPU, the program it runs and the signals that will
// end it; and the release of a command that made itself a tracee.
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

// The signal masks of /proc/<tid>/status (bit n-1 for signal n).
struct signal_masks {
    std::uint64_t pending = 0;  // SigPnd | ShdPnd
    std::uint64_t blocked = 0;
    std::uint64_t ignored = 0;
    std::uint64_t caught = 0;
};

bool read_signal_masks(pid_t tid, signal_masks& out) noexcept {
    char buf[small_file_max];
    const ssize_t n = read_small(tid, "status", buf, sizeof buf);
    if (n < 0) return false;
    const std::string_view text(buf, static_cast<std::size_t>(n));
    int found = 0;
    std::size_t at = 0;
    while (at < text.size()) {
        auto end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(at, end - at);
        at = end + 1;
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view key = line.substr(0, colon);
        std::uint64_t* into = key == "SigPnd" || key == "ShdPnd" ? &out.pending
                              : key == "SigBlk"                  ? &out.blocked
                              : key == "SigIgn"                  ? &out.ignored
                              : key == "SigCgt"                  ? &out.caught
                                                                 : nullptr;
        if (!into) continue;
        std::uint64_t v = 0;
        std::string_view hex = line.substr(colon + 1);
        while (!hex.empty() && (hex.front() == ' ' || hex.front() == '\t')) hex.remove_prefix(1);
        if (std::from_chars(hex.data(), hex.data() + hex.size(), v, 16).ec != std::errc{}) return false;
        *into |= v;
        ++found;
    }
    return found == 5;
}

// Whether the default action of `sig` ends the process (signal(7): Term, Core).
constexpr bool ends_by_default(int sig) noexcept {
    switch (sig) {
        case SIGCHLD:
        case SIGCONT:
        case SIGSTOP:
        case SIGTSTP:
        case SIGTTIN:
        case SIGTTOU:
        case SIGURG:
        case SIGWINCH:
            return false;
        default:
            return sig >= 1 && sig <= 64;
    }
}

bool ends_process(const signal_masks& m, int sig) noexcept {
    if (sig == SIGKILL) return true;
    if (!ends_by_default(sig)) return false;
    const std::uint64_t bit = std::uint64_t{1} << (sig - 1);
    return ((m.ignored | m.caught) & bit) == 0;
}

}  // namespace

bool signal_ends_process(pid_t tid, int sig) noexcept {
    if (sig == SIGKILL) return true;
    signal_masks m;
    return read_signal_masks(tid, m) && ends_process(m, sig);
}

bool ending_signal_pending(pid_t tid) noexcept {
    signal_masks m;
    if (!read_signal_masks(tid, m)) return false;
    const std::uint64_t deliverable = m.pending & ~m.blocked;
    for (int sig = 1; sig <= 64; ++sig)
        if ((deliverable >> (sig - 1)) & 1U && ends_process(m, sig)) return true;
    return false;
}

bool release_trace_stop(pid_t pid) noexcept {
    // Looked at first (WNOWAIT): only a trace-stop (CLD_TRAPPED) is taken,
    // never a stop of an untraced child nor an end.
    siginfo_t si{};
    if (waitid_retrying(P_PID, pid, si, WSTOPPED | WNOHANG | WNOWAIT, nullptr) != 0 || si.si_pid != pid ||
        si.si_code != CLD_TRAPPED)
        return false;
    siginfo_t taken{};
    if (waitid_retrying(P_PID, pid, taken, WSTOPPED | WNOHANG, nullptr) != 0 || taken.si_pid != pid) return false;
    const int sig = taken.si_status == SIGTRAP ? 0 : taken.si_status;
    return ::ptrace(PTRACE_DETACH, pid, nullptr, sig) == 0;
}

result<child_exit> wait_untraced(child& command) noexcept {
    for (;;) {
        auto w = command.wait_for(std::chrono::milliseconds{100});
        if (!w) return w.error();
        if (*w) return **w;
        (void)release_trace_stop(command.id());
    }
}

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

std::string executable_path(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "%s/%d/exe", proc_root, static_cast<int>(pid));
    char exe[4096];
    const ssize_t e = ::readlink(path, exe, sizeof exe);
    if (e <= 0 || static_cast<std::size_t>(e) >= sizeof exe) return {};
    std::string out(exe, static_cast<std::size_t>(e));
    constexpr std::string_view deleted = " (deleted)";
    if (out.size() > deleted.size() && out.compare(out.size() - deleted.size(), deleted.size(), deleted) == 0) {
        // Removed since the exec, unless that is the name of the very file.
        struct stat named {};
        struct stat running {};
        const bool real_name = ::stat(out.c_str(), &named) == 0 && ::stat(path, &running) == 0 &&
                               named.st_dev == running.st_dev && named.st_ino == running.st_ino;
        if (!real_name) out.resize(out.size() - deleted.size());
    }
    return out;
}

tree_program read_program(pid_t pid, std::size_t max_argv_bytes, instant started) {
    tree_program p;
    p.started = started;
    char path[64];
    p.executable = executable_path(pid);

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
