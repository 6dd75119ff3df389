// SPDX-License-Identifier: MIT
// Linux backend: sampling a task through the descriptors its core keeps
// (the CPU clock or schedstat, then stat, with the stat memo), and the
// precision of each read. The identity argument is in process.cpp: a clock
// read is always confirmed by a read of a kept descriptor.
#include <ctime>

#include "clock_ns.hpp"
#include "linux/sys.hpp"
#include "linux/task.hpp"
#include "parse/procfs.hpp"
#include "precision.hpp"
#include "proctimes/boot.hpp"

namespace proctimes::inline v1::detail {

using std::chrono::nanoseconds;

namespace {

nanoseconds ticks_to_ns(std::uint64_t t) noexcept {
    return nanoseconds{static_cast<std::int64_t>(t) * (1'000'000'000 / clock_ticks_per_second())};
}

}  // namespace

cpu_precision precision_of(cpu_source s) noexcept { return precision_for(s, creation_resolution()); }

instant realtime_now() noexcept { return instant{nanoseconds{now_ns(CLOCK_REALTIME)}}; }

nanoseconds creation_resolution() noexcept { return nanoseconds{1'000'000'000 / clock_ticks_per_second()}; }

std::error_code read_stat(int fd, stat_read& out, bool thread) noexcept {
    const ssize_t n = pread_small(fd, out.buf, sizeof out.buf);
    if (n < 0) {
        if (errno == ESRCH) return make_error_code(thread ? errc::no_such_thread : errc::no_such_process);
        return last_errno();
    }
    auto rec = parse::parse_stat(std::string_view(out.buf, static_cast<std::size_t>(n)));
    if (!rec) return make_error_code(errc::malformed_data);
    out.rec = *rec;
    return {};
}

task_lifecycle& core_lifecycle(task_core& c) noexcept { return c.life; }

namespace {

std::int64_t coarse_now_ns() noexcept { return now_ns(CLOCK_MONOTONIC_COARSE); }

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

// The caller itself, through a real handle: the pseudo-handle's sources
// (self.cpp), so that mixing the two never shows kernel or user time going
// backwards; on Windows both name one object. Empty when `c` is not the
// caller, or when the caller's own read failed (the handle's path then answers).
std::optional<task_times> sample_self(const task_core& c) noexcept {
    if (!core_is_self(c)) return std::nullopt;
    auto t = c.is_thread ? self_thread_times(false) : self_process_times();
    if (!t) return std::nullopt;
    t->creation = c.creation;  // the same instant (core_is_self compared them for a thread)
    return *t;
}

}  // namespace

result<task_times> sample(task_core& c, bool& dead) noexcept {
    if (auto self = sample_self(c)) {
        dead = false;  // the caller runs
        return *self;
    }
    nanoseconds total{-1};
    cpu_source source = c.is_thread ? cpu_source::schedstat_and_stat : cpu_source::cpu_clock_and_stat;
    bool memo = false;  // whether this total may key the stat memo
    if (!c.is_thread || c.tgid == c.opener_pid) {
        // Read before the stat pread below (or, on a memo hit, the pidfd poll),
        // which confirms the id was not reused.
        timespec ts{};
        const clockid_t id = c.is_thread ? thread_cpu_clock_id(c.id) : process_cpu_clock_id(c.id);
        if (::clock_gettime(id, &ts) == 0) {
            total = to_ns(ts);
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
    char state = s.rec.state;
    if (!c.is_thread && parse::is_dead(s.rec)) {
        if (parse::leader_exited_early(s.rec)) {
            // The main thread has ended (pthread_exit) but other threads run:
            // the process runs. Its stat shows the main thread's state and
            // exit code, which is not the process's.
            state = 'R';
            c.life.note_leader_exited_early();
        } else if (c.status_readable && s.rec.exit_code) {
            // A zombie shows its wait status until it is reaped: keep it.
            if (auto st = parse::decode_wait_status(*s.rec.exit_code)) c.life.note_zombie_status(*st);
        }
    }

    task_times t;
    t.creation = c.creation;
    if (total.count() >= 0) {
        const auto ku = c.life.split().apply(total, s.rec.utime, s.rec.stime, (s.rec.flags & parse::pf_kthread) != 0);
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
    dead = parse::is_dead_state(state);
    return t;
}

}  // namespace proctimes::inline v1::detail
