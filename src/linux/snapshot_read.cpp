// SPDX-License-Identifier: MIT
// The /proc snapshot source, reading one task: a process's stat (and CPU
// clock, owner, thread list) or a thread's stat (and schedstat), parsed into
// snapshot entries. Linux only; see src/linux/snapshot_proc.hpp for how
// identity is kept without pidfds.
//
// Cost model (measured, docs/PERFORMANCE.md): a walk is dominated by the
// kernel generating each stat file (open + read + close, several µs per
// task). So each task is read once and as little else is done as can be:
//  - every path is resolved relative to a kept /proc descriptor (or the
//    process's task/ descriptor), formatted into a stack buffer;
//  - one reused read buffer per walker; entries are fixed-size structs with
//    inline names, appended to vectors whose capacity a snapshotter keeps;
//  - the owner comes from the owner of a /proc directory (fstat(2) of the
//    task/ descriptor already open, or one fstatat(2)), never from status.
#include "linux/snapshot_proc.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>

#include "clock_ns.hpp"
#include "cpu_split.hpp"
#include "parse/procfs.hpp"
#include "proctimes/boot.hpp"

namespace proctimes::inline v1::detail::proc_snapshot {

using std::chrono::nanoseconds;

namespace {

// Formats "<id>/<leaf>" into buf (NUL-terminated).
void id_path(char* buf, std::size_t cap, pid_t id, const char* leaf) noexcept {
    auto r = std::to_chars(buf, buf + cap - 1, static_cast<long>(id));
    char* p = r.ptr;
    if (leaf) {
        *p++ = '/';
        const std::size_t n = std::strlen(leaf);
        std::memcpy(p, leaf, n);
        p += n;
    }
    *p = '\0';
}

// What an errno met while reading one task means for the walk.
enum class outcome { vanished, failed };
outcome classify(int err) noexcept { return (err == ENOENT || err == ESRCH) ? outcome::vanished : outcome::failed; }
std::error_code item_error(int err) noexcept { return detail::file_error(err); }

// Records an errno met on one item: a vanished task is counted, anything
// else is a failure.
void met(worker& w, int err, pid_t pid, pid_t tid, snapshot_item item) {
    if (classify(err) == outcome::vanished)
        ++w.out.vanished;
    else
        w.out.fail(pid, tid, item, item_error(err));
}

nanoseconds ticks_ns(const walk_config& c, std::uint64_t t) noexcept {
    return nanoseconds{static_cast<std::int64_t>(t) * c.tick_ns};
}

// Fills creation, state and the tick-only CPU times.
bool fill_times(const walk_config& c, const parse::stat_record& rec, bool thread, task_times& t) noexcept {
    auto created = instant_from_start_ticks(rec.starttime);
    if (!created) return false;
    t.creation = *created;
    t.exit.reset();
    t.kernel = ticks_ns(c, rec.stime);
    t.user = ticks_ns(c, rec.utime);
    t.precision = c.ticks;
    // A zombie's values are final. (A process whose leader thread exited
    // while other threads run shows the leader's 'Z' too: it still runs.)
    const bool ended = thread ? parse::is_dead(rec) : parse::process_ended(rec);
    t.state = ended ? task_state::exited : task_state::running;
    t.sampled_at = c.taken;
    return true;
}

void apply_total(task_times& t, nanoseconds total, const parse::stat_record& rec, const cpu_precision& p) noexcept {
    // Kernel threads never run in user mode: with no ticks sampled, all is kernel time.
    const auto ku = detail::split_by_ticks(total, rec.utime, rec.stime, (rec.flags & parse::pf_kthread) != 0);
    t.kernel = ku.kernel;
    t.user = ku.user;
    t.precision = p;
}

// The effective uid: the owner of /proc/<pid> (or of /proc/<pid>/task).
// procfs gives the files of a non-dumpable process (one that changed uid, or
// called prctl(PR_SET_DUMPABLE, 0)) to root, but its world-readable
// directories always to the effective uid (task_dump_owner() in
// fs/proc/base.c; proc(5), /proc/pid) — the way ps has found owners since
// before status existed.
uid_t dir_owner(int proc_fd, pid_t pid) noexcept {
    char path[16];
    id_path(path, sizeof path, pid, nullptr);
    struct stat st {};
    if (::fstatat(proc_fd, path, &st, 0) != 0) return snapshot_process::unknown_uid;
    return st.st_uid;
}

// The effective uid from <pid>/status, for trees that are not procfs (a
// captured copy), where file owners mean nothing. Returns false when the
// process vanished (the caller drops it).
bool read_owner(worker& w, const walk_config& c, pid_t pid, snapshot_process& p) {
    char path[32];
    id_path(path, sizeof path, pid, "status");
    unique_fd fd{detail::open_read(c.proc_fd, path, 0, c.procfs)};
    ssize_t n = -1;
    int err = 0;
    if (fd) {
        n = detail::pread_small(fd.get(), w.buf, sizeof w.buf);
        if (n < 0) err = errno;
    } else {
        err = errno;
    }
    if (n < 0) {
        if (classify(err) == outcome::vanished) return false;
        w.out.fail(pid, 0, snapshot_item::owner, item_error(err));
        return true;
    }
    auto st = parse::parse_status(std::string_view(w.buf, static_cast<std::size_t>(n)));
    if (!st || st->uid_effective < 0) {
        w.out.fail(pid, 0, snapshot_item::owner, make_error_code(errc::malformed_data));
        return true;
    }
    p.uid = static_cast<uid_t>(st->uid_effective);
    return true;
}

// Lists the task/ directory into w.tids (ascending). Returns 0 or an errno.
int list_tids(worker& w, int task_fd) {
    w.tids.clear();
    for (;;) {
        const ssize_t n = getdents(task_fd, w.dents.get(), dents_buffer_size);
        if (n == 0) break;
        if (n < 0) return errno;
        std::string_view buf(w.dents.get(), static_cast<std::size_t>(n));
        while (auto e = parse::next_dirent(buf)) {
            if (auto id = parse::parse_id(e->name); id && *id > 0 && *id <= detail::pid_max_limit)
                w.tids.push_back(static_cast<pid_t>(*id));
        }
    }
    std::sort(w.tids.begin(), w.tids.end());
    return 0;
}

}  // namespace

// Reads thread `tid` through the process's task/ descriptor into `t`; a
// failure is recorded in w.out.failures.
read_status read_thread(worker& w, const walk_config& c, int task_fd, pid_t pid, pid_t tid, snapshot_thread& t) {
    char path[32];
    id_path(path, sizeof path, tid, "stat");
    unique_fd fd{detail::open_read(task_fd, path, 0, c.procfs)};
    if (!fd) {
        const int err = errno;
        met(w, err, pid, tid, snapshot_item::thread);
        return classify(err) == outcome::vanished ? read_status::vanished : read_status::failed;
    }
    // schedstat between the open and the pread of stat: the pread then proves
    // both descriptors were opened on the same, still existing task.
    nanoseconds total{-1};
    if (c.precise_threads) {
        id_path(path, sizeof path, tid, "schedstat");
        unique_fd sfd{detail::open_read(task_fd, path, 0, c.procfs)};
        if (sfd) {
            const ssize_t n = detail::pread_small(sfd.get(), w.buf, sizeof w.buf);
            if (n >= 0) {
                if (auto ss = parse::parse_schedstat(std::string_view(w.buf, static_cast<std::size_t>(n))))
                    total = nanoseconds{static_cast<std::int64_t>(ss->run_ns)};
            } else if (classify(errno) == outcome::vanished) {
                ++w.out.vanished;
                return read_status::vanished;
            }
        }
        // No schedstat file (a kernel without CONFIG_SCHED_INFO): stat ticks.
    }
    const ssize_t n = detail::pread_small(fd.get(), w.buf, sizeof w.buf);
    if (n < 0) {
        const int err = errno;
        met(w, err, pid, tid, snapshot_item::thread);
        return classify(err) == outcome::vanished ? read_status::vanished : read_status::failed;
    }
    auto rec = parse::parse_stat(std::string_view(w.buf, static_cast<std::size_t>(n)));
    if (!rec || rec->pid != tid) {
        w.out.fail(pid, tid, snapshot_item::thread, make_error_code(errc::malformed_data));
        return read_status::failed;
    }
    t.identity = {c.boot, tid, rec->starttime, 0};
    t.pid = pid;
    t.state = rec->state;
    t.name.assign(rec->comm);
    if (!fill_times(c, *rec, true, t.times)) {
        w.out.fail(pid, tid, snapshot_item::thread, make_error_code(errc::out_of_range));
        return read_status::failed;
    }
    if (total.count() >= 0) apply_total(t.times, total, *rec, c.sched);
    return read_status::ok;
}

// Phase 1: one process, and its threads unless it is big enough to share out.
void read_process(worker& w, const walk_config& c, pid_t pid, std::atomic<std::size_t>& big_count) {
    char path[32];
    id_path(path, sizeof path, pid, "stat");
    unique_fd fd{detail::open_read(c.proc_fd, path, 0, c.procfs)};
    if (!fd) {
        met(w, errno, pid, 0, snapshot_item::process);
        return;
    }
    // Everything looked up by pid NUMBER — the task/ directory, the owner, the
    // CPU clock — happens between the open and the pread of the stat
    // descriptor: a successful pread proves the process still existed, so the
    // number could not yet name another process.
    unique_fd task;
    int task_err = 0;
    if (c.threads) {
        id_path(path, sizeof path, pid, "task");
        task.reset(detail::open_read(c.proc_fd, path, O_DIRECTORY));
        if (!task) task_err = errno;
    }
    uid_t owner = snapshot_process::unknown_uid;
    if (c.procfs) {
        struct stat st {};
        if (task && ::fstat(task.get(), &st) == 0)
            owner = st.st_uid;
        else
            owner = dir_owner(c.proc_fd, pid);
    }
    timespec ts{};
    const bool have_clock = c.precise_processes && ::clock_gettime(detail::process_cpu_clock_id(pid), &ts) == 0;
    const ssize_t n = detail::pread_small(fd.get(), w.buf, sizeof w.buf);
    if (n < 0) {
        met(w, errno, pid, 0, snapshot_item::process);
        return;
    }
    auto rec = parse::parse_stat(std::string_view(w.buf, static_cast<std::size_t>(n)));
    if (!rec || rec->pid != pid) {
        w.out.fail(pid, 0, snapshot_item::process, make_error_code(errc::malformed_data));
        return;
    }
    fd.reset();
    snapshot_process p;
    p.identity = {c.boot, pid, rec->starttime, 0};
    p.parent_pid = static_cast<pid_t>(rec->ppid);
    p.uid = owner;
    p.state = rec->state;
    p.kernel_thread = (rec->flags & parse::pf_kthread) != 0;
    p.thread_count = static_cast<std::int32_t>(rec->num_threads);
    p.name.assign(rec->comm);
    // Signed in the kernel's output (clock_t); never negative in practice.
    p.children_kernel = ticks_ns(c, static_cast<std::uint64_t>(std::max<std::int64_t>(rec->cstime, 0)));
    p.children_user = ticks_ns(c, static_cast<std::uint64_t>(std::max<std::int64_t>(rec->cutime, 0)));
    if (!fill_times(c, *rec, false, p.times)) {
        w.out.fail(pid, 0, snapshot_item::process, make_error_code(errc::out_of_range));
        return;
    }
    const nanoseconds total = detail::to_ns(ts);
    if (have_clock) apply_total(p.times, total, *rec, c.clock);
    if (!c.procfs && !read_owner(w, c, pid, p)) {
        ++w.out.vanished;
        return;
    }
    p.first_thread = w.out.threads.size();
    if (!c.threads) {
        w.out.procs.push_back(p);
        return;
    }
    if (task_err != 0) {
        if (classify(task_err) == outcome::vanished) {
            ++w.out.vanished;
            return;
        }
        w.out.fail(pid, 0, snapshot_item::thread_list, item_error(task_err));
        w.out.procs.push_back(p);
        return;
    }
    // A live process of one thread has one entry in task/, its own pid (a
    // leader that ended early is a zombie, and stays listed beside the
    // threads that run on): no listing needed. A thread started since the
    // stat read is seen at the next snapshot, as one started after a listing.
    const bool one_thread = rec->num_threads == 1 && !parse::is_dead(*rec);
    if (one_thread) w.tids.assign(1, pid);
    if (const int err = one_thread ? 0 : list_tids(w, task.get()); err != 0) {
        // It existed when stat was read and has exited since: skip it whole.
        if (classify(err) == outcome::vanished) {
            ++w.out.vanished;
            return;
        }
        w.out.fail(pid, 0, snapshot_item::thread_list, item_error(err));
        w.out.procs.push_back(p);
        return;
    }
    if (have_clock && c.reuse_from &&
        copy_idle_threads(*c.reuse_from, p, total, cpu_source::cpu_clock_and_stat, w.tids, c.taken, w.out))
        return;
    if (c.defer_big && w.tids.size() >= big_process_threads &&
        big_count.fetch_add(1, std::memory_order_relaxed) < max_big_processes) {
        auto job = std::make_unique<big_process>();
        job->pid = pid;
        job->task = std::move(task);
        job->tids = w.tids;
        job->slots.resize(job->tids.size());
        job->present.assign(job->tids.size(), 0);
        p.first_thread = deferred_threads;
        p.thread_entries = w.out.deferred.size();
        w.out.deferred.push_back(std::move(job));
        w.out.procs.push_back(p);
        return;
    }
    snapshot_thread t;
    for (const pid_t tid : w.tids)
        if (read_thread(w, c, task.get(), pid, tid, t) == read_status::ok) w.out.threads.push_back(t);
    p.thread_entries = w.out.threads.size() - p.first_thread;
    w.out.procs.push_back(p);
}

}  // namespace proctimes::inline v1::detail::proc_snapshot
