// SPDX-License-Identifier: MIT
// Linux backend of this_process and this_thread (backend/backend.hpp, "the calling
// process and thread"): read without a handle.
//
// Sources (docs/DESIGN.md, "CPU times"): the process from getrusage(RUSAGE_SELF),
// which the kernel brings up to date for the calling thread; the thread's total
// from its own CPU clock, because getrusage(RUSAGE_THREAD) is not brought up to
// date, and only the split from getrusage. Creation instants are read once from
// /proc/self (/proc/thread-self), which names the caller in any procfs that
// shows it, even one of an outer pid namespace.
#include <atomic>
#include <ctime>

#include <fcntl.h>
#include <sys/resource.h>

#include "backend/backend.hpp"
#include "clock_ns.hpp"
#include "cpu_split.hpp"
#include "linux/fork_generation.hpp"
#include "linux/sys.hpp"
#include "linux/task.hpp"
#include "parse/procfs.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/process.hpp"

namespace proctimes::inline v1 {

using detail::unique_fd;
using std::chrono::nanoseconds;

namespace {

// The calling process's times: one getrusage(RUSAGE_SELF). Its sum is current
// for the calling thread: a whole-process read brings the caller's runtime up
// to date (thread_group_cputime(), kernel/sched/cputime.c), as the process CPU
// clock does.
result<task_times> process_rusage_times(instant created) noexcept {
    rusage ru{};
    if (::getrusage(RUSAGE_SELF, &ru) != 0) return detail::last_errno();
    task_times t;
    t.creation = created;
    t.kernel = detail::to_ns(ru.ru_stime);
    t.user = detail::to_ns(ru.ru_utime);
    t.precision = detail::precision_of(cpu_source::rusage);
    t.sampled_at = detail::realtime_now();
    return t;
}

result<instant> creation_from_path(const char* path) noexcept {
    char buf[detail::small_file_max];
    unique_fd fd{detail::open_read(AT_FDCWD, path)};
    if (!fd)
        return detail::proc_is_mounted() ? detail::file_error(errno) : make_error_code(errc::process_table_unavailable);
    const ssize_t n = detail::pread_small(fd.get(), buf, sizeof buf);
    if (n < 0) return detail::file_error(errno);
    auto rec = parse::parse_stat(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!rec) return errc::malformed_data;
    return instant_from_start_ticks(rec->starttime);
}

}  // namespace

namespace detail {

pid_t self_process_id() noexcept { return ::getpid(); }
pid_t self_thread_id() noexcept {
    // Cached per thread (and per fork generation: a forked child's thread has
    // a new id): gettid(2) is a system call.
    thread_local std::uint64_t gen = 0;
    thread_local pid_t tid = 0;
    const std::uint64_t now_gen = detail::fork_generation();
    if (gen != now_gen) {
        tid = static_cast<pid_t>(::gettid());
        gen = now_gen;
    }
    return tid;
}

namespace {

// The calling process's creation instant: read /proc/self/stat once (per fork).
result<instant> self_process_creation() noexcept {
    static std::atomic<std::uint64_t> cached_gen{0};
    static std::atomic<std::int64_t> cached_ns{0};
    const std::uint64_t gen = detail::fork_generation();
    if (cached_gen.load(std::memory_order_acquire) == gen)
        return instant{nanoseconds{cached_ns.load(std::memory_order_relaxed)}};
    auto c = creation_from_path("/proc/self/stat");
    if (!c) return c.error();
    cached_ns.store(c->time_since_epoch().count(), std::memory_order_relaxed);
    cached_gen.store(gen, std::memory_order_release);
    return *c;
}

}  // namespace

result<process_times> self_process_times() noexcept {
    auto created = self_process_creation();
    if (!created) return created.error();
    return process_rusage_times(*created);
}

result<instant> self_thread_creation() noexcept {
    thread_local std::uint64_t cached_gen = 0;
    thread_local instant created;
    const std::uint64_t gen = detail::fork_generation();
    if (cached_gen == gen) return created;
    // The main thread started with the process: the same start tick, and a
    // lookup the process's own times share. Any other thread reads its own
    // stat once: /proc is the only place the kernel shows a thread's start.
    auto c = self_thread_id() == ::getpid() ? self_process_creation() : creation_from_path("/proc/thread-self/stat");
    if (!c) return c.error();
    created = *c;
    cached_gen = gen;
    return created;
}

// getrusage(RUSAGE_THREAD) alone would lag: it reports the thread's runtime as
// of its last tick or context switch (task_cputime_adjusted() reads
// sum_exec_runtime without update_curr()), so a thread that runs for less than
// a tick between two switches sees part of that time only later, or never
// before it sleeps again. Its CPU clock adds the time since (task_sched_runtime()).
// So the total comes from the clock, read after getrusage so that it is never
// below the rusage sum, and only the ratio from getrusage.
result<thread_times> self_thread_times(bool with_creation) noexcept {
    thread_local std::uint64_t split_gen = 0;
    thread_local detail::split_guard split;  // this thread's own: no lock
    const std::uint64_t gen = detail::fork_generation();
    if (split_gen != gen) {
        split = {};  // a forked child's thread starts again near zero
        split_gen = gen;
    }
    instant created{};
    if (with_creation) {
        auto c = self_thread_creation();
        if (!c) return c.error();
        created = *c;
    }
    rusage ru{};
    if (::getrusage(RUSAGE_THREAD, &ru) != 0) return detail::last_errno();
    timespec ts{};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return detail::last_errno();
    const nanoseconds total = detail::to_ns(ts);
    const auto us = [](const timeval& tv) {
        return static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(detail::to_ns(tv)).count());
    };
    const auto ku = split.apply(total, us(ru.ru_utime), us(ru.ru_stime));
    thread_times t;
    t.creation = created;
    t.kernel = ku.kernel;
    t.user = ku.user;
    t.precision = detail::precision_of(cpu_source::thread_clock_and_rusage);
    t.sampled_at = detail::realtime_now();
    return t;
}

}  // namespace detail

}  // namespace proctimes::inline v1
