// SPDX-License-Identifier: MIT
// The portable file helpers (fd.hpp).
#include "fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>

namespace proctimes::inline v1::detail {

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

int open_read(int dirfd, const char* path, int extra_flags, bool dir_is_procfs) noexcept {
    int fd;
    do {
        fd = ::openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra_flags);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0 || (extra_flags & O_DIRECTORY) != 0 || dir_is_procfs) return fd;  // the type is known
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        errno = not_regular_file_errno;
        return -1;
    }
    return fd;
}

std::error_code file_error(int err) noexcept {
    switch (err) {
        case not_regular_file_errno:
            return make_error_code(errc::not_a_regular_file);
        case EACCES:
        case EPERM:
            return make_error_code(errc::access_denied);
        default:
            return errno_code(err);
    }
}

std::error_code read_file(const char* path, std::string& out, std::size_t max_bytes) noexcept {
    unique_fd fd{open_read(AT_FDCWD, path)};
    if (!fd) return file_error(errno);
    out.clear();
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return file_error(errno);
        if (n == 0) return {};
        if (out.size() + static_cast<std::size_t>(n) > max_bytes) return errno_code(EFBIG);
        try {
            out.append(buf, static_cast<std::size_t>(n));
        } catch (...) {
            return errno_code(ENOMEM);
        }
    }
}

}  // namespace proctimes::inline v1::detail
