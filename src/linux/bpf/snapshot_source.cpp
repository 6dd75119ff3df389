// SPDX-License-Identifier: MIT
// The eBPF snapshot source: one read of the task iterator, turned into the
// same processes + threads model the /proc walk fills.
//
// What the kernel hands over per task (records.h): start_boottime (ns since
// boot: /proc floors the same value to a 10 ms tick), se.sum_exec_runtime
// (the schedstat/CPU-clock counter), utime/stime (tick-sampled, ns), and for
// the thread group the counters of its ended threads (signal_struct). A
// process's total is the group's ended threads plus its live threads — the
// sum thread_group_cputime() forms for the process CPU clock — split by the
// summed utime:stime ratio, as cputime_adjust() splits /proc's stat.
#include "linux/bpf/snapshot_source.hpp"
#include "precision.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <span>
#include <string_view>
#include <utility>

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock_ns.hpp"
#include "cpu_split.hpp"
#include "linux/bpf/loader.hpp"
#include "linux/bpf/snapshot_values.hpp"
#include "linux/fork_generation.hpp"
#include "linux/sys.hpp"
#include "parse/bpf_records.hpp"
#include "parse/loadavg.hpp"
#include "proctimes/boot.hpp"
#include "settings.hpp"
#include "task_iter.skel.h"
#ifdef PROCTIMES_BPF_TASK_WALK
#include "task_walk.skel.h"
#endif

namespace proctimes::inline v1 {
namespace detail {

using std::chrono::nanoseconds;

// The loaded programs: the task walk where the kernel runs it, else (or
// once a walk found its ring buffer too small) the task iterator.
struct bpf_task_iter {
    proctimes_task_iter* skel = nullptr;
    bpf_link* link = nullptr;
#ifdef PROCTIMES_BPF_TASK_WALK
    proctimes_task_walk* walk = nullptr;
    ring_buffer* ring = nullptr;
    // Where the ring's records are copied; the callback never allocates.
    struct sink {
        std::byte* data = nullptr;
        std::size_t capacity = 0, used = 0;
        bool overflow = false;
    } out;
#endif
    // One walk at a time (snapshotters of a process share the loaded
    // programs): one run and drain of the walk's ring buffer, the iterator's
    // lazy load, one read of the iterator (whose program keeps state across
    // a walk).
    std::mutex mutex;
    ~bpf_task_iter() {
#ifdef PROCTIMES_BPF_TASK_WALK
        ring_buffer__free(ring);
        proctimes_task_walk__destroy(walk);
#endif
        bpf_link__destroy(link);
        proctimes_task_iter__destroy(skel);
    }
};

struct bpf_snapshot_source::buffers {
    std::vector<std::byte> bytes;
    std::vector<parse::bpf_task_record> records;
    std::vector<std::pair<std::uint64_t, std::size_t>> order;  // (tgid << 32 | tid, index into records)
};

namespace {

// The process-wide iterator and what the first attempt to load it found.
struct shared_state {
    std::mutex mutex;
    std::weak_ptr<bpf_task_iter> loaded;
    // The fork generation `loaded` belongs to: a forked child loads its own
    // programs and ring buffer, never running the parent's.
    std::uint64_t generation = 0;
    bool tried = false;
    bool failed = false;
    std::string reason;
    nanoseconds load_time{};
};
shared_state& shared() {
    static shared_state* s = new shared_state;  // never destroyed: usable from any static destructor
    return *s;
}

// The task iterator's object, loaded with one of its two programs: the one
// that also lists a hidden init process (`with_init`, kfuncs of 6.4) or the
// plain one. Null (errno set) where the kernel refuses it.
proctimes_task_iter* open_iterator(bool with_init) {
    proctimes_task_iter* s = proctimes_task_iter__open();
    if (!s) return nullptr;
    if (bpf_program__set_autoload(s->progs.proctimes_tasks, !with_init) != 0 ||
        bpf_program__set_autoload(s->progs.proctimes_tasks_init, with_init) != 0 || proctimes_task_iter__load(s) != 0) {
        const int err = errno;
        proctimes_task_iter__destroy(s);
        errno = err;
        return nullptr;
    }
    return s;
}

// Loads and attaches the bpf_iter/task program into `it`.
bool load_iterator(bpf_task_iter& it, std::string& reason) {
    if (!it.skel) it.skel = open_iterator(true);  // kept by an attach that failed
    if (!it.skel) it.skel = open_iterator(false);
    if (!it.skel) {
        reason = bpf::load_failure("cannot load the task iterator", errno);
        return false;
    }
    bpf_program* prog = bpf_program__autoload(it.skel->progs.proctimes_tasks_init) ? it.skel->progs.proctimes_tasks_init
                                                                                   : it.skel->progs.proctimes_tasks;
    it.link = bpf_program__attach_iter(prog, nullptr);
    if (!it.link) {
        reason = bpf::load_failure("cannot attach the task iterator", errno);
        return false;
    }
    return true;
}

#ifdef PROCTIMES_BPF_TASK_WALK
int on_record(void* ctx, void* data, std::size_t size) {
    auto& out = *static_cast<bpf_task_iter::sink*>(ctx);
    if (out.capacity - out.used < size) {
        out.overflow = true;  // drained all the same: the next run starts empty
        return 0;
    }
    std::memcpy(out.data + out.used, data, size);
    out.used += size;
    return 0;
}

// Loads the task walk into `it`; false (and nothing kept) where the kernel
// refuses it, or PROCTIMES_BPF_TASK_ITER (on) asks for the iterator.
bool load_walk(bpf_task_iter& it, std::uint64_t tasks_seen = 0) {
    if (env_flag("PROCTIMES_BPF_TASK_ITER") == flag_value::on) return false;
    proctimes_task_walk* w = proctimes_task_walk__open();
    if (!w) return false;
    // Room for four times the tasks there are (/proc/loadavg's total of
    // scheduling entities, or the `tasks_seen` a snapshot just read), each a
    // record and the ring's 8-byte header; at least 256 KiB (a power of two).
    // All of it is resident, mapped twice: 4 MiB made 8 MB of serve's 28.
    std::uint64_t tasks = 0;
    std::string loadavg;
    if (!read_file("/proc/loadavg", loadavg, 4096))
        tasks = parse::parse_loadavg_tasks(loadavg).value_or(parse::task_load{}).total;
    const std::uint64_t want = 4 * std::max(tasks, tasks_seen) * (sizeof(parse::bpf_task_record) + 8);
    std::uint64_t size = std::uint64_t{256} << 10;
    while (size < want && size < (std::uint64_t{1} << 30)) size <<= 1;
    if (bpf_map__set_max_entries(w->maps.records, static_cast<std::uint32_t>(size)) != 0 ||
        proctimes_task_walk__load(w) != 0) {
        proctimes_task_walk__destroy(w);
        return false;
    }
    it.walk = w;
    it.ring = ring_buffer__new(bpf_map__fd(w->maps.records), on_record, &it.out, nullptr);
    if (!it.ring) {
        proctimes_task_walk__destroy(w);
        it.walk = nullptr;
        return false;
    }
    return true;
}

// One run of the task walk into bytes[0..used); `complete` is false when the
// ring buffer had no room for every task (then nothing of this run is used).
std::error_code read_walk(bpf_task_iter& it, std::vector<std::byte>& bytes, std::size_t& used, bool& complete) {
    bpf_test_run_opts opts{};  // what LIBBPF_OPTS makes, without its C99 compound literal
    opts.sz = sizeof opts;
    if (bpf_prog_test_run_opts(bpf_program__fd(it.walk->progs.proctimes_walk), &opts) != 0) {
        const int err = errno;
        (void)ring_buffer__consume(it.ring);
        return errno_code(err);
    }
    const std::size_t need = it.walk->bss->walked * sizeof(parse::bpf_task_record);
    try {
        if (bytes.size() < need) bytes.resize(need);
    } catch (...) {
        it.out = {};
        (void)ring_buffer__consume(it.ring);  // drained, copied nowhere
        throw;
    }
    it.out = {bytes.data(), bytes.size(), 0, false};
    const int n = ring_buffer__consume(it.ring);
    used = it.out.used;
    complete = it.walk->bss->missed == 0 && !it.out.overflow;
    it.out = {};
    if (n < 0) return errno_code(-n);
    return {};
}

// After a walk that did not fit, the walk is loaded again with room for four
// times the `tasks` the iterator just read (the old one stays where it fails).
void grow_walk(bpf_task_iter& it, std::uint64_t tasks) {
    proctimes_task_walk* old_walk = std::exchange(it.walk, nullptr);
    ring_buffer* old_ring = std::exchange(it.ring, nullptr);
    if (load_walk(it, tasks)) {
        ring_buffer__free(old_ring);
        proctimes_task_walk__destroy(old_walk);
    } else {
        it.walk = old_walk;
        it.ring = old_ring;
    }
}
#endif

std::shared_ptr<bpf_task_iter> load_iter(std::string& reason) {
    if (reason = bpf::precheck(); !reason.empty()) return nullptr;
    bpf::quiet_libbpf();
    auto it = std::make_shared<bpf_task_iter>();
#ifdef PROCTIMES_BPF_TASK_WALK
    if (load_walk(*it)) return it;
#endif
    if (!load_iterator(*it, reason)) return nullptr;
    return it;
}

// The iterator, loaded now if no one holds it. Once a load has failed, it is
// not tried again: the reason stays for bpf_snapshot_status().
std::shared_ptr<bpf_task_iter> acquire() {
    auto& s = shared();
    std::lock_guard lock(s.mutex);
    if (const std::uint64_t gen = fork_generation(); s.generation != gen) {
        s.loaded.reset();
        s.generation = gen;
    }
    if (auto held = s.loaded.lock()) return held;
    if (s.failed) return nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    std::string reason;
    auto it = load_iter(reason);
    s.load_time = std::chrono::steady_clock::now() - t0;
    s.tried = true;
    if (!it) {
        s.failed = true;
        s.reason = std::move(reason);
        return nullptr;
    }
    s.loaded = it;
    return it;
}

// Reads the whole system into bytes[0..used): one pass of the kernel over its
// task list, under RCU, in ascending tid order. Each read(2) returns at most
// the iterator's seq_file buffer (32 KiB); the buffer grows only when a read
// has less than 64 KiB of room, and is kept (never zero-filled again) from
// one snapshot to the next.
std::error_code read_all(const bpf_task_iter& it, std::vector<std::byte>& bytes, std::size_t& used) {
    unique_fd fd(bpf_iter_create(bpf_link__fd(it.link)));
    if (!fd) return errno_code(errno);
    if (bytes.size() < std::size_t{256} * 1024) bytes.resize(std::size_t{256} * 1024);
    used = 0;
    while (true) {
        if (bytes.size() - used < std::size_t{64} * 1024) bytes.resize(bytes.size() * 2);
        const ssize_t n = ::read(fd.get(), bytes.data() + used, bytes.size() - used);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_code(errno);
        if (n == 0) break;
        used += static_cast<std::size_t>(n);
    }
    return {};
}

// Every task of the system into bytes[0..used): the task walk where it is
// loaded (the iterator, loaded now, for a walk that did not fit its ring
// buffer), else the task iterator.
std::error_code read_tasks(bpf_task_iter& it, std::vector<std::byte>& bytes, std::size_t& used) {
#ifdef PROCTIMES_BPF_TASK_WALK
    if (it.walk) {
        std::lock_guard lock(it.mutex);
        bool complete = false;
        if (auto ec = read_walk(it, bytes, used, complete)) return ec;
        if (complete) return {};
        if (!it.link) {
            std::string reason;
            if (!load_iterator(it, reason)) return make_error_code(errc::not_supported);
        }
        if (auto ec = read_all(it, bytes, used)) return ec;
        grow_walk(it, used / sizeof(parse::bpf_task_record));
        return {};
    }
#endif
    std::lock_guard lock(it.mutex);  // one walk at a time: the program keeps state across it
    return read_all(it, bytes, used);
}

}  // namespace

bpf_snapshot_source::bpf_snapshot_source() noexcept = default;
bpf_snapshot_source::bpf_snapshot_source(bpf_snapshot_source&&) noexcept = default;
bpf_snapshot_source& bpf_snapshot_source::operator=(bpf_snapshot_source&&) noexcept = default;
bpf_snapshot_source::~bpf_snapshot_source() = default;

result<bpf_snapshot_source> bpf_snapshot_source::open(const snapshot_options& options, bool live) noexcept {
    bpf_snapshot_source s;
    if (options.source == snapshot_source::procfs || !live) return s;
    // Options that only mean something to the /proc walk keep `automatic` on it.
    if (options.source == snapshot_source::automatic &&
        (options.workers != 0 || options.reuse_idle_threads_for.count() != 0))
        return s;
    try {
        s.buf_ = std::make_unique<buffers>();
        s.iter_ = acquire();
    } catch (...) {
        return errno_code(ENOMEM);
    }
    return s;
}

result<void> bpf_snapshot_source::take(snapshot& out, const snapshot_options& options) noexcept {
    out.processes.clear();
    out.threads.clear();
    out.failures.clear();
    out.vanished = 0;
    out.reused_threads = 0;
    auto anchor = get_boot_anchor();
    if (!anchor) return anchor.error();
    try {
        const std::int64_t start = now_ns(CLOCK_BOOTTIME);
        out.since_boot = nanoseconds{start};
        out.taken = anchor->boot + nanoseconds{start};
        out.boot = anchor->id;
        out.has_threads = options.threads;
        out.workers = 1;
        out.source = snapshot_source::bpf;
        std::size_t used = 0;
        if (auto ec = read_tasks(*iter_, buf_->bytes, used)) return ec;
        out.walk_duration = nanoseconds{now_ns(CLOCK_BOOTTIME) - start};

        auto& recs = buf_->records;
        recs.clear();
        if (!parse::parse_task_records(std::span(buf_->bytes).first(used), recs))
            return make_error_code(errc::malformed_data);
        // The iterator visits tasks by tid; the model groups threads under
        // their process, ascending tid within. Sorted: (tgid, tid) keys with
        // the record's position, not the records themselves.
        auto& order = buf_->order;
        order.clear();
        order.reserve(recs.size());
        for (std::size_t k = 0; k < recs.size(); ++k)
            order.push_back({std::uint64_t{recs[k].tgid} << 32 | recs[k].pid, k});
        std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        const auto rec = [&](std::size_t k) -> const parse::bpf_task_record& { return recs[order[k].second]; };

        const std::int64_t tick = 1'000'000'000 / clock_ticks_per_second();
        const nanoseconds tick_ns{tick};
        const cpu_precision precision = detail::precision_for(cpu_source::bpf_task, tick_ns);
        // `t` is freshly value-initialized (emplace_back below).
        auto fill = [&](task_times& t, std::uint64_t start_bt, std::uint64_t runtime, std::uint64_t utime,
                        std::uint64_t stime, bool kthread, bool ended) {
            t.creation = anchor->boot + nanoseconds{static_cast<std::int64_t>(start_bt)};
            const auto ku = split_by_ticks(nanoseconds{static_cast<std::int64_t>(runtime)}, utime, stime, kthread);
            t.kernel = ku.kernel;
            t.user = ku.user;
            t.precision = precision;
            t.state = ended ? task_state::exited : task_state::running;
            t.sampled_at = out.taken;
        };

        out.processes.reserve(recs.size());
        if (options.threads) out.threads.reserve(recs.size());
        for (std::size_t i = 0; i < recs.size();) {
            std::size_t j = i;
            while (j < recs.size() && rec(j).tgid == rec(i).tgid) ++j;
            // The leader is not always the lowest tid: tids wrap around.
            std::size_t l = i;
            while (l < j && rec(l).pid != rec(l).tgid) ++l;
            if (l == j) {  // the leader is gone (mid-exit): the process is skipped, as /proc does
                out.vanished += j - i;
                i = j;
                continue;
            }
            const auto& lead = rec(l);
            std::uint64_t runtime = lead.group_runtime, utime = lead.group_utime, stime = lead.group_stime;
            for (std::size_t k = i; k < j; ++k) {
                runtime += rec(k).runtime;
                utime += rec(k).utime;
                stime += rec(k).stime;
            }
            const bool kthread = (lead.flags & parse::bpf_pf_kthread) != 0;
            // Filled in place (no copy of a record-sized struct per task).
            snapshot_process& p = out.processes.emplace_back();
            p.identity = {anchor->id, static_cast<pid_t>(lead.tgid),
                          lead.start_boottime / static_cast<std::uint64_t>(tick), 0};
            p.parent_pid = static_cast<pid_t>(lead.ppid);
            p.uid = lead.euid;
            p.state = parse::task_state_letter(lead.state, lead.exit_state);
            p.kernel_thread = kthread;
            p.thread_count = lead.nr_threads;
            p.name.assign(parse::comm_view(lead.comm));
            // Ended: the leader is a zombie and no other thread is left.
            fill(p.times, lead.start_boottime, runtime, utime, stime, kthread, lead.exit_state != 0 && j - i == 1);
            // What its reaped children used, as /proc/<pid>/stat's cutime and cstime, in ns.
            p.children_kernel = nanoseconds{static_cast<std::int64_t>(lead.children_stime)};
            p.children_user = nanoseconds{static_cast<std::int64_t>(lead.children_utime)};
            fill_process_values(p, lead, recs, std::span(order).subspan(i, j - i));
            if (options.threads) {
                p.first_thread = out.threads.size();
                p.thread_entries = j - i;
                for (std::size_t k = i; k < j; ++k) {
                    const auto& r = rec(k);
                    snapshot_thread& t = out.threads.emplace_back();
                    t.identity = {anchor->id, static_cast<pid_t>(r.pid),
                                  r.start_boottime / static_cast<std::uint64_t>(tick), 0};
                    t.pid = static_cast<pid_t>(r.tgid);
                    t.state = parse::task_state_letter(r.state, r.exit_state);
                    t.name.assign(parse::comm_view(r.comm));
                    fill(t.times, r.start_boottime, r.runtime, r.utime, r.stime, kthread, r.exit_state != 0);
                    t.counters = task_counters_of(r);
                }
            }
            i = j;
        }
        return {};
    } catch (...) {
        out.processes.clear();
        out.threads.clear();
        return errno_code(ENOMEM);
    }
}

std::size_t bpf_snapshot_source::walk_ring_bytes() const noexcept {
#ifdef PROCTIMES_BPF_TASK_WALK
    if (iter_) {
        const std::lock_guard lock(iter_->mutex);
        if (iter_->walk) return bpf_map__max_entries(iter_->walk->maps.records);
    }
#endif
    return 0;
}

}  // namespace detail

bpf_source_status bpf_snapshot_status() noexcept {
    bpf_source_status st;
    st.built = true;
    try {
        auto held = detail::acquire();
        auto& s = detail::shared();
        std::lock_guard lock(s.mutex);
        st.usable = held != nullptr;
        st.reason = s.reason;
        st.load_time = s.load_time;
#ifdef PROCTIMES_BPF_TASK_WALK
        if (held) st.program = held->walk ? "task walk" : "task iterator";
#else
        if (held) st.program = "task iterator";
#endif
    } catch (...) {
        st.reason = "out of memory";
    }
    return st;
}

}  // namespace proctimes::inline v1
