// SPDX-License-Identifier: MIT
// exit_stream and read_system_cpu_times (proctimes/ledger.hpp) on Linux: the
// eBPF exit stream's queue (exit_stream_bpf.hpp) where it can be used, else the
// taskstats listener registered by exit_records, read with the parser that
// keeps who each task was; /proc/stat through its pure parser.
#include <cerrno>
#include <ctime>
#include <new>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linux/exit_records.hpp"
#include "linux/exit_stream_bpf.hpp"
#include "linux/sys.hpp"
#include "parse/exit_task.hpp"
#include "parse/proc_stat_cpu.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/error.hpp"
#include "proctimes/ledger.hpp"

namespace proctimes {
namespace {

using std::chrono::nanoseconds;

nanoseconds boottime_now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return std::chrono::seconds(ts.tv_sec) + nanoseconds(ts.tv_nsec);
}

// The record's run time split by its tick-sampled utime:stime ratio, as the
// kernel scales a task's sampled split to its exact runtime (cputime_adjust).
// With both at 0 (a task shorter than a tick), all of it is kernel time: such
// a task spent its life mostly in fork, exec and exit.
ended_task to_ended(const parse::exit_task_record& r, nanoseconds received) noexcept {
    ended_task e;
    e.tid = static_cast<pid_t>(r.tid);
    e.pid = static_cast<pid_t>(r.tgid);
    e.parent_pid = static_cast<pid_t>(r.ppid);
    e.uid = static_cast<uid_t>(r.uid);
    e.name.assign(std::string_view(r.comm));
    const nanoseconds total{static_cast<std::int64_t>(r.run_ns)};
    const long double u = static_cast<long double>(r.utime_us), s = static_cast<long double>(r.stime_us);
    if (u + s > 0) {
        e.user = nanoseconds(static_cast<std::int64_t>(static_cast<long double>(total.count()) * u / (u + s)));
        e.kernel = total - e.user;
    } else {
        e.kernel = total;
    }
    e.elapsed = std::chrono::microseconds(static_cast<std::int64_t>(r.elapsed_us));
    e.received_since_boot = received;
    e.process_ended = r.group_dead;
    e.whole_process = r.group_dead && !r.group_record;
    e.forked_no_exec = r.forked_no_exec;
    if (e.pid == 0 && e.whole_process) e.pid = e.tid;  // one thread: it was the leader
    return e;
}

}  // namespace

struct exit_stream::impl {
    std::unique_ptr<detail::bpf_exit_queue> bpf;  // set: the eBPF source; else taskstats
    std::unique_ptr<detail::exit_records> records;
    std::unique_ptr<char[]> buf;
    std::vector<parse::exit_task_record> parsed;
    static constexpr std::size_t buffer_size = std::size_t{64} * 1024;
};

exit_stream::exit_stream() noexcept = default;
exit_stream::exit_stream(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
exit_stream::exit_stream(exit_stream&&) noexcept = default;
exit_stream& exit_stream::operator=(exit_stream&&) noexcept = default;
exit_stream::~exit_stream() = default;

result<exit_stream> exit_stream::open(exit_stream_source from) noexcept {
    try {
        if (from != exit_stream_source::taskstats) {
            auto q = detail::bpf_exit_queue::open();
            if (q) {
                auto p = std::make_unique<impl>();
                p->bpf = std::move(*q);
                return exit_stream(std::move(p));
            }
            if (from == exit_stream_source::bpf) return q.error();
        }
        std::error_code why;
        auto r = detail::exit_records::open(why);
        if (!r) return why ? why : make_error_code(errc::not_supported);
        auto p = std::make_unique<impl>();
        p->records = std::move(r);
        p->buf = std::make_unique<char[]>(impl::buffer_size);
        return exit_stream(std::move(p));
    } catch (const std::bad_alloc&) {
        return detail::errno_code(ENOMEM);
    }
}

std::string_view exit_stream::source() const noexcept {
    if (!impl_) return {};
    return impl_->bpf ? "bpf" : "taskstats";
}

std::optional<std::uint64_t> exit_stream::lost() const noexcept {
    if (!impl_ || !impl_->bpf) return std::nullopt;
    return impl_->bpf->lost();
}

int exit_stream::native_handle() const noexcept {
    if (!impl_) return -1;
    return impl_->bpf ? impl_->bpf->fd() : impl_->records->fd();
}

result<bool> exit_stream::read(std::vector<ended_task>& out) noexcept {
    if (!impl_) return make_error_code(errc::invalid_handle);
    if (impl_->bpf) return impl_->bpf->drain(out);
    bool complete = true;
    const int fd = impl_->records->fd();
    for (;;) {
        const ssize_t n = ::recv(fd, impl_->buf.get(), impl::buffer_size, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == ENOBUFS) {  // the kernel dropped datagrams: records lost
                complete = false;
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) return complete;
            return detail::last_errno();
        }
        const nanoseconds received = boottime_now();
        try {
            impl_->parsed.clear();
            parse::parse_exit_tasks(std::string_view(impl_->buf.get(), static_cast<std::size_t>(n)), 0,
                                    impl_->parsed);  // the socket hears only TASKSTATS
            for (const auto& r : impl_->parsed) out.push_back(to_ended(r, received));
        } catch (const std::bad_alloc&) {
            return detail::errno_code(ENOMEM);
        }
    }
}

result<bool> exit_stream::wait(std::chrono::milliseconds timeout) noexcept {
    if (!impl_) return make_error_code(errc::invalid_handle);
    pollfd p{native_handle(), POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (r < 0) return errno == EINTR ? result<bool>(false) : result<bool>(detail::last_errno());
    return r > 0;
}

result<system_cpu_times> read_system_cpu_times(const std::string& proc_root) noexcept {
    try {
        const nanoseconds at = boottime_now();
        std::string text;
        if (auto e = detail::read_file((proc_root + "/stat").c_str(), text, 1 << 20)) return e;
        const auto c = parse::parse_proc_stat_cpu(text);
        if (!c) return make_error_code(errc::malformed_data);
        const std::int64_t hz = clock_ticks_per_second();
        const std::int64_t per_tick = hz > 0 ? 1'000'000'000 / hz : 10'000'000;
        auto ns = [per_tick](std::uint64_t ticks) { return nanoseconds(static_cast<std::int64_t>(ticks) * per_tick); };
        system_cpu_times t;
        t.user = ns(c->user);
        t.nice = ns(c->nice);
        t.system = ns(c->system);
        t.idle = ns(c->idle);
        t.iowait = ns(c->iowait);
        t.irq = ns(c->irq);
        t.softirq = ns(c->softirq);
        t.steal = ns(c->steal);
        t.guest = ns(c->guest);
        t.guest_nice = ns(c->guest_nice);
        t.since_boot = at;
        t.cpus = c->cpus;
        return t;
    } catch (const std::bad_alloc&) {
        return detail::errno_code(ENOMEM);
    }
}

}  // namespace proctimes
