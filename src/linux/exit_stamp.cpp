// Stamping a task's end: the evidence a handle holds, given to the pure
// bound_exit() (exit_bounds.hpp).
#include <unistd.h>

#include "exit_bounds.hpp"
#include "linux/task.hpp"
#include "proctimes/boot.hpp"

namespace proctimes::detail {
namespace {

// The CPUs a process's threads can run on at once: every CPU the kernel has
// configured (more than it may use: the bound stays a lower bound).
unsigned process_parallelism() noexcept {
    static const unsigned n = [] {
        const long v = ::sysconf(_SC_NPROCESSORS_CONF);
        return v > 0 ? static_cast<unsigned>(v) : 1u;
    }();
    return n;
}

}  // namespace

void stamp_exit_locked(task_core& c, instant seen, std::chrono::nanoseconds cpu) noexcept {
    if (c.exit) return;  // the first observer's stamp never changes
    exit_evidence e;
    e.creation = c.creation;
    e.creation_tick = std::chrono::nanoseconds{1'000'000'000 / clock_ticks_per_second()};
    e.observed = seen;
    e.last_alive = c.last_alive;
    e.cpu = cpu;
    e.parallelism = c.is_thread ? 1u : process_parallelism();
    // A record with no elapsed time is a kernel that did not fill it.
    if (c.exit_record && c.exit_record->elapsed_us != 0)
        e.recorded_elapsed = std::chrono::microseconds{static_cast<std::int64_t>(c.exit_record->elapsed_us)};
    const exit_instant x = bound_exit(e);
    c.exit = x.exit;
    c.exit_earliest = x.earliest;
    c.exit_from = x.source;
    c.exit_resolution = x.resolution;
}

void fill_exit_locked(task_times& t, const task_core& c) noexcept {
    t.exit = c.exit;
    t.exit_earliest = c.exit_earliest;
    t.precision.exit_source = c.exit ? c.exit_from : exit_source::none;
    t.precision.exit_resolution = c.exit ? c.exit_resolution : std::chrono::nanoseconds{0};
}

}  // namespace proctimes::detail
