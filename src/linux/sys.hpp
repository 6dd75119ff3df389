// Small Linux helpers shared by the backend: owned descriptors, errno codes,
// raw syscalls glibc 2.36 does not wrap, and reads of small /proc files.
#pragma once

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <ctime>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <sys/time.h>
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

/// A rusage duration (struct timeval: seconds and microseconds) in nanoseconds.
inline std::chrono::nanoseconds from_timeval(const timeval& tv) noexcept {
    return std::chrono::seconds{tv.tv_sec} + std::chrono::microseconds{tv.tv_usec};
}

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
/// exist, "access denied" when it exists but /proc hides it (hidepid=2), and
/// "/proc unavailable" when /proc is not procfs; EPERM/EACCES (hidepid=1) are
/// "access denied"; the rest as file_error().
std::error_code classify_proc_open_error(int err, int pidfd, bool thread) noexcept;

/// Whether the procfs at proc_root shows the caller's own pid namespace, so
/// that /proc/<n> names the process the caller knows as pid n. A process in a
/// pid namespace of its own that still sees its parent's /proc (`unshare -p
/// -f` without --mount-proc, a container sharing the host's /proc) would read
/// another process's files there. Decided from the NSpid line of
/// /proc/self/status (one entry exactly when the mount's namespace is the
/// caller's; /proc/self is absent from a mount of an unrelated namespace), or,
/// on kernels before 4.1 without NSpid, from /proc/self naming getpid().
/// Returns {} when it does, errc::foreign_pid_namespace when it does not, and
/// {} as well when /proc is not a procfs (the caller's own open then reports
/// proc_unavailable). Decided once per process (again after fork(2), which
/// may enter a new namespace) and cached: one atomic load afterwards. A
/// process that mounts another /proc over proc_root after its first query
/// keeps the first answer.
std::error_code check_proc_pid_namespace() noexcept;

}  // namespace proctimes::detail
