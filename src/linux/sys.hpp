// Small Linux helpers shared by the backend: owned descriptors, errno codes,
// raw syscalls glibc 2.36 does not wrap, and reads of small /proc files.
#pragma once

#include <cerrno>
#include <cstddef>
#include <ctime>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <sys/types.h>
#include <unistd.h>

#include "proctimes/error.hpp"

namespace proctimes::detail {

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

inline std::error_code errno_code(int e) noexcept { return {e, std::system_category()}; }
inline std::error_code last_errno() noexcept { return errno_code(errno); }

/// The largest pid Linux can ever hand out (PID_MAX_LIMIT on 64-bit).
inline constexpr pid_t pid_max_limit = 4 * 1024 * 1024;

/// Where procfs is mounted. One place, so tests and ports can see it.
inline constexpr const char* proc_root = "/proc";

/// A stack buffer large enough for any stat/schedstat/status line we read.
inline constexpr std::size_t small_file_max = 4096;

/// pread(2) of a whole small file at offset 0 into buf. Returns the bytes or
/// -1 with errno. A file that fills the buffer is reported as EOVERFLOW.
ssize_t pread_small(int fd, char* buf, std::size_t cap) noexcept;

/// openat(2) read-only, close-on-exec, retried on EINTR.
int open_read(int dirfd, const char* path, int extra_flags = 0) noexcept;

/// Reads a whole small file by path (no kept descriptor).
std::error_code read_file(const char* path, std::string& out) noexcept;

int pidfd_open(pid_t pid, unsigned flags) noexcept;
/// pidfd_send_signal(pidfd, 0): 0 while the process (or zombie) exists.
int pidfd_alive(int pidfd) noexcept;
/// poll(2) on a pidfd, without waiting: true once the thread group has exited
/// (a zombie or reaped), or when the poll fails.
bool pidfd_group_exited(int pidfd) noexcept;

inline constexpr unsigned pidfd_thread_flag = 0x80;  // PIDFD_THREAD (== O_EXCL), Linux 6.9

/// The clock ids clock_getcpuclockid(3) / pthread_getcpuclockid(3) build
/// (kernel: MAKE_PROCESS_CPUCLOCK / MAKE_THREAD_CPUCLOCK with CPUCLOCK_SCHED).
/// They name the pid NUMBER, so a read must be confirmed by a later read of a
/// kept descriptor (see process.cpp).
constexpr clockid_t process_cpu_clock_id(pid_t pid) noexcept { return static_cast<clockid_t>((~static_cast<unsigned>(pid) << 3) | 2); }
constexpr clockid_t thread_cpu_clock_id(pid_t tid) noexcept { return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 2 | 4); }

/// True when proc_root is a mounted procfs.
bool proc_is_mounted() noexcept;

/// Maps the errno of opening /proc/<id>/... to the error the caller should see:
/// ENOENT is "no such process/thread" when /proc is mounted and the id does not
/// exist, "access denied" when it exists but /proc hides it (hidepid), and
/// "/proc unavailable" when /proc is not procfs.
std::error_code classify_proc_open_error(int err, int pidfd, bool thread) noexcept;

}  // namespace proctimes::detail
