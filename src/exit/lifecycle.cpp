// SPDX-License-Identifier: MIT
// The task state machine (exit/lifecycle.hpp): portable, driven by a backend's
// sampler.
#include "exit/lifecycle.hpp"

#include "exit/bounds.hpp"
#include "precision.hpp"

namespace proctimes::inline v1::detail {

using std::chrono::nanoseconds;

std::error_code task_lifecycle::gone_error() const noexcept {
    return make_error_code(facts_.is_thread ? errc::no_such_thread : errc::no_such_process);
}

void task_lifecycle::stamp_exit_locked(instant seen, nanoseconds cpu) noexcept {
    if (exit_) return;  // the first observer's stamp never changes
    exit_evidence e;
    e.creation = facts_.creation;
    e.creation_tick = facts_.creation_tick;
    e.observed = seen;
    e.last_alive = last_alive_;
    e.cpu = cpu;
    e.parallelism = facts_.is_thread ? 1u : facts_.parallelism;
    e.cpu_bounds_lifetime = facts_.cpu_bounds_lifetime;
    // A record with no elapsed time is a kernel that did not fill it.
    if (exit_record_ && exit_record_->elapsed_us != 0)
        e.recorded_elapsed = std::chrono::microseconds{static_cast<std::int64_t>(exit_record_->elapsed_us)};
    const detail::exit_instant x = bound_exit(e);
    exit_ = x.exit;
    exit_earliest_ = x.earliest;
    exit_from_ = x.source;
    exit_resolution_ = x.resolution;
}

void task_lifecycle::fill_exit_locked(task_times& t) const noexcept {
    t.exit = exit_;
    t.exit_earliest = exit_earliest_;
    t.precision.exit_source = exit_ ? exit_from_ : exit_source::none;
    t.precision.exit_resolution = exit_ ? exit_resolution_ : nanoseconds{0};
}

result<task_times> task_lifecycle::query(task_sampler& s) noexcept {
    const instant before = s.now();  // a sample that sees it alive proves it ended after this
    bool dead = false;
    auto r = s.sample(dead);
    // A zombie's exit record (if one was sent) came before the zombie showed.
    if (r && dead) s.deliver_exit_records();
    if (r) {
        std::lock_guard lock(mutex_);
        if (!dead) {
            if (state_ == task_state::running && (!last_alive_ || *last_alive_ < before)) last_alive_ = before;
        } else {
            if (state_ == task_state::running) state_ = task_state::exited;
            // A zombie ended no later than this sample: the first observer
            // stamps it (the monitor, if it watches, would a few µs later),
            // saying it was observed, never passing the sample off as the end.
            stamp_exit_locked(r->sampled_at, r->cpu());
        }
        if (state_ != task_state::running && last_ && last_->precision.source == cpu_source::wait_rusage) {
            task_times t = *last_;  // a reaped child's µs values beat the zombie's ticks
            fill_exit_locked(t);
            return t;
        }
        r->state = state_ == task_state::running ? task_state::running : task_state::exited;
        fill_exit_locked(*r);
        last_ = *r;
        return r;
    }
    if (r.error() != gone_error()) return r.error();

    bool record = false, await_final = false;
    {
        std::lock_guard lock(mutex_);
        if (state_ == task_state::running) {
            if (!watched_ && !exit_) return r.error();  // nothing recorded its end
            record = true;
        } else {
            // Released now: its exact final values are at most an RCU grace
            // period away (bounded wait, only while they are expected).
            await_final = exact_records_ && !final_applied_ && !final_awaited_;
            final_awaited_ = final_awaited_ || await_final;  // once: a lost end does not slow every query
        }
    }
    if (record) record_exit(s, s.now());
    if (await_final) s.await_exit_record();
    std::lock_guard lock(mutex_);
    apply_final_locked();
    if (!last_) return r.error();
    task_times t = *last_;
    fill_exit_locked(t);
    t.state = state_;
    return t;
}

void task_lifecycle::record_exit(task_sampler& s, instant seen) noexcept {
    bool dead = false;
    auto r = s.sample(dead);        // the zombie, if it is not reaped yet
    s.deliver_exit_records();       // its exit record, if one was sent: final values when gone, and the instant
    if (!r) s.await_exit_record();  // gone unread: a record it should have had, bounded
    std::lock_guard lock(mutex_);
    if (state_ != task_state::running) {  // already recorded
        stamp_exit_locked(seen, last_ ? last_->cpu() : nanoseconds{0});
        return;
    }
    if (r) {
        // Readable: a zombie (or a task in the last µs of its exit); these
        // are its final values.
        r->state = task_state::exited;
        last_ = *r;
        state_ = task_state::exited;
    } else if (exit_record_) {
        // Released before anyone could read it, but the kernel's exit record
        // has its final run time and split.
        const auto& e = *exit_record_;
        task_times t;
        t.creation = facts_.creation;
        const auto ku = split_.apply(nanoseconds{static_cast<std::int64_t>(e.run_ns)}, e.utime_us, e.stime_us);
        t.kernel = ku.kernel;
        t.user = ku.user;
        t.precision = precision_for(cpu_source::exit_record, facts_.creation_tick);
        t.state = task_state::exited;
        last_ = t;
        state_ = task_state::exited;
    } else {
        state_ = task_state::exited_partial;
        if (last_) last_->state = task_state::exited_partial;
    }
    stamp_exit_locked(seen, last_ ? last_->cpu() : nanoseconds{0});
    if (last_ && last_->precision.source == cpu_source::exit_record) last_->sampled_at = *exit_;
    apply_final_locked();
}

void task_lifecycle::apply_final_locked() noexcept {
    if (!final_ || final_applied_ || state_ == task_state::running) return;
    final_applied_ = true;
    const auto& f = *final_;
    if (f.exit) {
        exit_ = *f.exit;
        exit_earliest_ = *f.exit;
        exit_from_ = exit_source::bpf_exit;
        exit_resolution_ = nanoseconds{1};
    }
    if (f.status && !status_ && !leader_exited_early_) status_ = *f.status;
    if (last_ && last_->precision.source == cpu_source::wait_rusage) return;  // a reaped child's own values
    task_times t = last_ ? *last_ : task_times{};
    t.creation = facts_.creation;
    t.kernel = f.kernel;
    t.user = f.user;
    t.precision = precision_for(cpu_source::bpf_exit, facts_.creation_tick);
    t.state = task_state::exited;
    if (exit_) t.sampled_at = *exit_;
    last_ = t;
    state_ = task_state::exited;
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
    records_watched_ = records;
    exact_records_ = records && exact;
    record_losses_at_watch_ = losses;
}

bool task_lifecycle::end_watch() noexcept {
    std::lock_guard lock(mutex_);
    watched_ = false;
    const bool reap = auto_reap_ && !reaped_;
    if (reap) reaped_ = true;
    return reap;
}

reap_plan task_lifecycle::request_reap() noexcept {
    // Decided under the lock that end_watch also takes: either the task is
    // still watched and the monitor will see auto_reap when the exit comes,
    // or the monitor has already handled the exit (or never watched it) and
    // it must be watched again, to be reaped at once if it has already exited.
    std::lock_guard lock(mutex_);
    if (reaped_) return reap_plan::none;
    auto_reap_ = true;
    return watched_ ? reap_plan::on_exit : reap_plan::watch_again;
}

void task_lifecycle::offer_exit_record(const parse::taskstats_exit& e, bool usable) noexcept {
    std::lock_guard lock(mutex_);
    record_seen_ = true;
    // The first record for a watched id is its own task's: the task was alive
    // when it was registered, and its id cannot be reused before its own
    // record has been sent.
    if (usable && !exit_record_) exit_record_ = e;
}

bool task_lifecycle::record_expected(std::uint64_t losses) const noexcept {
    std::lock_guard lock(mutex_);
    return records_watched_ && !record_seen_ && !exit_record_ && !final_ && record_losses_at_watch_ == losses;
}

void task_lifecycle::offer_final_values(const final_values& f) noexcept {
    std::lock_guard lock(mutex_);
    record_seen_ = true;
    if (!final_) final_ = f;
    apply_final_locked();
}

bool task_lifecycle::awaits_final_values() const noexcept {
    std::lock_guard lock(mutex_);
    return exact_records_ && !final_;
}

void task_lifecycle::child_reaped(const exit_status& st) noexcept {
    std::lock_guard lock(mutex_);
    reaped_ = true;
    status_ = st;  // process::exit_status() answers it from now on
}

void task_lifecycle::adopt_wait_values(task_times& t) noexcept {
    std::lock_guard lock(mutex_);
    if (!t.exit) t.exit = exit_;
    t.state = task_state::exited;
    last_ = t;
    state_ = task_state::exited;
}

std::optional<exit_status> task_lifecycle::status() const noexcept {
    std::lock_guard lock(mutex_);
    return status_;
}

std::optional<instant> task_lifecycle::exit_instant() const noexcept {
    std::lock_guard lock(mutex_);
    return exit_;
}

task_state task_lifecycle::state() const noexcept {
    std::lock_guard lock(mutex_);
    return state_;
}

bool task_lifecycle::watched() const noexcept {
    std::lock_guard lock(mutex_);
    return watched_;
}

std::optional<instant> task_lifecycle::last_alive() const noexcept {
    std::lock_guard lock(mutex_);
    return last_alive_;
}

std::optional<task_times> task_lifecycle::last() const noexcept {
    std::lock_guard lock(mutex_);
    return last_;
}

}  // namespace proctimes::inline v1::detail
