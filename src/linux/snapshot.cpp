// Linux backend of proctimes::take_snapshot and proctimes::snapshotter: one
// walk over /proc. See include/proctimes/snapshot.hpp for the contract.
//
// Cost model (measured, docs/PERFORMANCE.md): the walk is dominated by the
// kernel generating each stat file (open + read + close, several µs per
// task). So the walk does that once per task and as little else as it can:
//  - every path is resolved relative to a kept /proc descriptor (or the
//    process's task/ descriptor), formatted into a stack buffer;
//  - directories are read with getdents64(2) into one large reused buffer;
//  - one reused read buffer per worker; entries are fixed-size structs with
//    inline names, appended to vectors whose capacity a snapshotter keeps;
//  - the owner comes from the owner of a /proc directory (fstat(2) of the
//    task/ descriptor already open, or one fstatat(2)), never from status;
//  - optionally a second walker (see snapshot_options::workers): phase 1
//    shares out pids a few at a time; phase 2 shares out, a few tids at a
//    time, the threads of processes too big for one walker (read through
//    their task/ descriptors, kept open from phase 1).
//
// Identity without pidfds. Each per-task read goes through ONE descriptor
// opened by pid number; a successful pread proves the task it was opened on
// was still alive at that moment, so the number could not yet name another
// task. Everything else looked up by number — the task/ directory, the
// directory owner, the process CPU clock — is therefore taken between that
// open and that pread. Descriptors of task/ and of files under it stay bound
// to their process (lookups through them fail once it is gone).
#include "proctimes/snapshot.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <new>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "cpu_split.hpp"
#include "clock_ns.hpp"
#include "linux/bpf/snapshot_source.hpp"
#include "linux/sys.hpp"
#include "parse/procfs.hpp"
#include "proctimes/boot.hpp"

namespace proctimes {

using std::chrono::nanoseconds;
using detail::unique_fd;

namespace {

constexpr std::size_t dents_buffer_size = 64 * 1024;
// With fewer tasks than this, a second worker costs more to start than it saves.
constexpr std::size_t parallel_min_tasks = 400;
// Pids a worker takes from the shared list at a time.
constexpr std::size_t pids_per_grab = 4;
// A process with at least this many threads has them read by all workers
// (phase 2) instead of by the worker that found it: one big process would
// otherwise leave the other workers idle.
constexpr std::size_t big_process_threads = 64;
// At most this many task/ descriptors are kept open for phase 2.
constexpr std::size_t max_big_processes = 64;
// Threads a worker takes from a big process at a time.
constexpr std::size_t tids_per_grab = 16;

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

ssize_t getdents(int fd, char* buf, std::size_t cap) noexcept {
    long n;
    do {
        n = ::syscall(SYS_getdents64, fd, buf, cap);
    } while (n < 0 && errno == EINTR);
    return static_cast<ssize_t>(n);
}

// What an errno met while reading one task means for the walk.
enum class outcome { vanished, failed };
outcome classify(int err) noexcept {
    return (err == ENOENT || err == ESRCH) ? outcome::vanished : outcome::failed;
}
std::error_code item_error(int err) noexcept { return detail::file_error(err); }

// Everything the walk needs that does not change during it.
struct walk_config {
    int proc_fd = -1;
    bool procfs = false;  // proc_root is a procfs mount (file owners are real)
    bool live = false;    // ... and the caller's own (pids are the caller's)
    bool threads = false;
    bool precise_processes = false;
    bool precise_threads = false;
    bool defer_big = false;  // hand the threads of big processes to phase 2
    // The previous take() whose idle processes' threads may be copied
    // (snapshot_options::reuse_idle_threads_for), or null.
    const snapshot* reuse_from = nullptr;
    boot_id boot{};
    instant taken{};  // the snapshot's timestamp: every entry's sampled_at
    std::int64_t tick_ns = 10'000'000;
    cpu_precision ticks{}, clock{}, sched{};
};

// A process with many threads, whose threads all workers read together in
// phase 2 through its kept task/ descriptor.
struct big_process {
    pid_t pid = 0;
    unique_fd task;
    std::vector<pid_t> tids;
    std::vector<snapshot_thread> slots;  // one per tid
    std::vector<unsigned char> present;  // slot read (the thread did not vanish or fail)
};

// Marks a process entry whose threads are in a big_process (index in
// thread_entries) until the merge.
constexpr std::size_t deferred = static_cast<std::size_t>(-1);

// One walker's reused state and output.
struct worker {
    char buf[detail::small_file_max];
    std::unique_ptr<char[]> dents;
    std::vector<pid_t> tids;
    std::vector<snapshot_process> procs;
    std::vector<snapshot_thread> threads;
    std::vector<snapshot_failure> failures;
    std::vector<std::unique_ptr<big_process>> big;
    std::size_t vanished = 0;
    std::size_t reused = 0;
    std::error_code fatal;

    bool ensure_buffer() noexcept {
        if (!dents) dents.reset(new (std::nothrow) char[dents_buffer_size]);
        return dents != nullptr;
    }
    void clear() noexcept {
        procs.clear();
        threads.clear();
        failures.clear();
        big.clear();
        vanished = 0;
        reused = 0;
        fatal = {};
    }
    void fail(pid_t pid, pid_t tid, snapshot_item item, std::error_code ec) {
        failures.push_back(snapshot_failure{pid, tid, item, ec});
    }
    // Records an errno met on one item: a vanished task is counted, anything
    // else is a failure.
    void met(int err, pid_t pid, pid_t tid, snapshot_item item) {
        if (classify(err) == outcome::vanished)
            ++vanished;
        else
            fail(pid, tid, item, item_error(err));
    }
};

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
        w.fail(pid, 0, snapshot_item::owner, item_error(err));
        return true;
    }
    auto st = parse::parse_status(std::string_view(w.buf, static_cast<std::size_t>(n)));
    if (!st || st->uid_effective < 0) {
        w.fail(pid, 0, snapshot_item::owner, make_error_code(errc::malformed_data));
        return true;
    }
    p.uid = static_cast<uid_t>(st->uid_effective);
    return true;
}

enum class read_status { ok, vanished, failed };

// Reads thread `tid` through the process's task/ descriptor into `t`; a
// failure is recorded in w.failures.
read_status read_thread(worker& w, const walk_config& c, int task_fd, pid_t pid, pid_t tid, snapshot_thread& t) {
    char path[32];
    id_path(path, sizeof path, tid, "stat");
    unique_fd fd{detail::open_read(task_fd, path, 0, c.procfs)};
    if (!fd) {
        const int err = errno;
        w.met(err, pid, tid, snapshot_item::thread);
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
                ++w.vanished;
                return read_status::vanished;
            }
        }
        // No schedstat file (a kernel without CONFIG_SCHED_INFO): stat ticks.
    }
    const ssize_t n = detail::pread_small(fd.get(), w.buf, sizeof w.buf);
    if (n < 0) {
        const int err = errno;
        w.met(err, pid, tid, snapshot_item::thread);
        return classify(err) == outcome::vanished ? read_status::vanished : read_status::failed;
    }
    auto rec = parse::parse_stat(std::string_view(w.buf, static_cast<std::size_t>(n)));
    if (!rec || rec->pid != tid) {
        w.fail(pid, tid, snapshot_item::thread, make_error_code(errc::malformed_data));
        return read_status::failed;
    }
    t.identity = {c.boot, tid, rec->starttime, 0};
    t.pid = pid;
    t.state = rec->state;
    t.name.assign(rec->comm);
    if (!fill_times(c, *rec, true, t.times)) {
        w.fail(pid, tid, snapshot_item::thread, make_error_code(errc::out_of_range));
        return read_status::failed;
    }
    if (total.count() >= 0) apply_total(t.times, total, *rec, c.sched);
    return read_status::ok;
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

// Copies the threads of process `p` (just read, CPU total `total` from its
// clock, thread ids in w.tids) from the previous take() when the process has
// not run since: same identity, same total to the nanosecond, same thread ids,
// and every thread read then. The previous clock read preceded its thread
// reads, so nothing those reads saw has moved. Returns whether it did.
bool reuse_idle_threads(worker& w, const walk_config& c, snapshot_process& p, nanoseconds total) {
    if (!c.reuse_from) return false;
    const snapshot_process* before = c.reuse_from->find(p.pid());
    if (!before || before->identity != p.identity || before->times.precision.source != cpu_source::cpu_clock_and_stat ||
        before->times.kernel + before->times.user != total)
        return false;
    const auto threads = c.reuse_from->threads_of(*before);
    if (threads.size() != w.tids.size()) return false;
    for (std::size_t i = 0; i < threads.size(); ++i)
        if (threads[i].tid() != w.tids[i]) return false;
    for (snapshot_thread t : threads) {
        t.times.sampled_at = c.taken;
        w.threads.push_back(t);
    }
    w.reused += threads.size();
    p.thread_entries = threads.size();
    p.threads_copied = true;
    w.procs.push_back(p);
    return true;
}

// Phase 1: one process, and its threads unless it is big enough to share out.
void read_process(worker& w, const walk_config& c, pid_t pid, std::atomic<std::size_t>& big_count) {
    char path[32];
    id_path(path, sizeof path, pid, "stat");
    unique_fd fd{detail::open_read(c.proc_fd, path, 0, c.procfs)};
    if (!fd) {
        w.met(errno, pid, 0, snapshot_item::process);
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
        w.met(errno, pid, 0, snapshot_item::process);
        return;
    }
    auto rec = parse::parse_stat(std::string_view(w.buf, static_cast<std::size_t>(n)));
    if (!rec || rec->pid != pid) {
        w.fail(pid, 0, snapshot_item::process, make_error_code(errc::malformed_data));
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
    if (!fill_times(c, *rec, false, p.times)) {
        w.fail(pid, 0, snapshot_item::process, make_error_code(errc::out_of_range));
        return;
    }
    const nanoseconds total = std::chrono::seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec};
    if (have_clock) apply_total(p.times, total, *rec, c.clock);
    if (!c.procfs && !read_owner(w, c, pid, p)) {
        ++w.vanished;
        return;
    }
    p.first_thread = w.threads.size();
    if (!c.threads) {
        w.procs.push_back(p);
        return;
    }
    if (task_err != 0) {
        if (classify(task_err) == outcome::vanished) {
            ++w.vanished;
            return;
        }
        w.fail(pid, 0, snapshot_item::thread_list, item_error(task_err));
        w.procs.push_back(p);
        return;
    }
    if (const int err = list_tids(w, task.get()); err != 0) {
        // It existed when stat was read and has exited since: skip it whole.
        if (classify(err) == outcome::vanished) {
            ++w.vanished;
            return;
        }
        w.fail(pid, 0, snapshot_item::thread_list, item_error(err));
        w.procs.push_back(p);
        return;
    }
    if (have_clock && reuse_idle_threads(w, c, p, total)) return;
    if (c.defer_big && w.tids.size() >= big_process_threads &&
        big_count.fetch_add(1, std::memory_order_relaxed) < max_big_processes) {
        auto job = std::make_unique<big_process>();
        job->pid = pid;
        job->task = std::move(task);
        job->tids = w.tids;
        job->slots.resize(job->tids.size());
        job->present.assign(job->tids.size(), 0);
        p.first_thread = deferred;
        p.thread_entries = w.big.size();
        w.big.push_back(std::move(job));
        w.procs.push_back(p);
        return;
    }
    snapshot_thread t;
    for (const pid_t tid : w.tids)
        if (read_thread(w, c, task.get(), pid, tid, t) == read_status::ok) w.threads.push_back(t);
    p.thread_entries = w.threads.size() - p.first_thread;
    w.procs.push_back(p);
}

// Reads the pids of proc_fd (ascending) into `pids`.
std::error_code list_pids(int proc_fd, char* dents, std::vector<pid_t>& pids) {
    pids.clear();
    if (::lseek(proc_fd, 0, SEEK_SET) < 0) return detail::last_errno();
    for (;;) {
        const ssize_t n = getdents(proc_fd, dents, dents_buffer_size);
        if (n == 0) break;
        if (n < 0) return detail::last_errno();
        std::string_view buf(dents, static_cast<std::size_t>(n));
        while (auto e = parse::next_dirent(buf)) {
            if (e->type != DT_DIR && e->type != DT_UNKNOWN) continue;
            if (auto id = parse::parse_id(e->name); id && *id > 0 && *id <= detail::pid_max_limit)
                pids.push_back(static_cast<pid_t>(*id));
        }
    }
    // procfs lists pids in ascending order; a copied tree need not.
    if (!std::is_sorted(pids.begin(), pids.end())) std::sort(pids.begin(), pids.end());
    return {};
}

// Field 4 of /proc/loadavg, "running/total": the tasks runnable right now
// (the reader included) and all tasks (threads) of the system.
struct task_load {
    std::size_t running = 0;
    std::size_t total = 0;
};
task_load system_load(int proc_fd, char* buf, std::size_t cap) noexcept {
    unique_fd fd{detail::open_read(proc_fd, "loadavg")};
    if (!fd) return {};
    const ssize_t n = detail::pread_small(fd.get(), buf, cap);
    if (n <= 0) return {};
    std::string_view s(buf, static_cast<std::size_t>(n));
    for (int i = 0; i < 3; ++i) {
        const auto sp = s.find(' ');
        if (sp == std::string_view::npos) return {};
        s.remove_prefix(sp + 1);
    }
    s = s.substr(0, s.find(' '));
    const auto slash = s.find('/');
    if (slash == std::string_view::npos) return {};
    auto running = parse::parse_id(s.substr(0, slash));
    auto total = parse::parse_id(s.substr(slash + 1));
    if (!running || !total) return {};
    return {static_cast<std::size_t>(*running), static_cast<std::size_t>(*total)};
}

// CPUs this thread may run on.
std::size_t usable_cpus() noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<std::size_t>(CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

// Whether a procfs mount shows the caller's pid namespace: its "self" names us.
bool is_live_procfs(int proc_fd) noexcept {
    char link[32];
    const ssize_t n = ::readlinkat(proc_fd, "self", link, sizeof link - 1);
    if (n <= 0) return false;
    auto id = parse::parse_id(std::string_view(link, static_cast<std::size_t>(n)));
    return id && *id == ::getpid();
}

cpu_precision make_precision(const walk_config& c, cpu_source s) noexcept {
    const nanoseconds tick{c.tick_ns};
    return {tick, s == cpu_source::stat_ticks ? tick : nanoseconds{1}, tick, s};
}

}  // namespace

// ---- snapshot ----------------------------------------------------------------

const snapshot_process* snapshot::find(pid_t pid) const noexcept {
    auto it = std::lower_bound(processes.begin(), processes.end(), pid,
                               [](const snapshot_process& p, pid_t v) { return p.pid() < v; });
    return (it != processes.end() && it->pid() == pid) ? &*it : nullptr;
}

// ---- snapshotter -------------------------------------------------------------------

struct snapshotter::impl {
    snapshot_options options;
    unique_fd proc;
    bool procfs = false;
    bool live = false;
    std::vector<pid_t> pids;
    std::vector<std::unique_ptr<worker>> workers;
    // For snapshot_options::reuse_idle_threads_for: the last snapshot taken,
    // and when (CLOCK_BOOTTIME) the last walk that copied nothing started.
    snapshot previous;
    bool have_previous = false;
    std::int64_t last_full_walk = 0;
    // The eBPF source, when options.source allows it and it can be used (docs/BPF.md).
    detail::bpf_snapshot_source bpf;

    result<void> take(snapshot& out) noexcept;
    void merge(snapshot& out, std::size_t used);
};

snapshotter::snapshotter() noexcept = default;
snapshotter::snapshotter(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
snapshotter::snapshotter(snapshotter&&) noexcept = default;
snapshotter& snapshotter::operator=(snapshotter&&) noexcept = default;
snapshotter::~snapshotter() = default;

result<snapshotter> snapshotter::open(snapshot_options options) noexcept {
    std::unique_ptr<impl> p(new (std::nothrow) impl);
    if (!p) return detail::errno_code(ENOMEM);
    try {
        p->options = std::move(options);
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
    const std::string& root = p->options.proc_root;
    p->proc.reset(detail::open_read(AT_FDCWD, root.empty() ? "/proc" : root.c_str(), O_DIRECTORY));
    if (!p->proc) return errno == ENOENT ? make_error_code(errc::proc_unavailable) : detail::file_error(errno);
    struct statfs sf {};
    p->procfs = ::fstatfs(p->proc.get(), &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
    p->live = p->procfs && is_live_procfs(p->proc.get());
    p->bpf = detail::bpf_snapshot_source::open(p->options, p->live);
    if ((root.empty() || root == detail::proc_root) && !p->procfs) return errc::proc_unavailable;
    return snapshotter(std::move(p));
}

const snapshot_options& snapshotter::options() const noexcept {
    static const snapshot_options none{};
    return impl_ ? impl_->options : none;
}

result<snapshot> snapshotter::take() noexcept {
    try {
        snapshot s;
        if (auto r = take(s); !r) return r.error();
        return s;
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
}

result<void> snapshotter::take(snapshot& out) noexcept {
    if (!impl_) return errc::invalid_handle;
    auto r = impl_->take(out);
    if (!r) {
        out.processes.clear();
        out.threads.clear();
        out.failures.clear();
        out.vanished = 0;
        out.reused_threads = 0;
    }
    return r;
}

result<void> snapshotter::impl::take(snapshot& out) noexcept {
    if (bpf) return bpf.take(out, options);
    out.source = snapshot_source::procfs;
    auto anchor = get_boot_anchor();
    if (!anchor) return anchor.error();

    walk_config c;
    c.proc_fd = proc.get();
    c.procfs = procfs;
    c.live = live;
    c.threads = options.threads;
    c.precise_processes = live && options.cpu != snapshot_cpu::ticks;
    c.precise_threads = options.threads && options.cpu == snapshot_cpu::precise;
    c.boot = anchor->id;
    c.tick_ns = 1'000'000'000 / clock_ticks_per_second();
    c.ticks = make_precision(c, cpu_source::stat_ticks);
    c.clock = make_precision(c, cpu_source::cpu_clock_and_stat);
    c.sched = make_precision(c, cpu_source::schedstat_and_stat);

    try {
        if (workers.empty()) workers.push_back(std::make_unique<worker>());
        worker& first = *workers.front();
        if (!first.ensure_buffer()) return detail::errno_code(ENOMEM);

        const std::int64_t start = detail::now_ns(CLOCK_BOOTTIME);
        out.since_boot = nanoseconds{start};
        out.taken = anchor->boot + nanoseconds{start};
        c.taken = out.taken;
        out.boot = anchor->id;
        out.has_threads = options.threads;

        if (auto ec = list_pids(proc.get(), first.dents.get(), pids)) return ec;

        const bool reusing = options.reuse_idle_threads_for.count() > 0 && options.threads && c.precise_processes;
        if (reusing && have_previous && previous.boot == out.boot && previous.has_threads &&
            start - last_full_walk < options.reuse_idle_threads_for.count())
            c.reuse_from = &previous;

        // How many walkers. A second one pays off only for a large walk
        // (starting a thread costs ~50 µs) and only if a CPU is idle: on a
        // busy machine the helper is preempted while holding a share of the
        // work, and the walk ends up slower than with one (measured:
        // docs/PERFORMANCE.md).
        std::size_t want = options.workers;
        if (want == 0) {
            want = 1;
            const std::size_t cpus = usable_cpus();
            if (cpus >= 2 && live) {
                const auto load = system_load(proc.get(), first.buf, sizeof first.buf);
                const std::size_t tasks = options.threads ? std::max(pids.size(), load.total) : pids.size();
                if (tasks >= parallel_min_tasks && load.running > 0 && load.running < cpus) want = 2;
            }
        }
        want = std::max<std::size_t>(want, 1);
        while (workers.size() < want) workers.push_back(std::make_unique<worker>());
        for (std::size_t i = 0; i < want; ++i) {
            workers[i]->clear();
            if (!workers[i]->ensure_buffer()) return detail::errno_code(ENOMEM);
        }
        c.defer_big = want > 1;

        // Runs body(worker) on `want` workers: the calling thread and helpers.
        // Returns how many ran (fewer if a thread could not be started).
        std::atomic<bool> stop{false};
        auto on_workers = [&](auto body) {
            auto guarded = [&](worker& w) noexcept {
                try {
                    body(w);
                } catch (...) {
                    w.fatal = detail::errno_code(ENOMEM);
                    stop.store(true, std::memory_order_relaxed);
                }
            };
            std::vector<std::thread> helpers;
            try {
                helpers.reserve(want - 1);
                for (std::size_t i = 1; i < want; ++i) helpers.emplace_back(guarded, std::ref(*workers[i]));
            } catch (...) {
                // Could not start a thread: the others share the work.
            }
            guarded(first);
            for (auto& t : helpers) t.join();
            return static_cast<unsigned>(helpers.size() + 1);
        };

        // Phase 1: processes, pids shared out a few at a time.
        std::atomic<std::size_t> next{0};
        std::atomic<std::size_t> big_count{0};
        out.workers = on_workers([&](worker& w) {
            for (;;) {
                if (stop.load(std::memory_order_relaxed)) break;
                const std::size_t i = next.fetch_add(pids_per_grab, std::memory_order_relaxed);
                if (i >= pids.size()) break;
                const std::size_t end = std::min(pids.size(), i + pids_per_grab);
                for (std::size_t k = i; k < end; ++k) read_process(w, c, pids[k], big_count);
            }
        });
        // A worker that did not start took no pids: fine. One that hit ENOMEM: fail.
        for (std::size_t i = 0; i < want; ++i)
            if (workers[i]->fatal) return workers[i]->fatal;

        // Phase 2: the threads of big processes, a few tids at a time.
        struct chunk {
            big_process* job;
            std::size_t begin, end;
        };
        std::vector<chunk> chunks;
        for (std::size_t i = 0; i < want; ++i)
            for (auto& job : workers[i]->big)
                for (std::size_t b = 0; b < job->tids.size(); b += tids_per_grab)
                    chunks.push_back({job.get(), b, std::min(job->tids.size(), b + tids_per_grab)});
        if (!chunks.empty()) {
            next.store(0);
            (void)on_workers([&](worker& w) {
                snapshot_thread t;
                for (;;) {
                    if (stop.load(std::memory_order_relaxed)) break;
                    const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
                    if (i >= chunks.size()) break;
                    const chunk& ch = chunks[i];
                    for (std::size_t k = ch.begin; k < ch.end; ++k) {
                        if (read_thread(w, c, ch.job->task.get(), ch.job->pid, ch.job->tids[k], t) == read_status::ok) {
                            ch.job->slots[k] = t;
                            ch.job->present[k] = 1;
                        }
                    }
                }
            });
            for (std::size_t i = 0; i < want; ++i)
                if (workers[i]->fatal) return workers[i]->fatal;
        }
        out.walk_duration = nanoseconds{detail::now_ns(CLOCK_BOOTTIME) - start};
        merge(out, want);
        if (reusing) {
            // Kept for the next take(); the vectors keep their capacity.
            if (!c.reuse_from) last_full_walk = start;
            previous.boot = out.boot;
            previous.has_threads = out.has_threads;
            previous.processes = out.processes;
            previous.threads = out.threads;
            have_previous = true;
        }
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
    return {};
}

// Assembles the workers' output into `out` in pid order.
void snapshotter::impl::merge(snapshot& out, std::size_t used) {
    out.vanished = 0;
    out.reused_threads = 0;
    if (used == 1) {
        // The common case: hand over the vectors; `out`'s old ones become the
        // worker's buffers for the next walk.
        worker& w = *workers.front();
        std::swap(out.processes, w.procs);
        std::swap(out.threads, w.threads);
        std::swap(out.failures, w.failures);
        out.vanished = w.vanished;
        out.reused_threads = w.reused;
        w.clear();
        return;
    }
    std::size_t np = 0, nt = 0, nf = 0;
    for (std::size_t i = 0; i < used; ++i) {
        const worker& w = *workers[i];
        np += w.procs.size();
        nt += w.threads.size();
        nf += w.failures.size();
        out.vanished += w.vanished;
        out.reused_threads += w.reused;
        for (const auto& job : w.big) nt += job->tids.size();
    }
    out.processes.clear();
    out.threads.clear();
    out.failures.clear();
    out.processes.reserve(np);
    out.threads.reserve(nt);
    out.failures.reserve(nf);
    // Each worker's processes ascend (pids are taken in order); merge them.
    std::vector<std::size_t> pos(used, 0);
    for (;;) {
        std::size_t best = used;
        for (std::size_t i = 0; i < used; ++i) {
            if (pos[i] < workers[i]->procs.size() &&
                (best == used || workers[i]->procs[pos[i]].pid() < workers[best]->procs[pos[best]].pid()))
                best = i;
        }
        if (best == used) break;
        const worker& w = *workers[best];
        snapshot_process p = w.procs[pos[best]++];
        if (p.first_thread == deferred) {
            const big_process& job = *w.big[p.thread_entries];
            p.first_thread = out.threads.size();
            for (std::size_t k = 0; k < job.tids.size(); ++k)
                if (job.present[k]) out.threads.push_back(job.slots[k]);
            p.thread_entries = out.threads.size() - p.first_thread;
        } else {
            const auto* t = w.threads.data() + p.first_thread;
            p.first_thread = out.threads.size();
            out.threads.insert(out.threads.end(), t, t + p.thread_entries);
        }
        out.processes.push_back(p);
    }
    for (std::size_t i = 0; i < used; ++i)
        out.failures.insert(out.failures.end(), workers[i]->failures.begin(), workers[i]->failures.end());
    std::stable_sort(out.failures.begin(), out.failures.end(),
                     [](const snapshot_failure& a, const snapshot_failure& b) {
                         return a.pid != b.pid ? a.pid < b.pid : a.tid < b.tid;
                     });
    for (std::size_t i = 0; i < used; ++i) workers[i]->clear();
}

result<snapshot> take_snapshot(const snapshot_options& options) noexcept {
    try {
        // One snapshot never pays for loading the BPF program (docs/BPF.md).
        snapshot_options once = options;
        if (once.source == snapshot_source::automatic) once.source = snapshot_source::procfs;
        auto s = snapshotter::open(std::move(once));
        if (!s) return s.error();
        return s->take();
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
}

// ---- delta -------------------------------------------------------------------------

namespace {

cpu_precision coarser(const cpu_precision& a, const cpu_precision& b) noexcept {
    return a.total_resolution >= b.total_resolution ? a : b;
}

double percent(nanoseconds used, nanoseconds interval) noexcept {
    if (interval.count() <= 0) return 0;
    return 100.0 * static_cast<double>(used.count()) / static_cast<double>(interval.count());
}

// CPU used between two samples of the same task.
void between(cpu_delta& d, const task_times& a, const task_times& b) noexcept {
    nanoseconds total = b.cpu() - a.cpu();
    if (total.count() < 0) total = nanoseconds{0};
    nanoseconds k = std::clamp(b.kernel - a.kernel, nanoseconds{0}, total);
    d.kernel = k;
    d.user = total - k;
    d.precision = coarser(a.precision, b.precision);
}

// A task absent from `before`: created in the interval, or unseen then.
void fresh(cpu_delta& d, const task_times& b, std::uint64_t start_ticks, std::uint64_t before_tick) noexcept {
    d.precision = b.precision;
    if (start_ticks >= before_tick) {
        d.basis = delta_basis::created;
        d.kernel = b.kernel;
        d.user = b.user;
    } else {
        d.basis = delta_basis::unseen;
    }
}

}  // namespace

std::chrono::nanoseconds snapshot_delta::total_cpu() const noexcept {
    nanoseconds sum{0};
    for (const auto& p : processes) sum += p.cpu();
    return sum;
}

result<snapshot_delta> compute_delta(const snapshot& before, const snapshot& after) noexcept {
    if (before.boot != after.boot || after.since_boot < before.since_boot) return errc::invalid_argument;
    try {
        snapshot_delta d;
        d.interval = after.since_boot - before.since_boot;
        const std::int64_t tick_ns = 1'000'000'000 / clock_ticks_per_second();
        // Start ticks at or after this one began after `before` was taken (up
        // to one tick early: a start time is floored to its tick).
        const auto before_tick = static_cast<std::uint64_t>(before.since_boot.count() / tick_ns);
        const bool with_threads = before.has_threads && after.has_threads;
        d.processes.resize(after.processes.size());
        if (with_threads) d.threads.resize(after.threads.size());

        auto key_less = [](const task_identity& a, const task_identity& b) {
            return a.id != b.id ? a.id < b.id : a.start_ticks < b.start_ticks;
        };
        std::size_t i = 0;  // into before.processes
        for (std::size_t j = 0; j < after.processes.size(); ++j) {
            const auto& b = after.processes[j];
            auto& e = d.processes[j];
            e.identity = b.identity;
            e.pid = b.pid();
            while (i < before.processes.size() && key_less(before.processes[i].identity, b.identity)) {
                d.exited.push_back(before.processes[i].identity);
                ++i;
            }
            const snapshot_process* a = nullptr;
            if (i < before.processes.size() && before.processes[i].pid() == b.pid() &&
                before.processes[i].identity.start_ticks == b.identity.start_ticks)
                a = &before.processes[i++];
            if (a)
                between(e, a->times, b.times);
            else
                fresh(e, b.times, b.identity.start_ticks, before_tick);
            e.cpu_percent = percent(e.cpu(), d.interval);

            if (!with_threads) continue;
            const auto bt = after.threads_of(b);
            const auto at = a ? before.threads_of(*a) : std::span<const snapshot_thread>{};
            std::size_t k = 0;
            for (std::size_t m = 0; m < bt.size(); ++m) {
                const auto& t = bt[m];
                auto& te = d.threads[b.first_thread + m];
                te.identity = t.identity;
                te.pid = t.pid;
                while (k < at.size() && key_less(at[k].identity, t.identity)) ++k;
                if (k < at.size() && at[k].identity.id == t.identity.id &&
                    at[k].identity.start_ticks == t.identity.start_ticks)
                    between(te, at[k++].times, t.times);
                else
                    fresh(te, t.times, t.identity.start_ticks, before_tick);
                te.cpu_percent = percent(te.cpu(), d.interval);
            }
        }
        for (; i < before.processes.size(); ++i) d.exited.push_back(before.processes[i].identity);
        return d;
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
}

}  // namespace proctimes
