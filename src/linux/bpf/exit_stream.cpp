// SPDX-License-Identifier: MIT
// The exit stream's user-space half: a ring-buffer reader on its own thread.
#include "platform_exit_stream.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_split.hpp"
#include "exits.skel.h"
#include "fd.hpp"
#include "linux/bpf/loader.hpp"
#include "linux/exit_records.hpp"
#include "linux/sys.hpp"
#include "parse/bpf_records.hpp"
#include "parse/procfs.hpp"
#include "proctimes/boot.hpp"
#include "settings.hpp"

namespace proctimes::inline v1::detail {

using std::chrono::nanoseconds;

struct bpf_exit_stream::impl {
    bpf_exit_stream* owner = nullptr;
    proctimes_exits* skel = nullptr;
    ring_buffer* ring = nullptr;
    unique_fd stop;   // eventfd: written to stop the thread
    unique_fd epoll;  // the ring's fd and `stop`
    callback cb;
    lost_callback on_lost;
    boot_anchor anchor{};
    std::int64_t tick = 10'000'000;
    std::thread thread;
    std::atomic<std::uint64_t> swept{0};  // ends counted lost by sweep()
    std::chrono::steady_clock::time_point last_sweep{};

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
        auto r = parse::parse_exit_record({static_cast<const std::byte*>(data), size});
        if (!r) {
            self->owner->malformed_.fetch_add(1, std::memory_order_relaxed);
            return 0;
        }
        self->cb(self->convert(*r));
        self->owner->delivered_.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }

    static int on_lost_sample(void* ctx, void* data, std::size_t size) {
        auto* self = static_cast<impl*>(ctx);
        if (size < sizeof(pt_lost_task)) return 0;
        pt_lost_task l{};
        std::memcpy(&l, data, sizeof l);
        self->report(l.tgid, l.pid, l.start_boottime);
        return 0;
    }

    void report(std::uint32_t tgid, std::uint32_t pid, std::uint64_t start_boottime) const {
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

    // The exact loss count's last part. The free program does not run for
    // every task whose exit ran: on kernel 6.18, a few ends per 10,000 in a
    // fork/exit storm never reach it, and no kernel counter shows them
    // (docs/BPF.md, "Losses"). Each such task leaves its stamp in the map. A
    // stamp older than `grace` whose task is gone from /proc (released, so
    // its free is due within an RCU grace period) is such a loss: it is
    // deleted and counted. Should its free still come, the program finds its
    // stamp gone on delete and takes the count back (found_after_sweep).
    void sweep() {
        constexpr auto grace = std::chrono::seconds{5};
        const int fd = bpf_map__fd(skel->maps.proctimes_exit_stamp);
        timespec ts{};
        ::clock_gettime(CLOCK_BOOTTIME, &ts);
        const auto now =
            static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
        const auto old = static_cast<std::uint64_t>(std::chrono::nanoseconds{grace}.count());
        std::uint64_t key = 0, next = 0;
        std::uint64_t* prev = nullptr;
        std::vector<std::pair<std::uint64_t, pt_exit_stamp>> gone;
        std::vector<std::uint64_t> stale;
        while (bpf_map_get_next_key(fd, prev, &next) == 0) {
            key = next;
            prev = &key;
            pt_exit_stamp st{};
            if (bpf_map_lookup_elem(fd, &key, &st) != 0) continue;  // freed meanwhile
            if (st.exit_boottime == 0) {                            // consumed, its delete failed: remove it, no loss
                if (st.start_boottime + old <= now) stale.push_back(key);
                continue;
            }
            if (st.exit_boottime + old > now || task_listed(st)) continue;
            gone.emplace_back(key, st);
        }
        for (auto& [k, st] : gone)
            if (bpf_map_delete_elem(fd, &k) == 0) {
                swept.fetch_add(1, std::memory_order_relaxed);
                report(st.tgid, st.pid, st.start_boottime);
            }
        for (std::uint64_t k : stale) (void)bpf_map_delete_elem(fd, &k);
    }

    void run() {
        epoll_event ev[2];
        while (true) {
            if (const auto t = std::chrono::steady_clock::now(); t - last_sweep >= std::chrono::seconds{1}) {
                last_sweep = t;
                try {
                    sweep();
                } catch (...) {  // out of memory: next time
                }
            }
            // The kernel skips a wake-up when the reader looks busy; a
            // periodic look makes sure no record waits longer than this.
            const int n = ::epoll_wait(epoll.get(), ev, 2, 200);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return;
            ring_buffer__consume(ring);
            for (int i = 0; i < n; ++i)
                if (ev[i].data.fd == stop.get()) {
                    ring_buffer__consume(ring);
                    return;
                }
        }
    }
};

result<std::unique_ptr<bpf_exit_stream>> bpf_exit_stream::start(callback cb, lost_callback on_lost) noexcept {
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
        if (proctimes_exits__load(m.skel) != 0) return errno_code(errno);
        if (proctimes_exits__attach(m.skel) != 0) return errno_code(errno);
        s->load_time_ = std::chrono::steady_clock::now() - t0;
        m.ring = ring_buffer__new(bpf_map__fd(m.skel->maps.proctimes_exit_ring), &impl::on_sample, &m, nullptr);
        if (!m.ring) return errno_code(errno);
        if (ring_buffer__add(m.ring, bpf_map__fd(m.skel->maps.proctimes_lost_ring), &impl::on_lost_sample, &m) != 0)
            return errno_code(errno);
        m.stop.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        m.epoll.reset(::epoll_create1(EPOLL_CLOEXEC));
        if (!m.stop || !m.epoll) return errno_code(errno);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = ring_buffer__epoll_fd(m.ring);
        if (::epoll_ctl(m.epoll.get(), EPOLL_CTL_ADD, ev.data.fd, &ev) != 0) return errno_code(errno);
        ev.data.fd = m.stop.get();
        if (::epoll_ctl(m.epoll.get(), EPOLL_CTL_ADD, ev.data.fd, &ev) != 0) return errno_code(errno);
        m.thread = std::thread([&m] { m.run(); });
        return s;
    } catch (...) {
        return errno_code(ENOMEM);
    }
}

bpf_exit_stream::~bpf_exit_stream() = default;

namespace {

// Runs of `prog` the kernel skipped to avoid recursion (bpf_prog_info, 5.12+).
std::uint64_t recursion_misses(bpf_program* prog) noexcept {
    bpf_prog_info info{};
    std::uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) != 0) return 0;
    return info.recursion_misses;
}

}  // namespace

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
    c.freed_unseen = __atomic_load_n(&bss->freed_unseen, __ATOMIC_RELAXED);
    c.found_after_sweep = __atomic_load_n(&bss->found_after_sweep, __ATOMIC_RELAXED);
    c.lost_unnamed = __atomic_load_n(&bss->lost_unnamed, __ATOMIC_RELAXED);
    return c;
}
std::uint64_t bpf_exit_stream::unstamped() const noexcept {
    return __atomic_load_n(&impl_->skel->bss->unstamped, __ATOMIC_RELAXED) +
           recursion_misses(impl_->skel->progs.proctimes_exit);
}

}  // namespace proctimes::inline v1::detail
