// SPDX-License-Identifier: MIT
// What an exit instant can honestly say: the bounds of a task's end from the
// evidence at hand. Pure, portable, unit-tested (tests/unit/exit_bounds_test.cpp).
//
// Nothing on Linux tells an unprivileged reader when a task ended. Whoever sees
// the end (the exit monitor's wake-up, a wait's, a query finding a zombie)
// knows only that it happened before that moment: an upper bound, as late as
// the observer was (a process that has been a zombie for 2 s and is then
// opened is seen 2 s late). Lower bounds come from what the task itself showed:
// the last sample that found it alive, and its CPU time (a thread cannot run
// longer than it lives; a process's threads run on all CPUs at once at most).
// The kernel's taskstats exit record carries the task's elapsed time (ac_etime,
// µs, measured from its start at its end in do_exit()), which puts the end at
// creation + elapsed, with creation's own 10 ms floor.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>

#include "proctimes/times.hpp"

namespace proctimes::inline v1::detail {

struct exit_evidence {
    instant creation{};                        ///< floored to its tick, as reported
    std::chrono::nanoseconds creation_tick{};  ///< that tick (10 ms)
    instant observed{};                        ///< when the end was seen (CLOCK_REALTIME)
    std::optional<instant> last_alive;         ///< start of the last sample that saw it alive
    std::chrono::nanoseconds cpu{};            ///< CPU time it used (a lower bound of the final value is fine)
    unsigned parallelism = 1;                  ///< 1 for a thread; the CPUs a process can use at once
    /// Whether `cpu` proves a lifetime: not where CPU is charged a whole clock
    /// tick to whoever runs when the tick comes (Windows), which can exceed
    /// the time the task lived, nor where it may be another task's (Wine).
    bool cpu_bounds_lifetime = true;
    std::optional<std::chrono::microseconds> recorded_elapsed;  ///< ac_etime of its exit record
};

struct exit_instant {
    instant exit{};
    instant earliest{};
    exit_source source = exit_source::none;
    std::chrono::nanoseconds resolution{};
};

/// The exit instant to report and its bounds (see exit_source for what each
/// source promises). Never earlier than creation; earliest <= exit.
inline exit_instant bound_exit(const exit_evidence& e) noexcept {
    using std::chrono::nanoseconds;
    exit_instant r;
    if (e.recorded_elapsed && e.recorded_elapsed->count() >= 0) {
        // The end was at creation's tick start + the start offset within the
        // tick (0 to one tick) + elapsed: the instant is floored like creation.
        r.exit = e.creation + *e.recorded_elapsed;
        r.earliest = r.exit;
        r.source = exit_source::exit_record;
        // The observer saw the end after it happened, which can narrow the tick.
        r.resolution = e.observed > r.exit ? std::min(e.creation_tick, e.observed - r.exit) : e.creation_tick;
        return r;
    }
    const unsigned n = std::max(e.parallelism, 1u);
    instant earliest = e.creation;
    if (e.cpu_bounds_lifetime) earliest += std::max(e.cpu, nanoseconds{0}) / n;
    if (e.last_alive) earliest = std::max(earliest, *e.last_alive);
    r.earliest = earliest;
    // A realtime clock stepped back between the two readings could put the
    // observation before what is already known: the end cannot be earlier.
    r.exit = std::max(e.observed, earliest);
    r.source = exit_source::observed;
    r.resolution = r.exit - r.earliest;
    return r;
}

}  // namespace proctimes::inline v1::detail
