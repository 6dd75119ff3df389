// SPDX-License-Identifier: MIT
// CPU used between two snapshots: compute_delta and snapshot_delta. Portable:
// it reads only the two snapshots. See include/proctimes/snapshot.hpp.
#include "proctimes/snapshot.hpp"

#include <algorithm>
#include <cerrno>

#include "proctimes/boot.hpp"

namespace proctimes::inline v1 {

using std::chrono::nanoseconds;

namespace {

cpu_precision coarser(const cpu_precision& a, const cpu_precision& b) noexcept {
    return a.total_resolution >= b.total_resolution ? a : b;
}

double percent(nanoseconds used, nanoseconds interval) noexcept {
    if (interval.count() <= 0) return 0;
    return 100.0 * static_cast<double>(used.count()) / static_cast<double>(interval.count());
}

// CPU used between two samples of the same task.
void between(cpu_delta& d, const task_times& a, const task_times& b) noexcept {
    nanoseconds total = b.cpu() - a.cpu();
    if (total.count() < 0) total = nanoseconds{0};
    nanoseconds k = std::clamp(b.kernel - a.kernel, nanoseconds{0}, total);
    d.kernel = k;
    d.user = total - k;
    d.precision = coarser(a.precision, b.precision);
}

// A task absent from `before`: created in the interval, or unseen then.
void fresh(cpu_delta& d, const task_times& b, std::uint64_t start_ticks, std::uint64_t before_tick) noexcept {
    d.precision = b.precision;
    if (start_ticks >= before_tick) {
        d.basis = delta_basis::created;
        d.kernel = b.kernel;
        d.user = b.user;
    } else {
        d.basis = delta_basis::unseen;
    }
}

}  // namespace

std::chrono::nanoseconds snapshot_delta::total_cpu() const noexcept {
    nanoseconds sum{0};
    for (const auto& p : processes) sum += p.cpu();
    return sum;
}

result<snapshot_delta> compute_delta(const snapshot& before, const snapshot& after) noexcept {
    if (before.boot != after.boot || after.since_boot < before.since_boot) return errc::invalid_argument;
    try {
        snapshot_delta d;
        d.interval = after.since_boot - before.since_boot;
        // Start ticks count in units of 1/clock_ticks_per_second() (USER_HZ);
        // a backend that has no such clock answers 0 or less: take 1 ns ticks
        // rather than divide by zero.
        const std::int64_t hz = clock_ticks_per_second();
        const std::int64_t tick_ns = hz > 0 ? 1'000'000'000 / hz : 1;
        // Start ticks at or after this one began after `before` was taken (up
        // to one tick early: a start time is floored to its tick).
        const auto before_tick = static_cast<std::uint64_t>(before.since_boot.count() / tick_ns);
        const bool with_threads = before.has_threads && after.has_threads;
        d.processes.resize(after.processes.size());
        if (with_threads) d.threads.resize(after.threads.size());

        auto key_less = [](const task_identity& a, const task_identity& b) {
            return a.id != b.id ? a.id < b.id : a.start_ticks < b.start_ticks;
        };
        std::size_t i = 0;  // into before.processes
        for (std::size_t j = 0; j < after.processes.size(); ++j) {
            const auto& b = after.processes[j];
            auto& e = d.processes[j];
            e.identity = b.identity;
            e.pid = b.pid();
            while (i < before.processes.size() && key_less(before.processes[i].identity, b.identity)) {
                d.exited.push_back(before.processes[i].identity);
                ++i;
            }
            const snapshot_process* a = nullptr;
            if (i < before.processes.size() && before.processes[i].pid() == b.pid() &&
                before.processes[i].identity.start_ticks == b.identity.start_ticks)
                a = &before.processes[i++];
            if (a)
                between(e, a->times, b.times);
            else
                fresh(e, b.times, b.identity.start_ticks, before_tick);
            e.cpu_percent = percent(e.cpu(), d.interval);

            if (!with_threads) continue;
            const auto bt = after.threads_of(b);
            const auto at = a ? before.threads_of(*a) : std::span<const snapshot_thread>{};
            std::size_t k = 0;
            for (std::size_t m = 0; m < bt.size(); ++m) {
                const auto& t = bt[m];
                auto& te = d.threads[b.first_thread + m];
                te.identity = t.identity;
                te.pid = t.pid;
                while (k < at.size() && key_less(at[k].identity, t.identity)) ++k;
                if (k < at.size() && at[k].identity.id == t.identity.id &&
                    at[k].identity.start_ticks == t.identity.start_ticks)
                    between(te, at[k++].times, t.times);
                else
                    fresh(te, t.times, t.identity.start_ticks, before_tick);
                te.cpu_percent = percent(te.cpu(), d.interval);
            }
        }
        for (; i < before.processes.size(); ++i) d.exited.push_back(before.processes[i].identity);
        return d;
    } catch (...) {
        return std::error_code{ENOMEM, std::system_category()};
    }
}

}  // namespace proctimes::inline v1
