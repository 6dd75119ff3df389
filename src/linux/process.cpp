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
#include <cstdio>
#include <ctime>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "cpu_split.hpp"
#include "linux/sys.hpp"
#include "linux/task.hpp"
#include "parse/procfs.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/exit.hpp"

namespace proctimes {

using std::chrono::microseconds;
using std::chrono::nanoseconds;
using detail::unique_fd;

namespace {

constexpr long pidfs_magic = 0x50494446;  // PID_FS_MAGIC, include/uapi/linux/magic.h (6.9)

nanoseconds creation_resolution() noexcept {
    return nanoseconds{1'000'000'000 / clock_ticks_per_second()};
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

result<std::string> name_from(const detail::task_core& c) {
    stat_read s;
    if (auto ec = read_stat(c.stat.get(), s, c.is_thread)) return ec;
    return std::string(s.rec.comm);
}

// Completes a freshly opened core: identity, creation, first sample, exit watch.
result<std::shared_ptr<detail::task_core>> finish_open(std::shared_ptr<detail::task_core> c,
                                                       const boot_id& boot) noexcept {
    stat_read s;
    if (auto ec = read_stat(c->stat.get(), s, c->is_thread)) return ec;
    if (s.rec.pid != c->id) return c->is_thread ? errc::malformed_data : errc::not_a_process;
    if (auto ec = confirm_same_task(c->pidfd.get(), c->is_thread)) return ec;
    auto created = instant_from_start_ticks(s.rec.starttime);
    if (!created) return created.error();
    c->creation = *created;
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
    if (auto first = detail::query(*c); !first && first.error() != detail::gone_error(*c)) return first.error();
    if (c->id != ::getpid()) detail::watch_exit(c);  // the calling process cannot exit under us
    return c;
}

}  // namespace

// ---- shared task logic -----------------------------------------------------------

namespace detail {

cpu_precision precision_of(cpu_source s) noexcept {
    const nanoseconds tick = creation_resolution();
    switch (s) {
        case cpu_source::rusage:
        case cpu_source::wait_rusage: return {microseconds{1}, microseconds{1}, tick, s};
        case cpu_source::cpu_clock_and_stat:
        case cpu_source::schedstat_and_stat:
        case cpu_source::exit_record:
        case cpu_source::thread_clock_and_rusage: return {tick, nanoseconds{1}, tick, s};
        case cpu_source::stat_ticks: return {tick, tick, tick, s};
    }
    return {tick, tick, tick, s};
}

std::error_code gone_error(const task_core& c) noexcept {
    return make_error_code(c.is_thread ? errc::no_such_thread : errc::no_such_process);
}

instant realtime_now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return instant{std::chrono::seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec}};
}

namespace {

std::int64_t coarse_now_ns() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

// The stat fields remembered for `total`, if still valid (task.hpp, stat_memo).
bool memo_lookup(task_core& c, nanoseconds total, std::int64_t now_ns, parse::stat_record& out) noexcept {
    {
        std::lock_guard lock(c.memo.mutex);
        if (!c.memo.valid || c.memo.total_ns != total.count() || now_ns < c.memo.read_at_ns ||
            now_ns - c.memo.read_at_ns >= stat_memo::reuse_limit_ns)
            return false;
        out = c.memo.rec;
    }
    return c.is_thread || !pidfd_group_exited(c.pidfd.get());
}

void memo_store(task_core& c, nanoseconds total, std::int64_t now_ns, const parse::stat_record& rec) noexcept {
    // Any (total, stat read after it) pair is valid, so concurrent samplers
    // may store in any order.
    std::lock_guard lock(c.memo.mutex);
    c.memo.valid = true;
    c.memo.total_ns = total.count();
    c.memo.read_at_ns = now_ns;
    c.memo.rec = rec;
    c.memo.rec.comm = {};
}

}  // namespace

result<task_times> sample(task_core& c, char* state_char) noexcept {
    nanoseconds total{-1};
    cpu_source source = c.is_thread ? cpu_source::schedstat_and_stat : cpu_source::cpu_clock_and_stat;
    bool memo = false;  // whether this total may key the stat memo
    if (!c.is_thread || c.tgid == c.opener_pid) {
        // Read before the stat pread below (or, on a memo hit, the pidfd poll),
        // which confirms the id was not reused.
        timespec ts{};
        const clockid_t id = c.is_thread ? thread_cpu_clock_id(c.id) : process_cpu_clock_id(c.id);
        if (::clock_gettime(id, &ts) == 0) {
            total = std::chrono::seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec};
            source = cpu_source::cpu_clock_and_stat;
            memo = !c.is_thread && c.pidfd;
        }
    }
    if (total.count() < 0 && c.is_thread) {
        // Another process's thread (or this handle used in a forked child): the
        // kernel refuses its thread CPU clock; schedstat has the same counter.
        char buf[256];
        const ssize_t n = pread_small(c.schedstat.get(), buf, sizeof buf);
        if (n < 0) return errno == ESRCH ? gone_error(c) : last_errno();
        auto ss = parse::parse_schedstat(std::string_view(buf, static_cast<std::size_t>(n)));
        if (!ss) return errc::malformed_data;
        total = nanoseconds{static_cast<std::int64_t>(ss->run_ns)};
        source = cpu_source::schedstat_and_stat;
        memo = true;
    }
    stat_read s;
    const std::int64_t now_ns = memo ? coarse_now_ns() : 0;
    if (!memo || !memo_lookup(c, total, now_ns, s.rec)) {
        if (auto ec = read_stat(c.stat.get(), s, c.is_thread)) return ec;
        if (memo) memo_store(c, total, now_ns, s.rec);
    }
    *state_char = s.rec.state;
    if (!c.is_thread && parse::is_dead(s.rec)) {
        if (parse::leader_exited_early(s.rec)) {
            // The main thread has ended (pthread_exit) but other threads run:
            // the process runs. Its stat shows the main thread's state and
            // exit code, which is not the process's.
            *state_char = 'R';
            std::lock_guard lock(c.mutex);
            c.leader_exited_early = true;
        } else if (c.status_readable && s.rec.exit_code) {
            // A zombie shows its wait status until it is reaped: keep it.
            if (auto st = parse::decode_wait_status(*s.rec.exit_code)) {
                std::lock_guard lock(c.mutex);
                if (!c.status && !c.leader_exited_early) c.status = *st;
            }
        }
    }

    task_times t;
    t.creation = c.creation;
    if (total.count() >= 0) {
        const auto ku = c.split.apply(total, s.rec.utime, s.rec.stime, (s.rec.flags & parse::pf_kthread) != 0);
        t.kernel = ku.kernel;
        t.user = ku.user;
        t.precision = precision_of(source);
    } else {
        // The process clock refused a task that still exists (not seen on
        // Linux ≥ 2.6.12): report the tick values, and say so.
        t.kernel = ticks_to_ns(s.rec.stime);
        t.user = ticks_to_ns(s.rec.utime);
        t.precision = precision_of(cpu_source::stat_ticks);
    }
    t.sampled_at = realtime_now();
    return t;
}

result<task_times> query(task_core& c) noexcept {
    const instant before = realtime_now();  // a sample that sees it alive proves it ended after this
    char st = '?';
    auto r = sample(c, &st);
    // A zombie's exit record (if one was sent) came before the zombie showed.
    if (r && parse::is_dead_state(st)) deliver_exit_records();
    if (r) {
        std::lock_guard lock(c.mutex);
        if (!parse::is_dead_state(st)) {
            if (c.state == task_state::running && (!c.last_alive || *c.last_alive < before)) c.last_alive = before;
        } else {
            if (c.state == task_state::running) c.state = task_state::exited;
            // A zombie ended no later than this sample: the first observer
            // stamps it (the monitor, if it watches, would a few µs later),
            // saying it was observed, never passing the sample off as the end.
            stamp_exit_locked(c, r->sampled_at, r->cpu());
        }
        if (c.state != task_state::running && c.last && c.last->precision.source == cpu_source::wait_rusage) {
            task_times t = *c.last;  // a reaped child's µs values beat the zombie's ticks
            fill_exit_locked(t, c);
            return t;
        }
        r->state = c.state == task_state::running ? task_state::running : task_state::exited;
        fill_exit_locked(*r, c);
        c.last = *r;
        return r;
    }
    if (r.error() != gone_error(c)) return r.error();

    bool record = false;
    {
        std::lock_guard lock(c.mutex);
        if (c.state == task_state::running) {
            if (!c.watched && !c.exit) return r.error();  // nothing recorded its end
            record = true;
        }
    }
    if (record) record_exit(c, realtime_now());
    std::lock_guard lock(c.mutex);
    if (!c.last) return r.error();
    task_times t = *c.last;
    fill_exit_locked(t, c);
    t.state = c.state;
    return t;
}

void record_exit(task_core& c, instant seen) noexcept {
    char st = '?';
    auto r = sample(c, &st);  // the zombie, if it is not reaped yet
    deliver_exit_records();   // its exit record, if one was sent: final values when gone, and the instant
    if (!r) await_exit_record(c);  // gone unread: a record it should have had, bounded
    std::lock_guard lock(c.mutex);
    if (c.state != task_state::running) {  // already recorded
        stamp_exit_locked(c, seen, c.last ? c.last->cpu() : nanoseconds{0});
        return;
    }
    if (r) {
        // Readable: a zombie (or a task in the last µs of do_exit); these are
        // its final values.
        r->state = task_state::exited;
        c.last = *r;
        c.state = task_state::exited;
    } else if (c.exit_record) {
        // Released before anyone could read it, but the kernel's exit record
        // has its final run time and split.
        const auto& e = *c.exit_record;
        task_times t;
        t.creation = c.creation;
        const auto ku = c.split.apply(nanoseconds{static_cast<std::int64_t>(e.run_ns)}, e.utime_us, e.stime_us);
        t.kernel = ku.kernel;
        t.user = ku.user;
        t.precision = precision_of(cpu_source::exit_record);
        t.state = task_state::exited;
        c.last = t;
        c.state = task_state::exited;
    } else {
        c.state = task_state::exited_partial;
        if (c.last) c.last->state = task_state::exited_partial;
    }
    stamp_exit_locked(c, seen, c.last ? c.last->cpu() : nanoseconds{0});
    if (c.last && c.last->precision.source == cpu_source::exit_record) c.last->sampled_at = *c.exit;
}

}  // namespace detail

// ---- process -----------------------------------------------------------------

struct process::impl {
    std::shared_ptr<detail::task_core> core;
    ~impl() {
        if (core) detail::unwatch_exit(core, false);
    }
};

process::process() noexcept = default;
process::process(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
process::process(process&&) noexcept = default;
process& process::operator=(process&&) noexcept = default;
process::~process() = default;

namespace {

// Opens /proc for `pid` given its pidfd (or none, before Linux 5.3).
result<std::shared_ptr<detail::task_core>> open_process_core(pid_t pid, unique_fd pidfd) noexcept {
    auto anchor = get_boot_anchor();
    if (!anchor) return anchor.error();
    if (auto ec = detail::check_proc_pid_namespace()) return ec;  // /proc/<pid> would be another process
    std::shared_ptr<detail::task_core> c;
    try {
        c = std::make_shared<detail::task_core>();
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
    c->id = c->tgid = pid;
    c->opener_pid = ::getpid();
    c->pidfd = std::move(pidfd);
    char path[64];
    std::snprintf(path, sizeof path, "%s/%d", detail::proc_root, static_cast<int>(pid));
    c->dir.reset(detail::open_read(AT_FDCWD, path, O_DIRECTORY));
    if (!c->dir) return detail::classify_proc_open_error(errno, c->pidfd.get(), false);
    c->stat.reset(detail::open_read(c->dir.get(), "stat"));
    if (!c->stat) return detail::classify_proc_open_error(errno, c->pidfd.get(), false);
    return finish_open(std::move(c), anchor->id);
}

}  // namespace

result<process> process::open(pid_t pid) noexcept {
    if (auto ec = check_id(pid)) return ec;
    unique_fd pidfd{detail::pidfd_open(pid, 0)};
    if (!pidfd) {
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
    return detail::handle_access::make_process(open_process_core(pid, std::move(pidfd)));
}

result<process> process::open_self() noexcept { return open(::getpid()); }

result<process_times> process::times() const noexcept {
    if (!impl_) return errc::invalid_handle;
    return detail::query(*impl_->core);
}

result<std::optional<proctimes::exit_status>> process::exit_status() const noexcept {
    if (!impl_) return errc::invalid_handle;
    detail::task_core& c = *impl_->core;
    auto t = detail::query(c);  // reads the zombie's status if it is one now
    std::lock_guard lock(c.mutex);
    if (c.status) return std::optional<proctimes::exit_status>(*c.status);
    // Gone without a record (reaped while nobody watched): it did exit, but
    // its status was never seen.
    if (!t) return t.error() == detail::gone_error(c) ? make_error_code(errc::not_supported) : t.error();
    if (t->state == task_state::running) return std::optional<proctimes::exit_status>();
    return errc::not_supported;  // exited; reaped before its status could be read
}

result<std::string> process::name() const {
    if (!impl_) return errc::invalid_handle;
    return name_from(*impl_->core);
}

result<pid_t> process::parent_id() const noexcept {
    if (!impl_) return errc::invalid_handle;
    stat_read s;
    if (auto ec = read_stat(impl_->core->stat.get(), s, false)) return ec;
    return static_cast<pid_t>(s.rec.ppid);
}

result<std::vector<pid_t>> process::thread_ids() const {
    if (!impl_) return errc::invalid_handle;
    unique_fd task{detail::open_read(impl_->core->dir.get(), "task", O_DIRECTORY)};
    if (!task) return errno == ENOENT || errno == ESRCH ? make_error_code(errc::no_such_process) : detail::file_error(errno);
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

pid_t process::id() const noexcept { return impl_ ? impl_->core->id : 0; }
const process_identity& process::identity() const noexcept {
    static const process_identity none{};
    return impl_ ? impl_->core->identity : none;
}
instant process::creation() const noexcept { return impl_ ? impl_->core->creation : instant{}; }

// ---- thread ------------------------------------------------------------------

struct thread::impl {
    std::shared_ptr<detail::task_core> core;
    ~impl() { detail::unwatch_exit(core, false); }
};

thread::thread() noexcept = default;
thread::thread(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
thread::thread(thread&&) noexcept = default;
thread& thread::operator=(thread&&) noexcept = default;
thread::~thread() = default;

namespace {

// Opens the task files of tid inside tgid, given a (possibly invalid) pidfd.
result<std::shared_ptr<detail::task_core>> open_task(pid_t tgid, pid_t tid, unique_fd pidfd) noexcept {
    auto anchor = get_boot_anchor();
    if (!anchor) return anchor.error();
    if (auto ec = detail::check_proc_pid_namespace()) return ec;  // /proc/<tgid> would be another process
    std::shared_ptr<detail::task_core> p;
    try {
        p = std::make_shared<detail::task_core>();
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
    p->is_thread = true;
    p->id = tid;
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
    return finish_open(std::move(p), anchor->id);
}

result<unique_fd> open_thread_pidfd(pid_t tid) noexcept {
    unique_fd fd{detail::pidfd_open(tid, detail::pidfd_thread_flag)};
    if (fd) return fd;
    if (errno == ESRCH) return errc::no_such_thread;
    if (errno == EINVAL || errno == ENOSYS) return unique_fd{};  // kernel before 6.9: no thread pidfds
    return detail::last_errno();
}

result<thread> make_thread(result<std::shared_ptr<detail::task_core>> core) noexcept {
    if (!core) return core.error();
    std::unique_ptr<thread::impl> p(new (std::nothrow) thread::impl);
    if (!p) return detail::errno_code(ENOMEM);
    p->core = std::move(*core);
    return detail::handle_access::make_thread(std::move(p));
}

}  // namespace

result<thread> thread::open(pid_t tid) noexcept {
    if (auto ec = check_id(tid)) return ec;
    auto pidfd = open_thread_pidfd(tid);
    if (!pidfd) return pidfd.error();
    if (auto ec = detail::check_proc_pid_namespace()) return ec;  // /proc/<tid> would be another task
    // /proc/<tid>/status names the thread group of any tid (the entry is not
    // listed for non-leaders, but it can be opened).
    char path[64];
    std::snprintf(path, sizeof path, "%s/%d/status", detail::proc_root, static_cast<int>(tid));
    unique_fd fd{detail::open_read(AT_FDCWD, path)};
    if (!fd) return detail::classify_proc_open_error(errno, pidfd->get(), true);
    char buf[detail::small_file_max];
    const ssize_t n = detail::pread_small(fd.get(), buf, sizeof buf);
    if (n < 0) return errno == ESRCH ? make_error_code(errc::no_such_thread) : detail::file_error(errno);
    auto st = parse::parse_status(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!st) return errc::malformed_data;
    return make_thread(open_task(static_cast<pid_t>(st->tgid), tid, std::move(*pidfd)));
}

result<thread> thread::open(pid_t pid, pid_t tid) noexcept {
    if (auto ec = check_id(pid)) return ec;
    if (auto ec = check_id(tid)) return ec;
    auto pidfd = open_thread_pidfd(tid);
    if (!pidfd) return pidfd.error();
    return make_thread(open_task(pid, tid, std::move(*pidfd)));
}

result<thread> thread::open_self() noexcept { return open(::getpid(), static_cast<pid_t>(::gettid())); }

result<thread_times> thread::times() const noexcept {
    if (!impl_) return errc::invalid_handle;
    return detail::query(*impl_->core);
}

result<std::string> thread::name() const {
    if (!impl_) return errc::invalid_handle;
    return name_from(*impl_->core);
}

pid_t thread::id() const noexcept { return impl_ ? impl_->core->id : 0; }
pid_t thread::process_id() const noexcept { return impl_ ? impl_->core->tgid : 0; }
const task_identity& thread::identity() const noexcept {
    static const task_identity none{};
    return impl_ ? impl_->core->identity : none;
}
instant thread::creation() const noexcept { return impl_ ? impl_->core->creation : instant{}; }

// ---- internal access ---------------------------------------------------------------

namespace detail {

task_core* handle_access::core(const process& p) noexcept { return p.impl_ ? p.impl_->core.get() : nullptr; }
task_core* handle_access::core(const thread& t) noexcept { return t.impl_ ? t.impl_->core.get() : nullptr; }

result<process> handle_access::make_process(result<std::shared_ptr<task_core>> core) noexcept {
    if (!core) return core.error();
    std::unique_ptr<process::impl> p(new (std::nothrow) process::impl);
    if (!p) return errno_code(ENOMEM);
    p->core = std::move(*core);
    return process(std::move(p));
}

result<thread> handle_access::make_thread(std::unique_ptr<thread::impl> p) noexcept { return thread(std::move(p)); }

result<process> handle_access::open_child(pid_t pid, unique_fd pidfd) noexcept {
    return make_process(open_process_core(pid, std::move(pidfd)));
}

void handle_access::release_child(process& p) noexcept {
    if (!p.impl_) return;
    unwatch_exit(p.impl_->core, true);
    p.impl_->core.reset();  // ~impl must not unwatch it again
    p.impl_.reset();
}

}  // namespace detail

}  // namespace proctimes
