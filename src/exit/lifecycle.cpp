// SPDX-License-Identifier: MIT
// The task state machine (exit/lifecycle.hpp): portable, driven by a backend's
// sampler.
#include "exit/lifecycle.hpp"

#include <type_traits>

#include "precision.hpp"

namespace proctimes::inline v1::detail {

using std::chrono::nanoseconds;

// A transition assigns a whole new state: trivial (no destructor, no visit),
// so it cannot fail.
static_assert(std::is_trivially_copyable_v<std::variant<task_phase::running, task_phase::ended, task_phase::reaped>>);

std::error_code task_lifecycle::gone_error() const noexcept {
    return make_error_code(facts_.is_thread ? errc::no_such_thread : errc::no_such_process);
}

task_phase::ended* task_lifecycle::end_locked() noexcept {
    if (auto* e = std::get_if<task_phase::ended>(&phase_)) return e;
    if (auto* r = std::get_if<task_phase::reaped>(&phase_)) return &r->end;
    return nullptr;
}

const task_phase::ended* task_lifecycle::end_locked() const noexcept {
    return const_cast<task_lifecycle*>(this)->end_locked();
}

task_phase::ended& task_lifecycle::finish_locked(std::optional<task_times> values, bool partial) noexcept {
    if (auto* e = end_locked()) return *e;  // ended already: the recorded end stays
    task_phase::ended e;
    e.last_alive = std::get_if<task_phase::running>(&phase_)->last_alive;
    e.values = values;
    e.partial = partial;
    if (e.values) e.values->state = partial ? task_state::exited_partial : task_state::exited;
    phase_ = phase(std::in_place_type<task_phase::ended>, e);
    return *std::get_if<task_phase::ended>(&phase_);
}

void task_lifecycle::reap_locked() noexcept {
    if (std::holds_alternative<task_phase::reaped>(phase_)) return;
    if (auto* e = std::get_if<task_phase::ended>(&phase_)) {
        const task_phase::reaped r{*e};
        phase_ = phase(std::in_place_type<task_phase::reaped>, r);
        return;
    }
    // Reaped before anyone recorded its end: what was last read is all there is.
    auto& run = *std::get_if<task_phase::running>(&phase_);
    task_phase::reaped r;
    r.end.last_alive = run.last_alive;
    r.end.values = run.last;
    r.end.partial = true;
    if (r.end.values) r.end.values->state = task_state::exited_partial;
    phase_ = phase(std::in_place_type<task_phase::reaped>, r);
}

void task_lifecycle::stamp_exit_locked(task_phase::ended& end, instant seen, nanoseconds cpu) const noexcept {
    if (end.stamp) return;  // the first observer's stamp never changes
    exit_evidence e;
    e.creation = facts_.creation;
    e.creation_tick = facts_.creation_tick;
    e.observed = seen;
    e.last_alive = end.last_alive;
    e.cpu = cpu;
    e.parallelism = facts_.is_thread ? 1u : facts_.parallelism;
    e.cpu_bounds_lifetime = facts_.cpu_bounds_lifetime;
    if (exit_record_) e.recorded_elapsed = exit_record_->elapsed;
    end.stamp = bound_exit(e);
}

void task_lifecycle::fill_exit_locked(const std::optional<detail::exit_instant>& stamp, task_times& t) noexcept {
    if (stamp) {
        t.exit = stamp->exit;
        t.exit_earliest = stamp->earliest;
        t.precision.exit_source = stamp->source;
        t.precision.exit_resolution = stamp->resolution;
    } else {
        t.exit.reset();
        t.exit_earliest.reset();
        t.precision.exit_source = exit_source::none;
        t.precision.exit_resolution = nanoseconds{0};
    }
}

result<task_times> task_lifecycle::query(task_sampler& s) noexcept {
    const instant before = s.now();  // a sample that sees it alive proves it ended after this
    bool dead = false;
    auto r = s.sample(dead);
    // A zombie's exit record (if one was sent) came before the zombie showed.
    if (r && dead) s.deliver_exit_records();
    if (r) {
        std::lock_guard lock(mutex_);
        if (auto* run = std::get_if<task_phase::running>(&phase_)) {
            if (!dead) {
                if (!run->last_alive || *run->last_alive < before) run->last_alive = before;
                r->state = task_state::running;
                fill_exit_locked(std::nullopt, *r);
                run->last = *r;
                return r;
            }
            finish_locked(std::nullopt, false);
        }
        // Ended (now or before). A zombie ended no later than this sample:
        // the first observer stamps it (the monitor, if it watches, would a
        // few µs later), saying it was observed, never passing the sample
        // off as the end.
        task_phase::ended& end = *end_locked();
        if (dead) stamp_exit_locked(end, r->sampled_at, r->cpu());
        if (end.values && end.values->precision.source == cpu_source::wait_rusage) {
            task_times t = *end.values;  // a reaped child's µs values beat the zombie's ticks
            fill_exit_locked(end.stamp, t);
            return t;
        }
        r->state = task_state::exited;
        fill_exit_locked(end.stamp, *r);
        end.values = *r;
        return r;
    }
    if (r.error() != gone_error()) return r.error();

    bool record = false, await_final = false;
    {
        std::lock_guard lock(mutex_);
        if (auto* end = end_locked()) {
            // Released now: its exact final values are at most an RCU grace
            // period away (bounded wait, only while they are expected).
            await_final = channel_ == record_channel::exact && end->final == final_progress::pending;
            if (await_final) end->final = final_progress::awaited;  // once: a lost end does not slow every query
        } else {
            if (!watched_) return r.error();  // nothing recorded its end
            record = true;
        }
    }
    if (record) record_exit(s, s.now());
    if (await_final) s.await_exit_record();
    std::lock_guard lock(mutex_);
    apply_final_locked();
    const task_phase::ended* end = end_locked();
    if (!end || !end->values) return r.error();
    task_times t = *end->values;
    fill_exit_locked(end->stamp, t);
    t.state = end->partial ? task_state::exited_partial : task_state::exited;
    return t;
}

void task_lifecycle::record_exit(task_sampler& s, instant seen) noexcept {
    bool dead = false;
    auto r = s.sample(dead);        // the zombie, if it is not reaped yet
    s.deliver_exit_records();       // its exit record, if one was sent: final values when gone, and the instant
    if (!r) s.await_exit_record();  // gone unread: a record it should have had, bounded
    std::lock_guard lock(mutex_);
    if (auto* end = end_locked()) {  // already recorded
        stamp_exit_locked(*end, seen, end->values ? end->values->cpu() : nanoseconds{0});
        return;
    }
    auto& run = *std::get_if<task_phase::running>(&phase_);
    task_phase::ended* end = nullptr;
    if (r) {
        // Readable: a zombie (or a task in the last µs of its exit); these
        // are its final values.
        end = &finish_locked(*r, false);
    } else if (exit_record_) {
        // Released before anyone could read it, but the kernel's exit record
        // has its final run time and split.
        const auto& e = *exit_record_;
        task_times t;
        t.creation = facts_.creation;
        const auto ku = split_.apply(e.run, e.user_us, e.kernel_us);
        t.kernel = ku.kernel;
        t.user = ku.user;
        t.precision = precision_for(cpu_source::exit_record, facts_.creation_tick);
        end = &finish_locked(t, false);
    } else {
        end = &finish_locked(run.last, true);
    }
    stamp_exit_locked(*end, seen, end->values ? end->values->cpu() : nanoseconds{0});
    if (end->values && end->values->precision.source == cpu_source::exit_record)
        end->values->sampled_at = end->stamp->exit;
    apply_final_locked();
}

void task_lifecycle::apply_final_locked() noexcept {
    task_phase::ended* end = end_locked();
    if (!final_ || !end || end->final == final_progress::applied) return;
    end->final = final_progress::applied;
    const auto& f = *final_;
    if (f.exit) end->stamp = detail::exit_instant{*f.exit, *f.exit, exit_source::bpf_exit, nanoseconds{1}};
    if (f.status && !status_ && !leader_exited_early_) status_ = *f.status;
    if (end->values && end->values->precision.source == cpu_source::wait_rusage) return;  // a reaped child's own values
    task_times t = end->values ? *end->values : task_times{};
    t.creation = facts_.creation;
    t.kernel = f.kernel;
    t.user = f.user;
    t.precision = precision_for(cpu_source::bpf_exit, facts_.creation_tick);
    t.state = task_state::exited;
    if (end->stamp) t.sampled_at = end->stamp->exit;
    end->values = t;
    end->partial = false;
}

result<std::optional<exit_status>> task_lifecycle::exit_status_now(task_sampler& s) noexcept {
    auto t = query(s);  // reads the zombie's status if it is one now
    std::lock_guard lock(mutex_);
    if (status_) return std::optional<exit_status>(*status_);
    // Gone without a record (reaped while nobody watched): it did exit, but
    // its status was never seen.
    if (!t) return t.error() == gone_error() ? make_error_code(errc::not_supported) : t.error();
    if (t->state == task_state::running) return std::optional<exit_status>();
    return errc::not_supported;  // exited; reaped before its status could be read
}

void task_lifecycle::note_leader_exited_early() noexcept {
    std::lock_guard lock(mutex_);
    leader_exited_early_ = true;
}

void task_lifecycle::note_zombie_status(const exit_status& st) noexcept {
    std::lock_guard lock(mutex_);
    if (!status_ && !leader_exited_early_) status_ = st;
}

void task_lifecycle::begin_watch(bool records, std::uint64_t losses, bool exact) noexcept {
    std::lock_guard lock(mutex_);
    watched_ = true;
    channel_ = !records ? record_channel::none : exact ? record_channel::exact : record_channel::taskstats;
    record_losses_at_watch_ = losses;
}

bool task_lifecycle::end_watch() noexcept {
    std::lock_guard lock(mutex_);
    watched_ = false;
    const bool reap = reap_requested_ && !std::holds_alternative<task_phase::reaped>(phase_);
    if (reap) reap_locked();
    return reap;
}

reap_plan task_lifecycle::request_reap() noexcept {
    // Decided under the lock that end_watch also takes: either the task is
    // still watched and the monitor will see the request when the exit comes,
    // or the monitor has already handled the exit (or never watched it) and
    // it must be watched again, to be reaped at once if it has already exited.
    std::lock_guard lock(mutex_);
    if (std::holds_alternative<task_phase::reaped>(phase_)) return reap_plan::none;
    reap_requested_ = true;
    return watched_ ? reap_plan::on_exit : reap_plan::watch_again;
}

void task_lifecycle::offer_exit_record(const exit_record& e, bool usable) noexcept {
    std::lock_guard lock(mutex_);
    // The first record for a watched id is its own task's: the task was alive
    // when it was registered, and its id cannot be reused before its own
    // record has been sent.
    if (!usable)
        foreign_record_seen_ = true;
    else if (!exit_record_)
        exit_record_ = e;
}

bool task_lifecycle::record_expected(std::uint64_t losses) const noexcept {
    std::lock_guard lock(mutex_);
    return channel_ != record_channel::none && !foreign_record_seen_ && !exit_record_ && !final_ &&
           record_losses_at_watch_ == losses;
}

void task_lifecycle::offer_final_values(const final_values& f) noexcept {
    std::lock_guard lock(mutex_);
    if (!final_) final_ = f;
    apply_final_locked();
}

bool task_lifecycle::awaits_final_values() const noexcept {
    std::lock_guard lock(mutex_);
    return channel_ == record_channel::exact && !final_;
}

void task_lifecycle::child_reaped(const exit_status& st) noexcept {
    std::lock_guard lock(mutex_);
    reap_locked();
    status_ = st;  // process::exit_status() answers it from now on
}

void task_lifecycle::adopt_wait_values(task_times& t) noexcept {
    std::lock_guard lock(mutex_);
    task_phase::ended& end = finish_locked(std::nullopt, false);
    if (!t.exit && end.stamp) t.exit = end.stamp->exit;
    t.state = task_state::exited;
    end.values = t;
    end.partial = false;
}

std::optional<exit_status> task_lifecycle::status() const noexcept {
    std::lock_guard lock(mutex_);
    return status_;
}

std::optional<instant> task_lifecycle::exit_instant() const noexcept {
    std::lock_guard lock(mutex_);
    const task_phase::ended* end = end_locked();
    if (!end || !end->stamp) return std::nullopt;
    return end->stamp->exit;
}

task_state task_lifecycle::state() const noexcept {
    std::lock_guard lock(mutex_);
    const task_phase::ended* end = end_locked();
    if (!end) return task_state::running;
    return end->partial ? task_state::exited_partial : task_state::exited;
}

bool task_lifecycle::watched() const noexcept {
    std::lock_guard lock(mutex_);
    return watched_;
}

std::optional<instant> task_lifecycle::last_alive() const noexcept {
    std::lock_guard lock(mutex_);
    if (const task_phase::ended* end = end_locked()) return end->last_alive;
    return std::get_if<task_phase::running>(&phase_)->last_alive;
}

std::optional<task_times> task_lifecycle::last() const noexcept {
    std::lock_guard lock(mutex_);
    if (const task_phase::ended* end = end_locked()) return end->values;
    return std::get_if<task_phase::running>(&phase_)->last;
}

bool task_lifecycle::reaped() const noexcept {
    std::lock_guard lock(mutex_);
    return std::holds_alternative<task_phase::reaped>(phase_);
}

}  // namespace proctimes::inline v1::detail
