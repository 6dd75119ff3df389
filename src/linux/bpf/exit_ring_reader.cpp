// SPDX-License-Identifier: MIT
// The exit stream's user-space half: a ring-buffer reader on its own thread.
#include "linux/bpf/exit_ring_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_split.hpp"
#include "exit/failures.hpp"
#include "exits.skel.h"
#include "fd.hpp"
#include "linux/bpf/exit_stamps.hpp"
#include "linux/bpf/loader.hpp"
#include "linux/exit/taskstats.hpp"
#include "linux/sys.hpp"
#include "parse/bpf_records.hpp"
#include "parse/procfs.hpp"
#include "proctimes/boot.hpp"
#include "settings.hpp"

namespace proctimes::inline v1::detail {

using std::chrono::nanoseconds;

namespace {

// Runs of `prog` the kernel skipped to avoid recursion (bpf_prog_info, 5.12+).
std::uint64_t recursion_misses(bpf_program* prog) noexcept {
    bpf_prog_info info{};
    std::uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) != 0) return 0;
    return info.recursion_misses;
}

}  // namespace

struct bpf_exit_stream::impl {
    bpf_exit_stream* owner = nullptr;
    proctimes_exits* skel = nullptr;
    ring_buffer* ring = nullptr;
    unique_fd stop;   // eventfd: written to stop the thread
    unique_fd kick;   // eventfd: written by settle() to have the ring read now
    unique_fd epoll;  // the ring's fd, `stop` and `kick`
    callback cb;
    lost_callback on_lost;
    boot_anchor anchor{};
    std::int64_t tick = 10'000'000;
    std::thread thread;
    std::atomic<std::uint64_t> swept{0};                // ends counted lost by sweep()
    std::atomic<std::uint64_t> sweeps{0};               // reads of the whole stamp map
    std::atomic<std::uint64_t> sweep_deleted{0};        // stamps the sweeps deleted
    std::chrono::steady_clock::time_point last_look{};  // the last look whether a sweep is due
    // When the next sweep is due (CLOCK_BOOTTIME, ns): the first instant a
    // stamp can have become a loss (sweep()).
    std::uint64_t sweep_due = 0;

    // Command lines (start()'s command_lines): the last exec's argument area
    // of each live process that exec'd since the stream began, by (tgid,
    // start_boottime), until the process's end record takes it. Only the
    // ring's thread touches them. Bounded: at most max_kept of them and
    // max_kept_bytes in all; when full, those of processes gone from /proc
    // (whose end was lost) are dropped, at most once a second.
    static constexpr std::size_t max_kept = 32768;
    static constexpr std::size_t max_kept_bytes = std::size_t{64} << 20;
    bool command_lines = false;
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::string> kept;
    std::size_t kept_bytes = 0;
    std::chrono::steady_clock::time_point last_prune{};
    std::atomic<std::uint64_t> unkept{0};
    std::uint64_t unmarked_seen = 0;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> exec_lost_gone;  // at the last sweep

    ~impl() {
        if (thread.joinable()) {
            const std::uint64_t one = 1;
            (void)!::write(stop.get(), &one, sizeof one);
            thread.join();
        }
        ring_buffer__free(ring);
        proctimes_exits__destroy(skel);  // detaches the links
    }

    static int on_sample(void* ctx, void* data, std::size_t size) {
        auto* self = static_cast<impl*>(ctx);
        const std::span<const std::byte> bytes{static_cast<const std::byte*>(data), size};
        if (size != sizeof(parse::bpf_exit_record)) {
            if (auto x = parse::parse_exec_record(bytes)) {
                self->keep(*x);
            } else {
                self->owner->malformed_.fetch_add(1, std::memory_order_relaxed);
            }
            return 0;
        }
        auto r = parse::parse_exit_record(bytes);
        if (!r) {
            self->owner->malformed_.fetch_add(1, std::memory_order_relaxed);
            return 0;
        }
        bpf_task_end e = self->convert(*r);
        if (self->command_lines && e.is_process()) {
            self->forget_if_unmarked();
            const auto it = self->kept.find({r->tgid, r->start_boottime});
            if (it != self->kept.end()) {
                self->kept_bytes -= it->second.size();
                // Its last exec's record was lost: what is kept is an earlier one's.
                if ((r->reserved & PT_EXEC_LOST) == 0) e.command_line = std::move(it->second);
                self->kept.erase(it);
            }
        }
        self->cb(e);
        self->owner->delivered_.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }

    // An exec: its command line replaces the process's earlier one. One not
    // copied whole, or not kept for want of room, leaves the process with
    // none (its end then has no command line, rather than an older one).
    void keep(const parse::bpf_exec_record& x) noexcept {
        if (!command_lines) return;
        forget_if_unmarked();
        const std::pair<std::uint32_t, std::uint64_t> key{x.tgid, x.start_boottime};
        if (const auto it = kept.find(key); it != kept.end()) {
            kept_bytes -= it->second.size();
            kept.erase(it);
        }
        if (!x.whole()) {
            unkept.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        if (kept.size() >= max_kept || kept_bytes + x.argv.size() > max_kept_bytes) prune();
        if (kept.size() >= max_kept || kept_bytes + x.argv.size() > max_kept_bytes) {
            unkept.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        try {
            kept.emplace(key, std::string(x.argv));
            kept_bytes += x.argv.size();
        } catch (...) {  // out of memory: this one is not kept
            unkept.fetch_add(1, std::memory_order_relaxed);
        }
    }

    // An exec record was lost and its process could not be marked (the
    // program's map of them was full): any command line kept may be an
    // earlier exec's, so none is kept from before.
    void forget_if_unmarked() noexcept {
        const std::uint64_t n = __atomic_load_n(&skel->bss->execs_unmarked, __ATOMIC_ACQUIRE);
        if (n == unmarked_seen) return;
        unmarked_seen = n;
        unkept.fetch_add(kept.size(), std::memory_order_relaxed);
        kept.clear();
        kept_bytes = 0;
    }

    // Drops the command lines of processes no longer listed in /proc: their
    // end record was lost (a full ring buffer), or will come without them.
    void prune() noexcept {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_prune < std::chrono::seconds{1}) return;
        last_prune = now;
        for (auto it = kept.begin(); it != kept.end();) {
            pt_exit_stamp st{};
            st.tgid = it->first.first;
            st.pid = it->first.first;
            st.start_boottime = it->first.second;
            if (task_listed(st)) {
                ++it;
                continue;
            }
            kept_bytes -= it->second.size();
            it = kept.erase(it);
        }
    }

    static int on_lost_sample(void* ctx, void* data, std::size_t size) {
        auto* self = static_cast<impl*>(ctx);
        if (size < sizeof(pt_lost_task)) return 0;
        pt_lost_task l{};
        std::memcpy(&l, data, sizeof l);
        self->report(l.tgid, l.pid, l.start_boottime);
        return 0;
    }

    void report(std::uint32_t tgid, std::uint32_t pid, std::uint64_t start_boottime) {
        if (tgid == pid) {
            if (const auto it = kept.find({tgid, start_boottime}); it != kept.end()) {
                kept_bytes -= it->second.size();
                kept.erase(it);
            }
        }
        if (!on_lost) return;
        bpf_lost_task t;
        t.pid = static_cast<pid_t>(tgid);
        t.tid = static_cast<pid_t>(pid);
        t.start_ticks = start_boottime / static_cast<std::uint64_t>(tick);
        t.creation = anchor.boot + nanoseconds{static_cast<std::int64_t>(start_boottime)};
        on_lost(t);
    }

    bpf_task_end convert(const parse::bpf_exit_record& r) const {
        bpf_task_end e;
        e.pid = static_cast<pid_t>(r.tgid);
        e.tid = static_cast<pid_t>(r.pid);
        e.parent_pid = static_cast<pid_t>(r.ppid);
        e.uid = r.euid;
        e.kernel_thread = (r.flags & parse::bpf_pf_kthread) != 0;
        e.forked_no_exec = (r.flags & parse::bpf_pf_forknoexec) != 0;
        e.name.assign(parse::comm_view(r.comm));
        e.start_ticks = r.start_boottime / static_cast<std::uint64_t>(tick);
        auto at = [&](std::uint64_t boottime) {
            return anchor.boot + nanoseconds{static_cast<std::int64_t>(boottime)};
        };
        e.creation = at(r.start_boottime);
        if (r.exit_boottime) e.exit = at(r.exit_boottime);
        e.released = at(r.free_boottime);
        e.released_since_boot = nanoseconds{static_cast<std::int64_t>(r.free_boottime)};
        e.threads_known = (r.reserved & PT_GROUP_KNOWN) != 0;
        e.had_threads = (r.reserved & PT_GROUP_HAD_THREADS) != 0;
        auto own = split_by_ticks(nanoseconds{static_cast<std::int64_t>(r.runtime)}, r.utime, r.stime, e.kernel_thread);
        e.kernel = own.kernel;
        e.user = own.user;
        if (e.is_process()) {
            auto all = split_by_ticks(nanoseconds{static_cast<std::int64_t>(r.group_runtime)}, r.group_utime,
                                      r.group_stime, e.kernel_thread);
            e.group_kernel = all.kernel;
            e.group_user = all.user;
        }
        // A wait(2) status: the exit code in bits 8-15, or the signal in bits
        // 0-6 with the core-dump flag in bit 7.
        const int st = r.exit_code;
        if ((st & 0x7f) == 0) {
            e.status.code = (st >> 8) & 0xff;
        } else {
            e.status.signal = st & 0x7f;
            e.status.core_dumped = (st & 0x80) != 0;
        }
        return e;
    }

    // Whether the task (tid, start) is still listed in /proc: a zombie, a
    // leader waiting for its threads, or still exiting. Gone means released.
    bool task_listed(const pt_exit_stamp& st) const {
        char path[64];
        std::snprintf(path, sizeof path, "/proc/%u/task/%u/stat", st.tgid, st.pid);
        std::string text;
        if (read_file(path, text, 4096)) return false;
        const auto rec = parse::parse_stat(text);
        // Unparsable: assume listed (never count a loss on a guess).
        return !rec || rec->starttime == st.start_boottime / static_cast<std::uint64_t>(tick);
    }

    // The exact loss count's last part (exit_stamps.hpp: sweep_exit_stamps).
    // A sweep reads all 131,072 buckets of the map (0.15 ms on the 2-core VM),
    // whether it holds a stamp or none: once a second, that was a tenth of
    // `serve`'s cost on a quiet machine. So the next one is due only when a
    // stamp can have become a loss: when the oldest stamp this one left (a
    // zombie's aside) is 5 s old, and at the latest 5 s on, when the first
    // stamp made after this sweep began can be (a zombie reaped meanwhile is
    // then found within 5 s of its reaping).
    //
    // With no stamp in the map (the programs count what they make and
    // delete, the sweeps what they delete), there is nothing to find and no
    // bucket is read: on a machine where no task waits between its exit and
    // its free, no sweep reads the map at all.
    std::int64_t stamps_live() const {
        return __atomic_load_n(&skel->bss->stamps_live, __ATOMIC_ACQUIRE) -
               static_cast<std::int64_t>(sweep_deleted.load(std::memory_order_acquire));
    }
    void sweep(std::uint64_t now) {
        const auto listed = [this](const pt_exit_stamp& st) { return task_listed(st); };
        std::uint64_t next_due = UINT64_MAX;
        if (stamps_live() > 0) {
            const stamp_sweep done = sweep_exit_stamps(bpf_map__fd(skel->maps.proctimes_exit_stamp), now, listed);
            sweeps.fetch_add(1, std::memory_order_relaxed);
            sweep_deleted.fetch_add(done.deleted, std::memory_order_release);
            for (const pt_exit_stamp& st : done.lost) {
                swept.fetch_add(1, std::memory_order_relaxed);
                report(st.tgid, st.pid, st.start_boottime);
            }
            next_due = done.next_due;
        }
        if (command_lines) sweep_exec_marks(bpf_map__fd(skel->maps.proctimes_exec_lost), exec_lost_gone, listed);
        sweep_due = std::min<std::uint64_t>(next_due, now + stamp_grace_ns);
    }

    void run() {
        epoll_event ev[3];
        while (true) {
            if (const auto t = std::chrono::steady_clock::now(); t - last_look >= std::chrono::seconds{1}) {
                last_look = t;
                timespec ts{};
                ::clock_gettime(CLOCK_BOOTTIME, &ts);
                const auto now =
                    static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
                if (now >= sweep_due) {
                    try {
                        sweep(now);
                    } catch (...) {  // out of memory: next time
                        count_exit_failure(exit_failure::bpf_sweep);
                    }
                }
            }
            // The kernel skips a wake-up when the reader looks busy; a
            // periodic look makes sure no record waits longer than this, and
            // settle() kicks the thread when it waits for records.
            const int n = ::epoll_wait(epoll.get(), ev, 3, 1000);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return;
            ring_buffer__consume(ring);
            for (int i = 0; i < n; ++i) {
                if (ev[i].data.fd == stop.get()) {
                    ring_buffer__consume(ring);
                    return;
                }
                if (ev[i].data.fd == kick.get()) {
                    std::uint64_t k;
                    (void)!::read(kick.get(), &k, sizeof k);
                }
            }
        }
    }
};

result<std::unique_ptr<bpf_exit_stream>> bpf_exit_stream::start(callback cb, lost_callback on_lost,
                                                                bool command_lines) noexcept {
    try {
        auto anchor = get_boot_anchor();
        if (!anchor) return anchor.error();
        if (auto why = bpf::precheck(); !why.empty())
            return make_error_code(in_initial_pid_namespace() ? errc::not_supported : errc::foreign_namespace);
        bpf::quiet_libbpf();
        std::unique_ptr<bpf_exit_stream> s(new bpf_exit_stream);
        s->impl_ = std::make_unique<impl>();
        impl& m = *s->impl_;
        m.owner = s.get();
        m.cb = std::move(cb);
        m.on_lost = std::move(on_lost);
        m.anchor = *anchor;
        m.tick = 1'000'000'000 / clock_ticks_per_second();
        m.command_lines = command_lines;
        const auto t0 = std::chrono::steady_clock::now();
        m.skel = proctimes_exits__open();
        if (!m.skel) return errno_code(errno);
        // A smaller ring buffer, to make losses happen (tests and debugging:
        // docs/BPF.md); a power of two of at least one page, in KiB.
        // Not a number, or not a power of two from a page to 2 GiB (the
        // map's size is 32 bits): invalid_argument.
        const auto kib = env_number("PROCTIMES_BPF_EXIT_RING_KIB");
        if (!kib) return kib.error();
        if (*kib) {
            const std::uint64_t n = **kib;
            const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
            if (n > (std::uint64_t{1} << 21) || n * 1024 < page || (n & (n - 1)) != 0)
                return make_error_code(errc::invalid_argument);
            if (bpf_map__set_max_entries(m.skel->maps.proctimes_exit_ring, static_cast<std::uint32_t>(n * 1024)) != 0)
                return errno_code(errno);
        }
        // The exec program runs at every exec on the system: loaded only for
        // a reader that wants command lines.
        if (!command_lines && bpf_program__set_autoload(m.skel->progs.proctimes_exec, false) != 0)
            return errno_code(errno);
        if (proctimes_exits__load(m.skel) != 0) return errno_code(errno);
        if (proctimes_exits__attach(m.skel) != 0) return errno_code(errno);
        s->load_time_ = std::chrono::steady_clock::now() - t0;
        m.ring = ring_buffer__new(bpf_map__fd(m.skel->maps.proctimes_exit_ring), &impl::on_sample, &m, nullptr);
        if (!m.ring) return errno_code(errno);
        if (ring_buffer__add(m.ring, bpf_map__fd(m.skel->maps.proctimes_lost_ring), &impl::on_lost_sample, &m) != 0)
            return errno_code(errno);
        m.stop.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        m.kick.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        m.epoll.reset(::epoll_create1(EPOLL_CLOEXEC));
        if (!m.stop || !m.kick || !m.epoll) return errno_code(errno);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = ring_buffer__epoll_fd(m.ring);
        if (::epoll_ctl(m.epoll.get(), EPOLL_CTL_ADD, ev.data.fd, &ev) != 0) return errno_code(errno);
        ev.data.fd = m.stop.get();
        if (::epoll_ctl(m.epoll.get(), EPOLL_CTL_ADD, ev.data.fd, &ev) != 0) return errno_code(errno);
        ev.data.fd = m.kick.get();
        if (::epoll_ctl(m.epoll.get(), EPOLL_CTL_ADD, ev.data.fd, &ev) != 0) return errno_code(errno);
        m.thread = std::thread([&m] { m.run(); });
        return s;
    } catch (...) {
        return errno_code(ENOMEM);
    }
}

bpf_exit_stream::~bpf_exit_stream() = default;

std::uint64_t bpf_exit_stream::dropped() const noexcept {
    const auto* bss = impl_->skel->bss;
    // Read the take-backs first: a take-back always follows its sweep count.
    const std::uint64_t back = __atomic_load_n(&bss->found_after_sweep, __ATOMIC_ACQUIRE);
    const std::uint64_t swept = impl_->swept.load(std::memory_order_acquire);
    return __atomic_load_n(&bss->dropped, __ATOMIC_RELAXED) + recursion_misses(impl_->skel->progs.proctimes_free) +
           __atomic_load_n(&bss->freed_unseen, __ATOMIC_RELAXED) + (swept > back ? swept - back : 0);
}
std::uint64_t bpf_exit_stream::unnamed_lost() const noexcept {
    return __atomic_load_n(&impl_->skel->bss->lost_unnamed, __ATOMIC_RELAXED) +
           recursion_misses(impl_->skel->progs.proctimes_free);
}
bpf_exit_stream::counters bpf_exit_stream::count() const noexcept {
    counters c;
    const auto* bss = impl_->skel->bss;
    c.exit_runs = __atomic_load_n(&bss->exit_runs, __ATOMIC_RELAXED);
    c.free_runs = __atomic_load_n(&bss->free_runs, __ATOMIC_RELAXED);
    c.submitted = __atomic_load_n(&bss->submitted, __ATOMIC_RELAXED);
    c.ring_full = __atomic_load_n(&bss->dropped, __ATOMIC_RELAXED);
    c.free_recursion = recursion_misses(impl_->skel->progs.proctimes_free);
    c.exit_recursion = recursion_misses(impl_->skel->progs.proctimes_exit);
    c.swept = impl_->swept.load();
    c.sweeps = impl_->sweeps.load();
    c.stamps_live = impl_->stamps_live();
    c.freed_unseen = __atomic_load_n(&bss->freed_unseen, __ATOMIC_RELAXED);
    c.found_after_sweep = __atomic_load_n(&bss->found_after_sweep, __ATOMIC_RELAXED);
    c.lost_unnamed = __atomic_load_n(&bss->lost_unnamed, __ATOMIC_RELAXED);
    c.execs_sent = __atomic_load_n(&bss->execs_sent, __ATOMIC_RELAXED);
    c.execs_dropped = __atomic_load_n(&bss->execs_dropped, __ATOMIC_RELAXED);
    c.command_lines_unkept = impl_->unkept.load(std::memory_order_relaxed);
    return c;
}
bool bpf_exit_stream::settle(nanoseconds from, nanoseconds to, std::chrono::steady_clock::time_point deadline) const {
    const impl& m = *impl_;
    const auto* bss = m.skel->bss;
    const int fd = bpf_map__fd(m.skel->maps.proctimes_exit_stamp);
    const auto lo = static_cast<std::uint64_t>(std::max<std::int64_t>(from.count(), 0));
    const auto hi = static_cast<std::uint64_t>(std::max<std::int64_t>(to.count(), 0));
    const auto pause = [] {
        const timespec two_ms{0, 2'000'000};
        ::nanosleep(&two_ms, nullptr);
    };
    // Whether the stamp is one to wait for: in (from, to], not yet consumed
    // (a consumed stamp has exit_boottime 0), of a task gone from /proc (its
    // free has yet to run).
    const auto waits_for = [&](const pt_exit_stamp& st) {
        return st.exit_boottime > lo && st.exit_boottime <= hi && !m.task_listed(st);
    };
    // A full read of the map (every bucket, and /proc for each stamp in the
    // window) finds the stamps to wait for; then only those are looked up,
    // one by one, every pause, until each is consumed (its free ran, or the
    // sweep counted it lost). Another full read then looks for any that
    // became one to wait for meanwhile (a zombie reaped): settled when one
    // finds none, as a full read every pause would conclude.
    std::vector<exit_stamp_key> waiting;
    while (true) {
        waiting.clear();
        if (!any_exit_stamp(fd, waits_for, &waiting)) break;
        do {  // `waiting` is empty when the map could not be read whole: a pause, then a full read
            if (std::chrono::steady_clock::now() >= deadline) return false;
            pause();
            std::erase_if(waiting, [&](const exit_stamp_key& k) { return !exit_stamp_pending(fd, k); });
        } while (!waiting.empty());
    }
    // Every such free has run: runs of the free program so far (each counted
    // before it consumes its stamp) are each either a record submitted to the
    // ring buffer or one that did not fit. Wait for the thread to have passed
    // the submitted ones on.
    const std::uint64_t runs = __atomic_load_n(&bss->free_runs, __ATOMIC_ACQUIRE);
    for (;;) {
        const std::uint64_t done = delivered_.load(std::memory_order_acquire) +
                                   malformed_.load(std::memory_order_acquire) +
                                   __atomic_load_n(&bss->dropped, __ATOMIC_ACQUIRE);
        if (done >= runs) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        // Should the kernel have skipped the wake-up, the thread reads the ring now.
        const std::uint64_t one = 1;
        (void)!::write(m.kick.get(), &one, sizeof one);
        pause();
    }
}
std::uint64_t bpf_exit_stream::unstamped() const noexcept {
    return __atomic_load_n(&impl_->skel->bss->unstamped, __ATOMIC_RELAXED) +
           recursion_misses(impl_->skel->progs.proctimes_exit);
}

}  // namespace proctimes::inline v1::detail
