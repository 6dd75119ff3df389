#include "linux/sys.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

namespace proctimes::detail {

ssize_t pread_small(int fd, char* buf, std::size_t cap) noexcept {
    ssize_t n;
    do {
        n = ::pread(fd, buf, cap, 0);
    } while (n < 0 && errno == EINTR);
    if (n >= 0 && static_cast<std::size_t>(n) == cap) {
        errno = EOVERFLOW;
        return -1;
    }
    return n;
}

int open_read(int dirfd, const char* path, int extra_flags) noexcept {
    int fd;
    do {
        fd = ::openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | extra_flags);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

std::error_code read_file(const char* path, std::string& out) noexcept {
    unique_fd fd{open_read(AT_FDCWD, path)};
    if (!fd) return last_errno();
    out.clear();
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return last_errno();
        if (n == 0) return {};
        try {
            out.append(buf, static_cast<std::size_t>(n));
        } catch (...) {
            return errno_code(ENOMEM);
        }
    }
}

int pidfd_open(pid_t pid, unsigned flags) noexcept {
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, flags));
}

int pidfd_alive(int pidfd) noexcept {
    return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0));
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
            if (!proc_is_mounted()) return make_error_code(errc::proc_unavailable);
            // /proc says "no such entry", but the pidfd shows the task exists:
            // procfs hides it from us (hidepid=2/invisible).
            if (pidfd >= 0 && (pidfd_alive(pidfd) == 0 || errno == EPERM)) return make_error_code(errc::access_denied);
            return gone;
        case ESRCH:
            return gone;
        case EACCES:
        case EPERM:
            return errno_code(err);
        default:
            return errno_code(err);
    }
}

}  // namespace proctimes::detail
