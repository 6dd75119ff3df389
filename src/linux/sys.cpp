// SPDX-License-Identifier: MIT
#include "linux/sys.hpp"

#include "backend/backend.hpp"
#include "linux/fork_generation.hpp"
#include "parse/procfs.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

namespace proctimes::inline v1::detail {

int pidfd_open(pid_t pid, unsigned flags) noexcept { return static_cast<int>(::syscall(SYS_pidfd_open, pid, flags)); }

long waitid_retrying(idtype_t type, pid_t id, siginfo_t& si, int flags, rusage* ru) noexcept {
    long r;
    do {
        si = {};
        r = ::syscall(SYS_waitid, type, id, &si, flags, ru);
    } while (r < 0 && errno == EINTR);
    return r;
}

int pidfd_alive(int pidfd) noexcept { return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0)); }

std::error_code kill_by_native_handle(int handle) noexcept {
    if (handle < 0) return make_error_code(errc::not_supported);  // no pidfd (Linux < 5.3)
    if (::syscall(SYS_pidfd_send_signal, handle, SIGKILL, nullptr, 0) != 0) return last_errno();
    return {};
}

bool pidfd_group_exited(int pidfd) noexcept {
    pollfd p{pidfd, POLLIN, 0};
    int n;
    do {
        n = ::poll(&p, 1, 0);
    } while (n < 0 && errno == EINTR);
    return n != 0;  // readable, hung up, or an error: treat as ended
}

bool proc_is_mounted() noexcept {
    struct statfs sf {};
    if (::statfs(proc_root, &sf) != 0) return false;
    return sf.f_type == PROC_SUPER_MAGIC;
}

std::error_code classify_proc_open_error(int err, int pidfd, bool thread) noexcept {
    const auto gone = make_error_code(thread ? errc::no_such_thread : errc::no_such_process);
    switch (err) {
        case ENOENT:
            if (!proc_is_mounted()) return make_error_code(errc::process_table_unavailable);
            // /proc says "no such entry", but the pidfd shows the task exists:
            // procfs hides it from us (hidepid=2/invisible).
            if (pidfd >= 0 && (pidfd_alive(pidfd) == 0 || errno == EPERM)) return make_error_code(errc::access_denied);
            return gone;
        case ESRCH:
            return gone;
        default:
            return file_error(err);
    }
}

namespace {

// The uncached decision of check_proc_pid_namespace(): 0 = ours,
// 1 = another namespace's, -1 = undecided (no procfs at proc_root).
int decide_proc_pid_namespace() noexcept {
    if (!proc_is_mounted()) return -1;
    char path[64];
    std::snprintf(path, sizeof path, "%s/self/status", proc_root);
    unique_fd fd{open_read(AT_FDCWD, path)};
    // A procfs of an unrelated pid namespace has no "self" for us.
    if (!fd) return errno == ENOENT ? 1 : -1;
    char buf[small_file_max];
    const ssize_t n = pread_small(fd.get(), buf, sizeof buf);
    if (n <= 0) return -1;
    const auto st = parse::parse_status(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!st) return -1;
    // NSpid lists our pid in every namespace from the mount's down to ours:
    // one entry exactly when the mount's namespace is ours.
    if (st->nspid_levels > 0) return st->nspid_levels == 1 ? 0 : 1;
    return st->pid == ::getpid() ? 0 : 1;  // before Linux 4.1: no NSpid line
}

}  // namespace

std::error_code check_proc_pid_namespace() noexcept {
    // (generation << 2) | (1 + decision): 0 means "not decided yet".
    static std::atomic<std::uint64_t> cached{0};
    const std::uint64_t gen = fork_generation();
    std::uint64_t v = cached.load(std::memory_order_acquire);
    if (v == 0 || (v >> 2) != gen) {
        const int d = decide_proc_pid_namespace();
        if (d < 0) return {};  // not cached: /proc may be mounted later
        v = (gen << 2) | static_cast<std::uint64_t>(1 + d);
        cached.store(v, std::memory_order_release);
    }
    return (v & 3) == 2 ? make_error_code(errc::foreign_namespace) : std::error_code{};
}

}  // namespace proctimes::inline v1::detail
