// SPDX-License-Identifier: MIT
// The exit stream's user-space half: a ring-buffer reader on its own thread.
#include "platform_exit_stream.hpp"

#include <cerrno>
#include <thread>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_split.hpp"
#include "exits.skel.h"
#include "linux/bpf/loader.hpp"
#include "linux/sys.hpp"
#include "parse/bpf_records.hpp"
#include "proctimes/boot.hpp"

namespace proctimes::detail {

using std::chrono::nanoseconds;

struct bpf_exit_stream::impl {
    bpf_exit_stream* owner = nullptr;
    proctimes_exits* skel = nullptr;
    ring_buffer* ring = nullptr;
    unique_fd stop;   // eventfd: written to stop the thread
    unique_fd epoll;  // the ring's fd and `stop`
    callback cb;
    boot_anchor anchor{};
    std::int64_t tick = 10'000'000;
    std::thread thread;

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

    bpf_task_end convert(const parse::bpf_exit_record& r) const {
        bpf_task_end e;
        e.pid = static_cast<pid_t>(r.tgid);
        e.tid = static_cast<pid_t>(r.pid);
        e.parent_pid = static_cast<pid_t>(r.ppid);
        e.uid = r.euid;
        e.kernel_thread = (r.flags & parse::bpf_pf_kthread) != 0;
        e.name.assign(parse::comm_view(r.comm));
        e.start_ticks = r.start_boottime / static_cast<std::uint64_t>(tick);
        auto at = [&](std::uint64_t boottime) {
            return anchor.boot + nanoseconds{static_cast<std::int64_t>(boottime)};
        };
        e.creation = at(r.start_boottime);
        if (r.exit_boottime) e.exit = at(r.exit_boottime);
        e.released = at(r.free_boottime);
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

    void run() {
        epoll_event ev[2];
        while (true) {
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

result<std::unique_ptr<bpf_exit_stream>> bpf_exit_stream::start(callback cb) noexcept {
    try {
        auto anchor = get_boot_anchor();
        if (!anchor) return anchor.error();
        if (auto why = bpf::precheck(); !why.empty()) return make_error_code(errc::not_supported);
        bpf::quiet_libbpf();
        std::unique_ptr<bpf_exit_stream> s(new bpf_exit_stream);
        s->impl_ = std::make_unique<impl>();
        impl& m = *s->impl_;
        m.owner = s.get();
        m.cb = std::move(cb);
        m.anchor = *anchor;
        m.tick = 1'000'000'000 / clock_ticks_per_second();
        const auto t0 = std::chrono::steady_clock::now();
        m.skel = proctimes_exits__open_and_load();
        if (!m.skel) return errno_code(errno);
        if (proctimes_exits__attach(m.skel) != 0) return errno_code(errno);
        s->load_time_ = std::chrono::steady_clock::now() - t0;
        m.ring = ring_buffer__new(bpf_map__fd(m.skel->maps.proctimes_exit_ring), &impl::on_sample, &m, nullptr);
        if (!m.ring) return errno_code(errno);
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
    return __atomic_load_n(&impl_->skel->bss->dropped, __ATOMIC_RELAXED) +
           recursion_misses(impl_->skel->progs.proctimes_free);
}
std::uint64_t bpf_exit_stream::unstamped() const noexcept {
    return __atomic_load_n(&impl_->skel->bss->unstamped, __ATOMIC_RELAXED) +
           recursion_misses(impl_->skel->progs.proctimes_exit);
}

}  // namespace proctimes::detail
