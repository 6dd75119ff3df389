// SPDX-License-Identifier: MIT
// Linux helpers shared by the backend: raw syscalls glibc 2.36 does not wrap
// (pidfds), /proc paths and the checks of what /proc shows. The portable
// descriptor and file helpers are in src/fd.hpp, included here.
#pragma once

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <ctime>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd.hpp"
#include "proctimes/error.hpp"

namespace proctimes::inline v1::detail {

/// The largest pid Linux can ever hand out (PID_MAX_LIMIT on 64-bit).
inline constexpr pid_t pid_max_limit = 4 * 1024 * 1024;

/// Where procfs is mounted. One place, so tests and ports can see it.
inline constexpr const char* proc_root = "/proc";

int pidfd_open(pid_t pid, unsigned flags) noexcept;
/// waitid(2) by the raw system call (P_PIDFD, and `ru`, which glibc's
/// wrapper lacks), retried on EINTR; `si` is zeroed before each try.
long waitid_retrying(idtype_t type, pid_t id, siginfo_t& si, int flags, rusage* ru) noexcept;
/// pidfd_send_signal(pidfd, 0): 0 while the process (or zombie) exists.
int pidfd_alive(int pidfd) noexcept;
/// Sends SIGKILL through a pidfd (never by pid). ESRCH once the process has
/// been reaped; not_supported for -1 (no pidfd: Linux < 5.3).
std::error_code kill_by_native_handle(int handle) noexcept;
/// poll(2) on a pidfd, without waiting: true once the thread group has exited
/// (a zombie or reaped), or when the poll fails.
bool pidfd_group_exited(int pidfd) noexcept;

inline constexpr unsigned pidfd_thread_flag = 0x80;  // PIDFD_THREAD (== O_EXCL), Linux 6.9

/// The clock ids clock_getcpuclockid(3) / pthread_getcpuclockid(3) build
/// (kernel: MAKE_PROCESS_CPUCLOCK / MAKE_THREAD_CPUCLOCK with CPUCLOCK_SCHED).
/// They name the pid NUMBER, so a read must be confirmed by a later read of a
/// kept descriptor (see process.cpp).
constexpr clockid_t process_cpu_clock_id(pid_t pid) noexcept {
    return static_cast<clockid_t>((~static_cast<unsigned>(pid) << 3) | 2);
}
constexpr clockid_t thread_cpu_clock_id(pid_t tid) noexcept {
    return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 2 | 4);
}

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
/// Returns {} when it does, errc::foreign_namespace when it does not, and
/// {} as well when /proc is not a procfs (the caller's own open then reports
/// process_table_unavailable). Decided once per process (again after fork(2), which
/// may enter a new namespace) and cached: one atomic load afterwards. A
/// process that mounts another /proc over proc_root after its first query
/// keeps the first answer.
std::error_code check_proc_pid_namespace() noexcept;

}  // namespace proctimes::inline v1::detail
