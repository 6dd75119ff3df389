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
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "exit/failures.hpp"
#include "exits.skel.h"
#include "fd.hpp"
#include "linux/bpf/exit_record.hpp"
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
    // Held while records are taken from the ring buffers or the stamps swept:
    // by the thread, or by take_waiting() on a reader's.
    std::mutex consume_mu;
    std::atomic<std::uint64_t> swept{0};               // ends counted lost by sweep()
    std::atomic<std::uint64_t> sweeps{0};              // sweeps that read a stamp map whole
    std::atomic<std::uint64_t> sweeps_more{0};         // of those, reads of the large map
    std::atomic<std::uint64_t> sweep_deleted{0};       // stamps the sweeps deleted, small map
    std::atomic<std::uint64_t> sweep_deleted_more{0};  // and large map
    // When each stamp (key, exit instant) was first seen gone from /proc, by map.
    using gone_map = std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t>;
    gone_map gone_small, gone_more;
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
        bpf_task_end e = to_task_end(*r, self->anchor, self->tick);
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
    // A sweep reads every bucket of a stamp map, whether it holds a stamp or
    // none: 4,096 of the small map, and of the large one 131,072, which took
    // 0.5-0.8 ms on the 2-core VM (a tenth of `serve`'s cost at a sweep a
    // second). So the next sweep is due only when a stamp can have become a
    // loss: when the oldest stamp this one left (a zombie's aside) is 5 s
    // old, and at the latest 5 s on, when the first stamp made after this
    // sweep began can be (a zombie reaped meanwhile is then found within 5 s
    // of its reaping).
    //
    // A map with no stamp (the programs count what they make and delete, the
    // sweeps what they delete) has nothing to find, and none of its buckets
    // is read: the large one only holds stamps in a storm (exits.bpf.c).
    std::int64_t stamps_live_small() const {
        return __atomic_load_n(&skel->bss->stamps_live, __ATOMIC_ACQUIRE) -
               static_cast<std::int64_t>(sweep_deleted.load(std::memory_order_acquire));
    }
    std::int64_t stamps_live_more() const {
        return __atomic_load_n(&skel->bss->stamps_live_more, __ATOMIC_ACQUIRE) -
               static_cast<std::int64_t>(sweep_deleted_more.load(std::memory_order_acquire));
    }
    std::int64_t stamps_live() const { return stamps_live_small() + stamps_live_more(); }
    void sweep(std::uint64_t now) {
        const auto listed = [this](const pt_exit_stamp& st) { return task_listed(st); };
        std::uint64_t next_due = UINT64_MAX;
        const auto sweep_map = [&](const bpf_map* map, std::atomic<std::uint64_t>& deleted, gone_map& gone) {
            const stamp_sweep done = sweep_exit_stamps(bpf_map__fd(map), now, listed, gone);
            sweeps.fetch_add(1, std::memory_order_relaxed);
            deleted.fetch_add(done.deleted, std::memory_order_release);
            for (const pt_exit_stamp& st : done.lost) {
                swept.fetch_add(1, std::memory_order_relaxed);
                report(st.tgid, st.pid, st.start_boottime);
            }
            next_due = std::min(next_due, done.next_due);
        };
        if (stamps_live_small() > 0) sweep_map(skel->maps.proctimes_exit_stamp, sweep_deleted, gone_small);
        if (stamps_live_more() > 0) {
            sweep_map(skel->maps.proctimes_exit_stamp_more, sweep_deleted_more, gone_more);
            sweeps_more.fetch_add(1, std::memory_order_relaxed);
        }
        // Marks exist only once an exec record did not fit: none to read before.
        if (command_lines && __atomic_load_n(&skel->bss->execs_dropped, __ATOMIC_ACQUIRE) != 0)
            sweep_exec_marks(bpf_map__fd(skel->maps.proctimes_exec_lost), exec_lost_gone, listed);
        sweep_due = std::min<std::uint64_t>(next_due, now + stamp_grace_ns);
    }

    void run() {
        epoll_event ev[3];
        while (true) {
            timespec ts{};
            ::clock_gettime(CLOCK_BOOTTIME, &ts);
            const auto now =
                static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
            if (now >= sweep_due) {
                try {
                    const std::lock_guard lock(consume_mu);
                    sweep(now);
                } catch (...) {  // out of memory: a second on
                    count_exit_failure(exit_failure::bpf_sweep);
                    sweep_due = now + 1'000'000'000u;
                }
            }
            // Asleep until records come (the ring buffer wakes the thread)
            // or the next sweep is due, 5 s on at the latest (sweep()):
            // a thread that woke every second cost `serve` about 40 us a
            // wake-up on the 2-core VM. Should the kernel skip a wake-up
            // (it does when the reader looks busy), settle() kicks the
            // thread when it waits for records, and the next look reads them.
            const auto wait_ms = static_cast<int>(std::min<std::uint64_t>(
                sweep_due > now ? (sweep_due - now) / 1'000'000 + 1 : 1, stamp_grace_ns / 1'000'000));
            const int n = ::epoll_wait(epoll.get(), ev, 3, wait_ms);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return;
            const std::lock_guard lock(consume_mu);
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

result<std::unique_ptr<bpf_exit_stream>> bpf_exit_stream::start(callback cb, lost_callback on_lost, bool command_lines,
                                                                bool on_read) noexcept {
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
        if (on_read) m.skel->bss->lazy_wakeup = bpf_map__max_entries(m.skel->maps.proctimes_exit_ring) / 4;
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

void bpf_exit_stream::take_waiting() noexcept {
    const std::lock_guard lock(impl_->consume_mu);
    ring_buffer__consume(impl_->ring);
}

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
    c.sweeps_more = impl_->sweeps_more.load();
    c.stamps_live = impl_->stamps_live();
    c.stamps_live_more = impl_->stamps_live_more();
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
    const int small = bpf_map__fd(m.skel->maps.proctimes_exit_stamp);
    const int more = bpf_map__fd(m.skel->maps.proctimes_exit_stamp_more);
    const auto lo = static_cast<std::uint64_t>(std::max<std::int64_t>(from.count(), 0));
    const auto hi = static_cast<std::uint64_t>(std::max<std::int64_t>(to.count(), 0));
    const auto pause = [] {
        const timespec two_ms{0, 2'000'000};
        ::nanosleep(&two_ms, nullptr);
    };
    // Whether the stamp is one to wait for: in (from, to], not yet consumed
    // (a consumed stamp has exit_boottime 0), of a task gone from /proc (its
    // free has yet to run). A map is read only while it holds a stamp: such
    // a task's exit, which stamped it and counted the stamp, is behind it.
    const auto waits_for = [&](const pt_exit_stamp& st) {
        return st.exit_boottime > lo && st.exit_boottime <= hi && !m.task_listed(st);
    };
    const auto readable = [&](int fd) { return (fd == more ? m.stamps_live_more() : m.stamps_live_small()) > 0; };
    if (!wait_out_exit_stamps({small, more}, readable, waits_for, deadline, pause)) return false;
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
