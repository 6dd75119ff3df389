// Linux backend of proctimes::process, proctimes::thread, this_process and
// this_thread.
//
// Identity. A handle keeps a pidfd and open /proc descriptors. A kept /proc
// descriptor reads the same task forever and fails with ESRCH once it is
// reaped, even after its pid is reused, so every query reads through one.
// The CPU clocks (clock_getcpuclockid) name a pid NUMBER instead; a clock read
// is therefore always followed by a pread of the kept stat descriptor: if that
// pread succeeds, the task still existed after the clock read, so the pid could
// not yet have been reused and the clock value is the task's own.
#include "proctimes/process.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ctime>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "cpu_split.hpp"
#include "linux/sys.hpp"
#include "parse/procfs.hpp"
#include "proctimes/boot.hpp"

namespace proctimes {

using std::chrono::microseconds;
using std::chrono::nanoseconds;
using detail::unique_fd;

namespace {

constexpr long pidfs_magic = 0x50494446;  // PID_FS_MAGIC, include/uapi/linux/magic.h (6.9)

nanoseconds creation_resolution() noexcept {
    return nanoseconds{1'000'000'000 / clock_ticks_per_second()};
}

cpu_precision precision_of(cpu_source s) noexcept {
    const nanoseconds tick = creation_resolution();
    switch (s) {
        case cpu_source::rusage:
        case cpu_source::wait_rusage: return {microseconds{1}, microseconds{1}, tick, s};
        case cpu_source::cpu_clock_and_stat:
        case cpu_source::schedstat_and_stat: return {tick, nanoseconds{1}, tick, s};
        case cpu_source::stat_ticks: return {tick, tick, tick, s};
    }
    return {tick, tick, tick, s};
}

nanoseconds from_timeval(const timeval& tv) noexcept {
    return std::chrono::seconds{tv.tv_sec} + microseconds{tv.tv_usec};
}

nanoseconds ticks_to_ns(std::uint64_t t) noexcept {
    return nanoseconds{static_cast<std::int64_t>(t) * (1'000'000'000 / clock_ticks_per_second())};
}

// One read of a kept stat descriptor, parsed.
struct stat_read {
    char buf[detail::small_file_max];
    parse::stat_record rec;
};

std::error_code read_stat(int fd, stat_read& out, bool thread) noexcept {
    const ssize_t n = detail::pread_small(fd, out.buf, sizeof out.buf);
    if (n < 0) {
        if (errno == ESRCH) return make_error_code(thread ? errc::no_such_thread : errc::no_such_process);
        return detail::last_errno();
    }
    auto rec = parse::parse_stat(std::string_view(out.buf, static_cast<std::size_t>(n)));
    if (!rec) return make_error_code(errc::malformed_data);
    out.rec = *rec;
    return {};
}

std::error_code check_id(pid_t id) noexcept {
    if (id <= 0 || id > detail::pid_max_limit) return make_error_code(errc::invalid_argument);
    return {};
}

// After the descriptors are open: the pidfd's task must still exist, otherwise
// the pid may have been reused between pidfd_open and the /proc lookups.
std::error_code confirm_same_task(int pidfd, bool thread) noexcept {
    if (pidfd < 0) return {};
    if (detail::pidfd_alive(pidfd) == 0 || errno == EPERM) return {};
    return make_error_code(thread ? errc::no_such_thread : errc::no_such_process);
}

// Fork safety for the calling-process/thread caches: a forked child has a new
// pid and a new main thread with its own start time.
std::atomic<std::uint64_t> fork_generation{1};
void on_fork_child() noexcept { fork_generation.fetch_add(1, std::memory_order_relaxed); }
void register_atfork() noexcept {
    static const int once = ::pthread_atfork(nullptr, nullptr, on_fork_child);
    (void)once;
}

result<instant> creation_from_path(const char* path) noexcept {
    char buf[detail::small_file_max];
    unique_fd fd{detail::open_read(AT_FDCWD, path)};
    if (!fd) return detail::proc_is_mounted() ? detail::last_errno() : make_error_code(errc::proc_unavailable);
    const ssize_t n = detail::pread_small(fd.get(), buf, sizeof buf);
    if (n < 0) return detail::last_errno();
    auto rec = parse::parse_stat(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!rec) return errc::malformed_data;
    return instant_from_start_ticks(rec->starttime);
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

result<std::string> name_from(int stat_fd, bool thread) {
    stat_read s;
    if (auto ec = read_stat(stat_fd, s, thread)) return ec;
    return std::string(s.rec.comm);
}

}  // namespace

// ---- process -----------------------------------------------------------------

struct process::impl {
    pid_t pid = 0;
    unique_fd pidfd;
    unique_fd dir;   // /proc/<pid>
    unique_fd stat;  // /proc/<pid>/stat
    process_identity identity;
    instant creation;
    detail::monotonic_split split;
};

process::process() noexcept = default;
process::process(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
process::process(process&&) noexcept = default;
process& process::operator=(process&&) noexcept = default;
process::~process() = default;

result<process> process::open(pid_t pid) noexcept {
    if (auto ec = check_id(pid)) return ec;
    auto anchor = get_boot_anchor();
    if (!anchor) return anchor.error();
    std::unique_ptr<impl> p(new (std::nothrow) impl);
    if (!p) return detail::errno_code(ENOMEM);
    p->pid = pid;

    p->pidfd.reset(detail::pidfd_open(pid, 0));
    if (!p->pidfd) {
        const int err = errno;
        if (err == ENOSYS) {
            // before Linux 5.3: no pidfd; identity then rests on the /proc descriptors alone
        } else if (err == ESRCH || err == ENOENT || err == EINVAL) {
            // 6.9+ answers ENOENT for a non-leader tid, older kernels EINVAL:
            // a thread pidfd tells whether the id is a thread at all.
            unique_fd t{detail::pidfd_open(pid, detail::pidfd_thread_flag)};
            if (t) return errc::not_a_process;
            return err == EINVAL && errno == EINVAL ? errc::not_a_process : errc::no_such_process;
        } else {
            return detail::errno_code(err);
        }
    }
    char path[64];
    std::snprintf(path, sizeof path, "%s/%d", detail::proc_root, static_cast<int>(pid));
    p->dir.reset(detail::open_read(AT_FDCWD, path, O_DIRECTORY));
    if (!p->dir) return detail::classify_proc_open_error(errno, p->pidfd.get(), false);
    p->stat.reset(detail::open_read(p->dir.get(), "stat"));
    if (!p->stat) return detail::classify_proc_open_error(errno, p->pidfd.get(), false);

    stat_read s;
    if (auto ec = read_stat(p->stat.get(), s, false)) return ec;
    if (s.rec.pid != pid) return errc::not_a_process;
    if (auto ec = confirm_same_task(p->pidfd.get(), false)) return ec;

    auto created = instant_from_start_ticks(s.rec.starttime);
    if (!created) return created.error();
    p->creation = *created;
    p->identity = {anchor->id, pid, s.rec.starttime, pidfs_inode(p->pidfd.get())};
    return process(std::move(p));
}

result<process> process::open_self() noexcept { return open(::getpid()); }

result<process_times> process::times() const noexcept {
    if (!impl_) return errc::invalid_handle;
    timespec ts{};
    const bool have_clock = ::clock_gettime(detail::process_cpu_clock_id(impl_->pid), &ts) == 0;
    stat_read s;
    if (auto ec = read_stat(impl_->stat.get(), s, false)) return ec;

    process_times t;
    t.creation = impl_->creation;
    if (have_clock) {
        const nanoseconds total = std::chrono::seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec};
        const auto ku = impl_->split.apply(total, s.rec.utime, s.rec.stime);
        t.kernel = ku.kernel;
        t.user = ku.user;
        t.precision = precision_of(cpu_source::cpu_clock_and_stat);
    } else {
        // The clock refused a task that still exists (not seen on Linux ≥ 2.6.12):
        // report the tick values, and say so.
        t.kernel = ticks_to_ns(s.rec.stime);
        t.user = ticks_to_ns(s.rec.utime);
        t.precision = precision_of(cpu_source::stat_ticks);
    }
    return t;
}

result<std::string> process::name() const {
    if (!impl_) return errc::invalid_handle;
    return name_from(impl_->stat.get(), false);
}

result<pid_t> process::parent_id() const noexcept {
    if (!impl_) return errc::invalid_handle;
    stat_read s;
    if (auto ec = read_stat(impl_->stat.get(), s, false)) return ec;
    return static_cast<pid_t>(s.rec.ppid);
}

result<std::vector<pid_t>> process::thread_ids() const {
    if (!impl_) return errc::invalid_handle;
    unique_fd task{detail::open_read(impl_->dir.get(), "task", O_DIRECTORY)};
    if (!task) return errno == ENOENT || errno == ESRCH ? make_error_code(errc::no_such_process) : detail::last_errno();
    DIR* d = ::fdopendir(task.get());
    if (!d) return detail::last_errno();
    (void)task.release();
    std::vector<pid_t> ids;
    errno = 0;
    while (dirent* e = ::readdir(d)) {
        if (auto id = parse::parse_id(e->d_name)) ids.push_back(static_cast<pid_t>(*id));
    }
    const int err = errno;
    ::closedir(d);
    if (err != 0) return err == ESRCH || err == ENOENT ? make_error_code(errc::no_such_process) : detail::errno_code(err);
    std::sort(ids.begin(), ids.end());
    return ids;
}

pid_t process::id() const noexcept { return impl_ ? impl_->pid : 0; }
const process_identity& process::identity() const noexcept {
    static const process_identity none{};
    return impl_ ? impl_->identity : none;
}
instant process::creation() const noexcept { return impl_ ? impl_->creation : instant{}; }
int process::native_pidfd() const noexcept { return impl_ ? impl_->pidfd.get() : -1; }

// ---- thread ------------------------------------------------------------------

struct thread::impl {
    pid_t tid = 0;
    pid_t tgid = 0;
    pid_t opener_pid = 0;  // this process's pid at open: its threads use the thread CPU clock
    unique_fd pidfd;
    unique_fd stat;       // /proc/<tgid>/task/<tid>/stat
    unique_fd schedstat;  // /proc/<tgid>/task/<tid>/schedstat
    task_identity identity;
    instant creation;
    detail::monotonic_split split;
};

thread::thread() noexcept = default;
thread::thread(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
thread::thread(thread&&) noexcept = default;
thread& thread::operator=(thread&&) noexcept = default;
thread::~thread() = default;

namespace {

// Opens the task files of tid inside tgid, given a (possibly invalid) pidfd.
result<std::unique_ptr<thread::impl>> open_task(pid_t tgid, pid_t tid, unique_fd pidfd) noexcept {
    auto anchor = get_boot_anchor();
    if (!anchor) return anchor.error();
    std::unique_ptr<thread::impl> p(new (std::nothrow) thread::impl);
    if (!p) return detail::errno_code(ENOMEM);
    p->tid = tid;
    p->tgid = tgid;
    p->opener_pid = ::getpid();
    p->pidfd = std::move(pidfd);
    char path[96];
    std::snprintf(path, sizeof path, "%s/%d/task/%d/stat", detail::proc_root, static_cast<int>(tgid),
                  static_cast<int>(tid));
    p->stat.reset(detail::open_read(AT_FDCWD, path));
    if (!p->stat) {
        const int err = errno;
        // The tid exists and /proc shows it, just not under this pid.
        char own[64];
        std::snprintf(own, sizeof own, "%s/%d", detail::proc_root, static_cast<int>(tid));
        if (err == ENOENT && ::faccessat(AT_FDCWD, own, F_OK, 0) == 0) return errc::no_such_thread;
        return detail::classify_proc_open_error(err, p->pidfd.get(), true);
    }
    std::snprintf(path, sizeof path, "%s/%d/task/%d/schedstat", detail::proc_root, static_cast<int>(tgid),
                  static_cast<int>(tid));
    p->schedstat.reset(detail::open_read(AT_FDCWD, path));
    if (!p->schedstat) return detail::classify_proc_open_error(errno, p->pidfd.get(), true);

    stat_read s;
    if (auto ec = read_stat(p->stat.get(), s, true)) return ec;
    if (s.rec.pid != tid) return errc::malformed_data;
    if (auto ec = confirm_same_task(p->pidfd.get(), true)) return ec;
    auto created = instant_from_start_ticks(s.rec.starttime);
    if (!created) return created.error();
    p->creation = *created;
    p->identity = {anchor->id, tid, s.rec.starttime, pidfs_inode(p->pidfd.get())};
    return p;
}

result<unique_fd> open_thread_pidfd(pid_t tid) noexcept {
    unique_fd fd{detail::pidfd_open(tid, detail::pidfd_thread_flag)};
    if (fd) return fd;
    if (errno == ESRCH) return errc::no_such_thread;
    if (errno == EINVAL || errno == ENOSYS) return unique_fd{};  // kernel before 6.9: no thread pidfds
    return detail::last_errno();
}

}  // namespace

result<thread> thread::open(pid_t tid) noexcept {
    if (auto ec = check_id(tid)) return ec;
    auto pidfd = open_thread_pidfd(tid);
    if (!pidfd) return pidfd.error();
    // /proc/<tid>/status names the thread group of any tid (the entry is not
    // listed for non-leaders, but it can be opened).
    char path[64];
    std::snprintf(path, sizeof path, "%s/%d/status", detail::proc_root, static_cast<int>(tid));
    unique_fd fd{detail::open_read(AT_FDCWD, path)};
    if (!fd) return detail::classify_proc_open_error(errno, pidfd->get(), true);
    char buf[detail::small_file_max];
    const ssize_t n = detail::pread_small(fd.get(), buf, sizeof buf);
    if (n < 0) return errno == ESRCH ? make_error_code(errc::no_such_thread) : detail::last_errno();
    auto st = parse::parse_status(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!st) return errc::malformed_data;
    auto p = open_task(static_cast<pid_t>(st->tgid), tid, std::move(*pidfd));
    if (!p) return p.error();
    return thread(std::move(*p));
}

result<thread> thread::open(pid_t pid, pid_t tid) noexcept {
    if (auto ec = check_id(pid)) return ec;
    if (auto ec = check_id(tid)) return ec;
    auto pidfd = open_thread_pidfd(tid);
    if (!pidfd) return pidfd.error();
    auto p = open_task(pid, tid, std::move(*pidfd));
    if (!p) return p.error();
    return thread(std::move(*p));
}

result<thread> thread::open_self() noexcept { return open(::getpid(), static_cast<pid_t>(::gettid())); }

result<thread_times> thread::times() const noexcept {
    if (!impl_) return errc::invalid_handle;
    nanoseconds total{-1};
    cpu_source source = cpu_source::schedstat_and_stat;
    if (impl_->tgid == impl_->opener_pid) {
        timespec ts{};
        if (::clock_gettime(detail::thread_cpu_clock_id(impl_->tid), &ts) == 0) {
            total = std::chrono::seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec};
            source = cpu_source::cpu_clock_and_stat;
        }
    }
    if (total.count() < 0) {
        // Another process's thread (or this handle used in a forked child): the
        // kernel refuses its thread CPU clock, schedstat has the same counter.
        char buf[256];
        const ssize_t n = detail::pread_small(impl_->schedstat.get(), buf, sizeof buf);
        if (n < 0) return errno == ESRCH ? make_error_code(errc::no_such_thread) : detail::last_errno();
        auto ss = parse::parse_schedstat(std::string_view(buf, static_cast<std::size_t>(n)));
        if (!ss) return errc::malformed_data;
        total = nanoseconds{static_cast<std::int64_t>(ss->run_ns)};
    }
    stat_read s;
    if (auto ec = read_stat(impl_->stat.get(), s, true)) return ec;
    const auto ku = impl_->split.apply(total, s.rec.utime, s.rec.stime);
    thread_times t;
    t.creation = impl_->creation;
    t.kernel = ku.kernel;
    t.user = ku.user;
    t.precision = precision_of(source);
    return t;
}

result<std::string> thread::name() const {
    if (!impl_) return errc::invalid_handle;
    return name_from(impl_->stat.get(), true);
}

pid_t thread::id() const noexcept { return impl_ ? impl_->tid : 0; }
pid_t thread::process_id() const noexcept { return impl_ ? impl_->tgid : 0; }
const task_identity& thread::identity() const noexcept {
    static const task_identity none{};
    return impl_ ? impl_->identity : none;
}
instant thread::creation() const noexcept { return impl_ ? impl_->creation : instant{}; }
int thread::native_pidfd() const noexcept { return impl_ ? impl_->pidfd.get() : -1; }

// ---- the calling process and thread --------------------------------------------

namespace this_process {

pid_t id() noexcept { return ::getpid(); }

result<process_times> times() noexcept {
    // The creation instant never changes: read /proc/self/stat once (per fork).
    static std::atomic<std::uint64_t> cached_gen{0};
    static std::atomic<std::int64_t> cached_ns{0};
    const std::uint64_t gen = fork_generation.load(std::memory_order_relaxed);
    instant created;
    if (cached_gen.load(std::memory_order_acquire) == gen) {
        created = instant{nanoseconds{cached_ns.load(std::memory_order_relaxed)}};
    } else {
        register_atfork();
        auto c = creation_from_path("/proc/self/stat");
        if (!c) return c.error();
        created = *c;
        cached_ns.store(created.time_since_epoch().count(), std::memory_order_relaxed);
        cached_gen.store(gen, std::memory_order_release);
    }
    rusage ru{};
    if (::getrusage(RUSAGE_SELF, &ru) != 0) return detail::last_errno();
    process_times t;
    t.creation = created;
    t.kernel = from_timeval(ru.ru_stime);
    t.user = from_timeval(ru.ru_utime);
    t.precision = precision_of(cpu_source::rusage);
    return t;
}

}  // namespace this_process

namespace this_thread {

pid_t id() noexcept { return static_cast<pid_t>(::gettid()); }

result<thread_times> times() noexcept {
    thread_local std::uint64_t cached_gen = 0;
    thread_local instant created;
    const std::uint64_t gen = fork_generation.load(std::memory_order_relaxed);
    if (cached_gen != gen) {
        register_atfork();
        auto c = creation_from_path("/proc/thread-self/stat");
        if (!c) return c.error();
        created = *c;
        cached_gen = gen;
    }
    rusage ru{};
    if (::getrusage(RUSAGE_THREAD, &ru) != 0) return detail::last_errno();
    thread_times t;
    t.creation = created;
    t.kernel = from_timeval(ru.ru_stime);
    t.user = from_timeval(ru.ru_utime);
    t.precision = precision_of(cpu_source::rusage);
    return t;
}

}  // namespace this_thread

}  // namespace proctimes
