// SPDX-License-Identifier: MIT
// What a process or thread handle knows about its task's life, as explicit
// states (task_phase): running, ended (final values, or the last values read
// when it was gone unread), reaped (ended, and collected by proctimes). Each
// state holds only what it knows; the transitions are the methods below, and
// a method that does not apply to the current state changes nothing.
// Portable policy: the backend only samples (task_sampler) and converts its
// exit records (exit/record.hpp); every rule of how samples, ends, exit
// records and wait results combine lives here, and is unit-tested with a fake
// sampler (tests/unit/lifecycle_test.cpp, lifecycle_phase_test.cpp).
//
//   running --(zombie sample, record_exit)--> ended --(child_reaped,
//   end_watch of a closed child)--> reaped; running --(child_reaped)--> reaped.
//   Nothing leaves ended or reaped, and nothing goes back to running.
//
// The rules:
//   - A sample that sees the task alive brackets its end: the end came after
//     the instant read just before that sample (last_alive; never moves back).
//   - The first observer of the end (a query finding a zombie, the exit
//     monitor, a waiter) stamps the exit instant; later observers never move it.
//   - A task gone unread keeps its last values (exited_partial), unless the
//     kernel's exit record has its final ones (exited, source exit_record).
//   - A reaped child's wait rusage (1 µs split) beats the zombie's tick split.
//   - A zombie's wait status is kept once seen, unless the main thread ended
//     early (then the status it shows is the main thread's, not the process's).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <system_error>
#include <variant>

#include "cpu_split.hpp"
#include "exit/bounds.hpp"
#include "exit/record.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/result.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1::detail {

/// What the state machine asks of a backend, for one task. Implementations
/// live on the caller's stack for the duration of one query.
class task_sampler {
public:
    /// Reads the task's live values now (creation, kernel, user, precision,
    /// sampled_at). `dead` is set when the read succeeded but showed the task
    /// ended (a zombie, or the last µs of its exit). The error for a task that
    /// is gone is the lifecycle's gone_error().
    virtual result<task_times> sample(bool& dead) noexcept = 0;
    /// Hands pending kernel exit records to the tasks they concern (may call
    /// task_lifecycle::offer_exit_record). Nothing when the backend has none.
    virtual void deliver_exit_records() noexcept = 0;
    /// For a task gone unread: waits (bounded) for an exit record that should
    /// be on its way. Returns at once when none is expected.
    virtual void await_exit_record() noexcept = 0;
    /// The wall clock (CLOCK_REALTIME), for "when was this seen".
    virtual instant now() noexcept = 0;

protected:
    ~task_sampler() = default;
};

/// Facts fixed at open, before the lifecycle is shared.
struct task_facts {
    bool is_thread = false;
    instant creation{};
    std::chrono::nanoseconds creation_tick{10'000'000};  ///< creation's granularity (one start tick)
    unsigned parallelism = 1;                            ///< CPUs the task's threads can use at once (1 for a thread)
    bool cpu_bounds_lifetime = true;                     ///< exit_evidence::cpu_bounds_lifetime
};

/// How an exit-monitor's reaping request for a closed child's handle goes.
enum class reap_plan : std::uint8_t {
    none,        ///< already reaped by proctimes: nothing to do
    on_exit,     ///< still watched: the monitor reaps it when the exit comes
    watch_again  ///< not watched (yet, or any more): watch it again to reap it
};

/// How a task's end reaches the lifecycle besides its observers: which
/// listener the exit monitor ran while it watched the task.
enum class record_channel : std::uint8_t {
    none,       ///< no listener: observers only
    taskstats,  ///< exit records (exit_record), sent before the task is seen ended
    exact       ///< exact final values (exit_final_values), sent after its release
};

/// Whether an ended task's exact final values were applied, or waited for.
enum class final_progress : std::uint8_t {
    pending,  ///< not in yet, not waited for
    awaited,  ///< waited for once (a lost end does not slow every query)
    applied   ///< in: the values and the instant are the exact ones
};

/// The states of a task's life (task_lifecycle), each with what it knows.
namespace task_phase {
/// Alive when last read.
struct running {
    std::optional<instant> last_alive;  ///< the clock read just before the last sample that saw it alive
    std::optional<task_times> last;     ///< the last values read
};
/// Its end has been recorded.
struct ended {
    std::optional<instant> last_alive;  ///< as it was when running: bounds the end
    /// The exit instant and what it promises, set by the first observer (or
    /// the exact final values). Absent only while nobody has stamped the end
    /// of a task that went from running straight to reaped.
    std::optional<exit_instant> stamp;
    std::optional<task_times> values;  ///< its final values, or the last read (partial)
    bool partial = false;              ///< values are the last read, not final ones (exited_partial)
    final_progress final = final_progress::pending;
};
/// Ended and collected by proctimes (a parent's wait, or the monitor for a
/// closed child): its id is released, nobody is left to reap it.
struct reaped {
    ended end;
};
}  // namespace task_phase

/// The state a handle shares with the exit monitor and waiters. Every method
/// is thread-safe (one internal mutex; the sampler is called without it held).
class task_lifecycle {
public:
    task_lifecycle() = default;
    task_lifecycle(const task_lifecycle&) = delete;
    task_lifecycle& operator=(const task_lifecycle&) = delete;

    /// Sets the facts; before the first query, while nothing else can see it.
    void set_facts(const task_facts& f) noexcept { facts_ = f; }
    const task_facts& facts() const noexcept { return facts_; }
    /// The error for "this task is gone" (no_such_process or no_such_thread).
    std::error_code gone_error() const noexcept;
    /// Keeps the reported split monotonic between reads (cpu_split.hpp).
    monotonic_split& split() noexcept { return split_; }

    /// times(): a fresh sample while the task can be read, otherwise what was
    /// recorded about its end (exit instant, final or last values). A task
    /// gone without anyone watching it and without a stamp gives gone_error().
    result<task_times> query(task_sampler& s) noexcept;

    /// Records that the task has ended, observed at `seen`: stamps the exit
    /// instant (first observer wins) and captures final values if the zombie
    /// is still readable, or the exit record's. Called by the exit monitor,
    /// by waiters, and by a query that finds a watched task gone.
    void record_exit(task_sampler& s, instant seen) noexcept;

    /// process::exit_status(): the status once seen; nullopt while the task
    /// runs; not_supported when it ended without its status being seen.
    result<std::optional<exit_status>> exit_status_now(task_sampler& s) noexcept;

    // ---- what a backend's sampler saw (called from task_sampler::sample) ----

    /// The main thread ended early while others run: the status the zombie
    /// leader shows is its own, not the process's; never keep it.
    void note_leader_exited_early() noexcept;
    /// A zombie showed its wait status: kept if none is known yet.
    void note_zombie_status(const exit_status& st) noexcept;

    // ---- the exit monitor ----

    /// The monitor watches the task from now on. `records`: its exit-record
    /// listener runs, so a record for the task will come; `losses`: the
    /// listener's count of lost-record bursts now.
    /// `exact`: the listener is the eBPF exit stream, whose record (offered
    /// with offer_final_values) comes after the task's release.
    void begin_watch(bool records, std::uint64_t losses, bool exact = false) noexcept;
    /// The monitor has handled the exit and stops watching. True when it must
    /// now reap the child (a closed child's handle asked for it): the caller
    /// reaps, and nobody else will.
    bool end_watch() noexcept;
    /// A closed child's handle asks that the monitor reap it.
    reap_plan request_reap() noexcept;
    /// A kernel exit record with this task's id came. `usable`: it stands for
    /// this task (a thread's own record, or a process's whole-group end). The
    /// first usable record is kept.
    void offer_exit_record(const exit_record& e, bool usable) noexcept;
    /// Whether a record should still be on its way: watched while the
    /// listener ran, none with its id came, none lost since (`losses` now).
    bool record_expected(std::uint64_t losses) const noexcept;
    /// Final values from the eBPF exit stream: exact CPU time and exit
    /// instant. They replace what an observer recorded (a zombie's values, an
    /// observed stamp), except a reaped child's wait values, which keep theirs
    /// and take only the instant.
    using final_values = exit_final_values;
    void offer_final_values(const final_values& f) noexcept;
    /// Ended, watched by the eBPF listener, and its final values not yet in.
    bool awaits_final_values() const noexcept;

    // ---- a parent's wait (spawn) ----

    /// The child was reaped by proctimes, with this status.
    void child_reaped(const exit_status& st) noexcept;
    /// Final values from the reaping wait (wait_rusage when its split could
    /// be used): the exit instant is filled in if empty, and later queries
    /// answer these values.
    void adopt_wait_values(task_times& t) noexcept;

    // ---- reads ----
    std::optional<exit_status> status() const noexcept;
    std::optional<instant> exit_instant() const noexcept;
    task_state state() const noexcept;
    bool watched() const noexcept;
    std::optional<instant> last_alive() const noexcept;
    std::optional<task_times> last() const noexcept;
    /// Whether the task has been reaped by proctimes (the reaped state).
    bool reaped() const noexcept;

private:
    using phase = std::variant<task_phase::running, task_phase::ended, task_phase::reaped>;

    // The ended part of the state (ended or reaped), or nullptr while running.
    task_phase::ended* end_locked() noexcept;
    const task_phase::ended* end_locked() const noexcept;
    // running -> ended, with `values` (final, or partial: the last read).
    task_phase::ended& finish_locked(std::optional<task_times> values, bool partial) noexcept;
    // running or ended -> reaped.
    void reap_locked() noexcept;
    void stamp_exit_locked(task_phase::ended& e, instant seen, std::chrono::nanoseconds cpu) const noexcept;
    static void fill_exit_locked(const std::optional<detail::exit_instant>& stamp, task_times& t) noexcept;
    void apply_final_locked() noexcept;

    task_facts facts_;
    monotonic_split split_;

    mutable std::mutex mutex_;
    phase phase_;
    // What the end showed, whatever the state: a zombie's status can be read
    // by the sample that finds it ended, before the end is recorded.
    std::optional<exit_status> status_;
    bool leader_exited_early_ = false;
    // The exit monitor's watch (`watched_`: registered now; the channel and
    // losses stay after it, for the records still to come).
    bool watched_ = false;
    record_channel channel_ = record_channel::none;
    std::uint64_t record_losses_at_watch_ = 0;
    bool reap_requested_ = false;  // a closed child's handle asked the monitor to reap it
    // Records that came for the task's id, whatever the state (a taskstats
    // record comes before the end is seen; exact values may come before).
    bool foreign_record_seen_ = false;  // a record with its id that was not its own
    std::optional<exit_record> exit_record_;
    std::optional<exit_final_values> final_;
};

}  // namespace proctimes::inline v1::detail
