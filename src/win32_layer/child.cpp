// SPDX-License-Identifier: MIT
#include "win32_layer/child.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <map>

#include <unistd.h>

#include "backend/backend.hpp"
#include "proctimes/error.hpp"
#include "proctimes/exit.hpp"

namespace proctimes::inline v1::win32 {

using std::chrono::nanoseconds;

namespace {

std::mutex registry_mutex;
std::map<pid_t, std::weak_ptr<created_process>>& registry() {
    static auto* m = new std::map<pid_t, std::weak_ptr<created_process>>;  // never destroyed: used by late handles
    return *m;
}

// Kernel and user through a guard that keeps both from ever decreasing.
template <class T>
T guarded(T t, detail::monotonic_split& guard) noexcept {
    const auto ku =
        guard.apply(t.cpu(), static_cast<std::uint64_t>(t.user.count()), static_cast<std::uint64_t>(t.kernel.count()));
    t.kernel = ku.kernel;
    t.user = ku.user;
    return t;
}

}  // namespace

result<std::shared_ptr<created_process>> created_process::create(const spawn_options& options) noexcept {
    std::shared_ptr<created_process> p;
    try {
        p = std::shared_ptr<created_process>(new created_process);
    } catch (...) {
        return std::make_error_code(std::errc::not_enough_memory);
    }
    auto c = child::spawn(options);
    if (!c) return c.error();
    const pid_t pid = c->id();
    // The program runs from here on: CreateProcess succeeds whatever cannot
    // be opened for it now (no /proc, no descriptor left), and the calls that
    // need what is missing fail with the reason (GetProcessTimes,
    // GetThreadTimes), while waits and GetExitCodeProcess rest on the pidfd.
    if (auto ec = c->handle_error()) {
        p->main_error_ = ec;
    } else if (auto t = thread::open(pid, pid)) {
        // Opened while it cannot have been reaped (only we reap it): the
        // thread whose tid is the pid is its main thread.
        p->main_ = std::move(*t);
    } else {
        p->main_error_ = t.error();
    }
    p->child_ = std::move(*c);
    p->pid_ = pid;
    p->owner_ = ::getpid();
    if (p->child_.handle().valid()) p->creation_ = p->child_.handle().creation();
    try {
        std::lock_guard lock(registry_mutex);
        registry()[pid] = p;
    } catch (...) {
        return std::make_error_code(std::errc::not_enough_memory);
    }
    return p;
}

std::shared_ptr<created_process> created_process::find(pid_t pid) noexcept {
    std::lock_guard lock(registry_mutex);
    auto& reg = registry();
    const auto it = reg.find(pid);
    if (it == reg.end()) return nullptr;
    auto p = it->second.lock();
    if (p && p->owner_ != ::getpid()) return nullptr;  // inherited through fork: not our child
    return p;
}

created_process::~created_process() {
    std::lock_guard lock(registry_mutex);
    auto& reg = registry();
    if (auto it = reg.find(pid_); it != reg.end() && it->second.expired()) reg.erase(it);
}

result<bool> created_process::wait_exit(std::optional<nanoseconds> timeout) noexcept {
    // Without a handle (child::handle_error) the platform waits on the
    // child's own reference to it.
    return detail::wait_child_exit(child_, timeout);
}

bool created_process::reaped() const noexcept {
    std::lock_guard lock(mutex_);
    return exit_.has_value();
}

result<void> created_process::finish_locked() noexcept {
    if (exit_) return {};
    // The process first, so that if no exit instant was stamped yet, the
    // process's is stamped no later than its main thread's.
    (void)child_.handle().times();
    // The main thread can only be read until the reaping below.
    if (auto t = main_.times()) main_final_ = *t;
    auto e = child_.wait();
    if (!e && e.error() == std::errc::no_such_process) {
        // Reaped elsewhere (SIGCHLD ignored: the kernel reaps it) with nothing
        // recorded: it has exited, its status and times are unknown.
        exit_.emplace();
        exit_->times_error = e.error();
        return {};
    }
    if (!e) return e.error();
    exit_ = *e;
    return {};
}

result<bool> created_process::finish_if_exited_locked() noexcept {
    if (exit_) return true;
    auto r = wait_exit(nanoseconds{0});
    if (!r) return r.error();
    if (!*r) return false;
    if (auto f = finish_locked(); !f) return f.error();
    return true;
}

result<bool> created_process::wait(std::optional<nanoseconds> timeout) noexcept {
    {
        std::lock_guard lock(mutex_);
        if (exit_) return true;
    }
    // Not under the lock: other handles keep answering while this one waits.
    auto r = wait_exit(timeout);
    if (!r) return r.error();
    if (!*r) return false;
    std::lock_guard lock(mutex_);
    if (auto f = finish_locked(); !f) return f.error();
    return true;
}

result<bool> created_process::wait_main_thread(std::optional<nanoseconds> timeout) noexcept {
    // main_ is set once at creation and never reassigned: no lock needed to wait on it.
    if (main_.valid()) {
        auto r = wait_for_exit(main_, timeout);
        // Not a thread the platform can wait on (Linux < 6.9): the process.
        if (r || r.error() != proctimes::errc::not_supported) return r;
    }
    return wait(timeout);
}

result<process_times> created_process::times() noexcept {
    std::lock_guard lock(mutex_);
    if (auto f = finish_if_exited_locked(); !f) return f.error();
    // Without its own values, the wait rusage would count its waited-for
    // descendants as its own: the times are refused with the reason instead.
    if (exit_ && exit_->times_error) return exit_->times_error;
    if (auto ec = child_.handle_error()) return ec;
    auto t = child_.handle().times();
    if (!t) return t.error();
    return guarded(*t, process_guard_);
}

result<thread_times> created_process::main_thread_times() noexcept {
    std::lock_guard lock(mutex_);
    if (auto f = finish_if_exited_locked(); !f) return f.error();
    if (!main_.valid()) return main_error_;
    auto t = main_.times();
    if (!t) {
        // Reaped, and the thread was not watched (no thread pidfds before
        // Linux 6.9): its values read from the zombie just before.
        if (!exit_ || !main_final_) return t.error();
        t = *main_final_;
    }
    if (exit_) {
        if (t->state == task_state::running) t->state = task_state::exited;
        const auto& process_exit = exit_->times.exit;
        if (process_exit && (!t->exit || *t->exit > *process_exit)) {
            // The thread ended no later than its process: the process's
            // instant, with what it promises.
            t->exit = process_exit;
            t->exit_earliest = exit_->times.exit_earliest;
            t->precision.exit_source = exit_->times.precision.exit_source;
            t->precision.exit_resolution = exit_->times.precision.exit_resolution;
        }
    }
    return guarded(*t, thread_guard_);
}

result<std::optional<exit_status>> created_process::status() noexcept {
    std::lock_guard lock(mutex_);
    auto f = finish_if_exited_locked();
    if (!f) return f.error();
    if (!*f) return std::optional<exit_status>();
    // The reaping wait's status, or what the zombie showed if something else
    // reaped it first; unknown when nobody saw it (SIGCHLD ignored).
    if (!exit_->status) return make_error_code(errc::not_supported);
    // Killed by TerminateProcess: the code it was given, as Windows reports.
    if (terminate_code_ && exit_->status->signal == SIGKILL)
        return std::optional<exit_status>(exit_status{*terminate_code_, 0});
    return std::optional<exit_status>(*exit_->status);
}

result<bool> created_process::terminate(int code) noexcept {
    std::lock_guard lock(mutex_);
    auto f = finish_if_exited_locked();
    if (!f) return f.error();
    if (*f) return false;  // already ended (and reaped)
    // A zombie takes the signal without effect: its own status stands. The
    // code is recorded under the lock status() takes, before anyone can read
    // the status the signal causes.
    if (const auto ec = detail::terminate_child(child_))
        return ec == std::errc::no_such_process ? result<bool>(false) : result<bool>(ec);
    if (!terminate_code_) terminate_code_ = code;
    return true;
}

}  // namespace proctimes::inline v1::win32
