// SPDX-License-Identifier: MIT
// Linux backend: opening a process or thread core (backend/backend.hpp, "opening a
// task"), what was fixed at open, and the reads of its name, parent and
// threads. Sampling is in task_sample.cpp, the calling process in self.cpp.
//
// Identity. A handle keeps a pidfd and open /proc descriptors. A kept /proc
// descriptor reads the same task forever and fails with ESRCH once it is
// reaped, even after its pid is reused, so every query reads through one.
// The CPU clocks (clock_getcpuclockid) name a pid NUMBER instead; a clock read
// is therefore always followed by a pread of the kept stat descriptor: if that
// pread succeeds, the task still existed after the clock read, so the pid could
// not yet have been reused and the clock value is the task's own.
#include <algorithm>
#include <cstdio>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "backend/backend.hpp"
#include "linux/fork_generation.hpp"
#include "linux/sys.hpp"
#include "linux/task.hpp"
#include "parse/procfs.hpp"
#include "proctimes/boot.hpp"

namespace proctimes::inline v1::detail {

namespace {

constexpr long pidfs_magic = 0x50494446;  // PID_FS_MAGIC, include/uapi/linux/magic.h (6.9)

// The CPUs a process's threads can run on at once: every CPU the kernel has
// configured (more than it may use: exit bounds stay lower bounds).
unsigned process_parallelism() noexcept {
    static const unsigned n = [] {
        const long v = ::sysconf(_SC_NPROCESSORS_CONF);
        return v > 0 ? static_cast<unsigned>(v) : 1u;
    }();
    return n;
}

// After the descriptors are open: the pidfd's task must still exist, otherwise
// the pid may have been reused between pidfd_open and the /proc lookups.
std::error_code confirm_same_task(int pidfd, bool thread) noexcept {
    if (pidfd < 0) return {};
    if (pidfd_alive(pidfd) == 0 || errno == EPERM) return {};
    return make_error_code(thread ? errc::no_such_thread : errc::no_such_process);
}

// The inode number of a pidfd: unique for the boot on Linux ≥ 6.9 (pidfs);
// 0 when there is no pidfd or the kernel predates pidfs.
std::uint64_t pidfs_inode(int pidfd) noexcept {
    if (pidfd < 0) return 0;
    struct stat st {};
    if (::fstat(pidfd, &st) != 0) return 0;
    struct statfs sf {};
    if (::fstatfs(pidfd, &sf) != 0 || sf.f_type != pidfs_magic) return 0;
    return static_cast<std::uint64_t>(st.st_ino);
}

// Completes a freshly opened core: identity, creation, first sample, exit watch.
result<task_core_ptr> finish_open(task_core_ptr c, const boot_id& boot) noexcept {
    stat_read s;
    if (auto ec = read_stat(c->stat.get(), s, c->is_thread)) return ec;
    if (s.rec.pid != c->id) return c->is_thread ? errc::malformed_data : errc::not_a_process;
    if (auto ec = confirm_same_task(c->pidfd.get(), c->is_thread)) return ec;
    auto created = instant_from_start_ticks(s.rec.starttime);
    if (!created) return created.error();
    c->creation = *created;
    c->life.set_facts({c->is_thread, c->creation, creation_resolution(), c->is_thread ? 1u : process_parallelism()});
    c->identity = {boot, c->id, s.rec.starttime, pidfs_inode(c->pidfd.get())};
    if (!c->is_thread) {
        // The kernel shows stat field 52 only to callers that may ptrace the
        // process (same uids, or CAP_SYS_PTRACE); others read 0. The /proc
        // directory is owned by the process's effective uid.
        struct stat st {};
        c->status_readable = ::geteuid() == 0 || (::fstat(c->dir.get(), &st) == 0 && st.st_uid == ::geteuid());
    }
    // A first sample, so that a task that ends before anyone asks still has
    // last values to report.
    if (auto first = query(*c); !first && first.error() != gone_error(*c)) return first.error();
    if (c->id != ::getpid()) platform_exit_backend().watch(c);  // the calling process cannot exit under us
    return c;
}

// Opens /proc for `pid` given its pidfd (or none, before Linux 5.3).
result<task_core_ptr> open_core(pid_t pid, unique_fd pidfd) noexcept {
    auto anchor = get_boot_anchor();
    if (!anchor) return anchor.error();
    if (auto ec = check_proc_pid_namespace()) return ec;  // /proc/<pid> would be another process
    task_core_ptr c;
    try {
        c = std::make_shared<task_core>();
    } catch (...) {
        return errno_code(ENOMEM);
    }
    c->id = c->tgid = pid;
    c->opener_pid = ::getpid();
    c->opener_generation = fork_generation();
    c->pidfd = std::move(pidfd);
    char path[64];
    std::snprintf(path, sizeof path, "%s/%d", proc_root, static_cast<int>(pid));
    c->dir.reset(open_read(AT_FDCWD, path, O_DIRECTORY));
    if (!c->dir) return classify_proc_open_error(errno, c->pidfd.get(), false);
    c->stat.reset(open_read(c->dir.get(), "stat"));
    if (!c->stat) return classify_proc_open_error(errno, c->pidfd.get(), false);
    return finish_open(std::move(c), anchor->id);
}

// Opens the task files of tid inside tgid, given a (possibly invalid) pidfd.
result<task_core_ptr> open_task(pid_t tgid, pid_t tid, unique_fd pidfd) noexcept {
    auto anchor = get_boot_anchor();
    if (!anchor) return anchor.error();
    if (auto ec = check_proc_pid_namespace()) return ec;  // /proc/<tgid> would be another process
    task_core_ptr p;
    try {
        p = std::make_shared<task_core>();
    } catch (...) {
        return errno_code(ENOMEM);
    }
    p->is_thread = true;
    p->id = tid;
    p->tgid = tgid;
    p->opener_pid = ::getpid();
    p->opener_generation = fork_generation();
    p->pidfd = std::move(pidfd);
    char path[96];
    std::snprintf(path, sizeof path, "%s/%d/task/%d/stat", proc_root, static_cast<int>(tgid), static_cast<int>(tid));
    p->stat.reset(open_read(AT_FDCWD, path));
    if (!p->stat) {
        const int err = errno;
        // The tid exists and /proc shows it, just not under this pid.
        char own[64];
        std::snprintf(own, sizeof own, "%s/%d", proc_root, static_cast<int>(tid));
        if (err == ENOENT && ::faccessat(AT_FDCWD, own, F_OK, 0) == 0) return errc::no_such_thread;
        return classify_proc_open_error(err, p->pidfd.get(), true);
    }
    std::snprintf(path, sizeof path, "%s/%d/task/%d/schedstat", proc_root, static_cast<int>(tgid),
                  static_cast<int>(tid));
    p->schedstat.reset(open_read(AT_FDCWD, path));
    if (!p->schedstat) return classify_proc_open_error(errno, p->pidfd.get(), true);
    return finish_open(std::move(p), anchor->id);
}

result<unique_fd> open_thread_pidfd(pid_t tid) noexcept {
    unique_fd fd{pidfd_open(tid, pidfd_thread_flag)};
    if (fd) return fd;
    if (errno == ESRCH) return errc::no_such_thread;
    if (errno == EINVAL || errno == ENOSYS) return unique_fd{};  // kernel before 6.9: no thread pidfds
    return last_errno();
}

}  // namespace

// ---- opening -----------------------------------------------------------------

pid_t max_task_id() noexcept { return pid_max_limit; }

result<task_core_ptr> open_process_core(pid_t pid) noexcept {
    unique_fd pidfd{pidfd_open(pid, 0)};
    if (!pidfd) {
        const int err = errno;
        if (err == ENOSYS) {
            // before Linux 5.3: no pidfd; identity then rests on the /proc descriptors alone
        } else if (err == ESRCH || err == ENOENT || err == EINVAL) {
            // 6.9+ answers ENOENT for a non-leader tid, older kernels EINVAL:
            // a thread pidfd tells whether the id is a thread at all.
            unique_fd t{pidfd_open(pid, pidfd_thread_flag)};
            if (t) return errc::not_a_process;
            return err == EINVAL && errno == EINVAL ? errc::not_a_process : errc::no_such_process;
        } else {
            return errno_code(err);
        }
    }
    return open_core(pid, std::move(pidfd));
}

result<task_core_ptr> open_child_core(pid_t pid, unique_fd pidfd) noexcept { return open_core(pid, std::move(pidfd)); }

result<task_core_ptr> open_thread_core(pid_t tid) noexcept {
    auto pidfd = open_thread_pidfd(tid);
    if (!pidfd) return pidfd.error();
    if (auto ec = check_proc_pid_namespace()) return ec;  // /proc/<tid> would be another task
    // /proc/<tid>/status names the thread group of any tid (the entry is not
    // listed for non-leaders, but it can be opened).
    char path[64];
    std::snprintf(path, sizeof path, "%s/%d/status", proc_root, static_cast<int>(tid));
    unique_fd fd{open_read(AT_FDCWD, path)};
    if (!fd) return classify_proc_open_error(errno, pidfd->get(), true);
    char buf[small_file_max];
    const ssize_t n = pread_small(fd.get(), buf, sizeof buf);
    if (n < 0) return errno == ESRCH ? make_error_code(errc::no_such_thread) : file_error(errno);
    auto st = parse::parse_status(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!st) return errc::malformed_data;
    return open_task(static_cast<pid_t>(st->tgid), tid, std::move(*pidfd));
}

result<task_core_ptr> open_thread_core(pid_t pid, pid_t tid) noexcept {
    auto pidfd = open_thread_pidfd(tid);
    if (!pidfd) return pidfd.error();
    return open_task(pid, tid, std::move(*pidfd));
}

// ---- what was fixed at open ----------------------------------------------------

pid_t core_id(const task_core& c) noexcept { return c.id; }
pid_t core_process_id(const task_core& c) noexcept { return c.tgid; }
const task_identity& core_identity(const task_core& c) noexcept { return c.identity; }
instant core_creation(const task_core& c) noexcept { return c.creation; }
native_handle core_native_handle(const task_core& c) noexcept { return c.pidfd.get(); }

bool core_is_self(const task_core& c) noexcept {
    // Opened in this process: the generation moves in every forked child, so
    // a copy inherited through fork (whose pid the child may even have been
    // given, once the named process was reaped) is never taken for the child.
    if (c.opener_generation != fork_generation()) return false;
    if (!c.is_thread) return c.id == c.opener_pid;
    if (c.tgid != c.opener_pid || c.id != self_thread_id()) return false;
    // A thread of this process with the caller's id: the same thread unless
    // the named one ended and the caller was given its id; then its start
    // tick differs.
    auto created = self_thread_creation();
    return created && *created == c.creation;
}

// ---- reads through the kept descriptors ---------------------------------------------

result<std::string> core_name(const task_core& c) {
    stat_read s;
    if (auto ec = read_stat(c.stat.get(), s, c.is_thread)) return ec;
    return std::string(s.rec.comm);
}

result<pid_t> core_parent_id(const task_core& c) noexcept {
    stat_read s;
    if (auto ec = read_stat(c.stat.get(), s, c.is_thread)) return ec;
    return static_cast<pid_t>(s.rec.ppid);
}

result<std::vector<pid_t>> core_thread_ids(const task_core& c) {
    unique_fd task{open_read(c.dir.get(), "task", O_DIRECTORY)};
    if (!task) return errno == ENOENT || errno == ESRCH ? make_error_code(errc::no_such_process) : file_error(errno);
    DIR* d = ::fdopendir(task.get());
    if (!d) return last_errno();
    (void)task.release();
    std::vector<pid_t> ids;
    errno = 0;
    while (dirent* e = ::readdir(d)) {
        if (auto id = parse::parse_id(e->d_name)) ids.push_back(static_cast<pid_t>(*id));
    }
    const int err = errno;
    ::closedir(d);
    if (err != 0) return err == ESRCH || err == ENOENT ? make_error_code(errc::no_such_process) : errno_code(err);
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace proctimes::inline v1::detail
