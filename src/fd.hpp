// SPDX-License-Identifier: MIT
// Owned file descriptors and the one way the library opens and reads small
// files: POSIX only, so every backend (and the portable code) can use them.
// The Linux specifics (/proc paths, pidfds, pid namespaces) are in
// src/linux/sys.hpp, which includes this header.
#pragma once

#include <cerrno>
#include <cstddef>
#include <string>
#include <system_error>
#include <utility>

#include <sys/types.h>
#include <unistd.h>

#include "proctimes/error.hpp"

namespace proctimes::inline v1::detail {

/// An owned file descriptor, closed on destruction.
class unique_fd {
public:
    unique_fd() noexcept = default;
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    unique_fd(unique_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    unique_fd& operator=(unique_fd&& o) noexcept {
        if (this != &o) reset(std::exchange(o.fd_, -1));
        return *this;
    }
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd() { reset(); }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }
    [[nodiscard]] int get() const noexcept { return fd_; }
    /// Gives up ownership (e.g. to fdopendir(3)).
    int release() noexcept { return std::exchange(fd_, -1); }
    [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
    explicit operator bool() const noexcept { return valid(); }

private:
    int fd_ = -1;
};

/// An errno value as an error code: the system category on POSIX, where it
/// holds errno values; the generic one on Windows, whose system category
/// holds GetLastError() codes (ENOMEM there would read as another error).
#if defined(_WIN32)
inline std::error_code errno_code(int e) noexcept { return {e, std::generic_category()}; }
#else
inline std::error_code errno_code(int e) noexcept { return {e, std::system_category()}; }
#endif
inline std::error_code last_errno() noexcept { return errno_code(errno); }

/// A stack buffer large enough for any stat/schedstat/status line we read.
inline constexpr std::size_t small_file_max = 4096;

/// pread(2) of a whole small file at offset 0 into buf. Returns the bytes or
/// -1 with errno. A file that fills the buffer is reported as EOVERFLOW.
ssize_t pread_small(int fd, char* buf, std::size_t cap) noexcept;

/// The one way the library opens a file to read it. openat(2) read-only,
/// close-on-exec, without a controlling terminal, retried on EINTR — and
/// never blocking: O_NONBLOCK, so that a FIFO planted where a file was
/// expected (the boot anchor in /dev/shm, a --proc-root tree, a bind mount
/// over /proc) cannot make open(2) wait forever for a writer. What was opened
/// is then checked with fstat(2): with O_DIRECTORY in `extra_flags` the kernel
/// guarantees a directory; otherwise anything but a regular file (a FIFO, a
/// socket, a device: reads that could block, never end or have side effects)
/// is closed again and reported as -1 with errno ENXIO, the kernel's own
/// answer to opening a socket. procfs and sysfs files are regular files, so
/// only a path someone else planted is refused. O_NONBLOCK stays set on the
/// descriptor; procfs and sysfs reads ignore it.
///
/// `dir_is_procfs`: the caller has checked (fstatfs) that `dirfd` is a procfs
/// and `path` names one of its fixed entries (stat, status, task/<tid>/...):
/// procfs makes no FIFOs, sockets or devices, so the fstat is skipped. Only
/// the snapshot walk, which opens thousands of files, uses it (an fstat costs
/// about a third of an open+close of a stat file here).
int open_read(int dirfd, const char* path, int extra_flags = 0, bool dir_is_procfs = false) noexcept;

/// The errno open_read reports for a path that is not a regular file.
inline constexpr int not_regular_file_errno = ENXIO;

/// The error for an errno met opening or reading a /proc (or similar) file
/// through open_read/pread_small: ENXIO is errc::not_a_regular_file, EACCES and
/// EPERM (hidepid=1 answers EPERM for another user's /proc/<pid>) are
/// errc::access_denied; any other errno is kept as it is.
std::error_code file_error(int err) noexcept;

/// Reads a whole small file by path (no kept descriptor) through open_read;
/// at most `max_bytes` (EFBIG beyond), so a file that never ends cannot
/// exhaust memory. Errors as file_error().
std::error_code read_file(const char* path, std::string& out, std::size_t max_bytes = 1 << 24) noexcept;

}  // namespace proctimes::inline v1::detail
