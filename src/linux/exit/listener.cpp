// SPDX-License-Identifier: MIT
// The Linux listener behind exit_stream (backend/backend.hpp:
// exit_backend::open_stream; linux/exit/monitor.hpp): the
// eBPF exit stream's queue (linux/exit/bpf_queue.hpp) where it can be used, else
// the taskstats listener registered by exit_records, read with the parser that
// keeps who each task was.
#include <cerrno>
#include <ctime>
#include <new>
#include <type_traits>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend/backend.hpp"
#include "linux/exit/bpf_queue.hpp"
#include "linux/exit/monitor.hpp"
#include "linux/exit/taskstats.hpp"
#include "linux/sys.hpp"
#include "parse/exit_task.hpp"
#include "parse/procfs.hpp"
#include "proctimes/error.hpp"

namespace proctimes::inline v1 {
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
    // The task's own exit code. For the last thread it is the process's: in
    // a group exit (exit_group(2), a fatal signal) every thread carries the
    // group's code, the one wait(2) reports.
    e.status = parse::decode_wait_status(r.exit_code);
    e.whole_process = r.group_dead && !r.group_record;
    e.forked_no_exec = r.forked_no_exec;
    if (e.pid == 0 && e.whole_process) e.pid = e.tid;  // one thread: it was the leader
    return e;
}

class linux_exit_stream final : public exit_stream::impl {
public:
    std::unique_ptr<detail::bpf_exit_queue> bpf;  // set: the eBPF source; else taskstats
    std::unique_ptr<detail::exit_records> records;
    std::unique_ptr<char[]> buf;
    std::vector<parse::exit_task_record> parsed;
    static constexpr std::size_t buffer_size = std::size_t{64} * 1024;

    [[nodiscard]] exit_stream_source source() const noexcept override {
        return bpf ? exit_stream_source::bpf : exit_stream_source::taskstats;
    }

    [[nodiscard]] std::optional<std::uint64_t> lost() const noexcept override {
        if (!bpf) return std::nullopt;
        return bpf->lost();
    }

    [[nodiscard]] int native_handle() const noexcept override { return bpf ? bpf->fd() : records->fd(); }

    [[nodiscard]] result<bool> settle(nanoseconds from, nanoseconds to,
                                      std::chrono::milliseconds timeout) const noexcept override {
        if (!bpf) return true;  // taskstats sends each record as its task exits
        try {
            return bpf->settle(from, to, std::chrono::steady_clock::now() + timeout);
        } catch (const std::bad_alloc&) {
            return detail::errno_code(ENOMEM);
        }
    }

    result<bool> read(std::vector<ended_task>& out) noexcept override {
        if (bpf) return bpf->drain(out);
        bool complete = true;
        const int fd = records->fd();
        for (;;) {
            const ssize_t n = ::recv(fd, buf.get(), buffer_size, MSG_DONTWAIT);
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
                parsed.clear();
                parse::parse_exit_tasks(std::string_view(buf.get(), static_cast<std::size_t>(n)), 0,
                                        parsed);  // the socket hears only TASKSTATS
                for (const auto& r : parsed) out.push_back(to_ended(r, received));
            } catch (const std::bad_alloc&) {
                return detail::errno_code(ENOMEM);
            }
        }
    }

    result<bool> wait(std::chrono::milliseconds timeout) noexcept override {
        pollfd p{native_handle(), POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
        if (r < 0) return errno == EINTR ? result<bool>(false) : result<bool>(detail::last_errno());
        return r > 0;
    }
};

}  // namespace

namespace detail {

result<std::unique_ptr<exit_stream::impl>> linux_exit_backend::open_stream(exit_stream_source from,
                                                                           exit_stream_delivery delivery) noexcept {
    try {
        if (from != exit_stream_source::taskstats) {
            auto q = bpf_exit_queue::open(delivery == exit_stream_delivery::on_read);
            if (q) {
                auto p = std::make_unique<linux_exit_stream>();
                p->bpf = std::move(*q);
                return std::unique_ptr<exit_stream::impl>(std::move(p));
            }
            if (from == exit_stream_source::bpf) return q.error();
        }
        std::error_code why;
        auto r = exit_records::open(why);
        if (!r) return why ? why : make_error_code(errc::not_supported);
        auto p = std::make_unique<linux_exit_stream>();
        p->records = std::move(r);
        p->buf = std::make_unique<char[]>(linux_exit_stream::buffer_size);
        return std::unique_ptr<exit_stream::impl>(std::move(p));
    } catch (const std::bad_alloc&) {
        return errno_code(ENOMEM);
    }
}

namespace {
// Never destroyed: usable by handles closed while the process exits.
static_assert(std::is_trivially_destructible_v<linux_exit_backend>);
constinit linux_exit_backend g_exit_backend;
}  // namespace

exit_backend& platform_exit_backend() noexcept { return g_exit_backend; }

}  // namespace detail
}  // namespace proctimes::inline v1
