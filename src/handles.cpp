// SPDX-License-Identifier: MIT
// proctimes::process and proctimes::thread: portable handles over a backend's
// task cores (backend/backend.hpp), and the lifecycle query that drives the
// backend's sampler.
#include "proctimes/process.hpp"

#include <new>

#include "backend/backend.hpp"
#include "fd.hpp"

namespace proctimes::inline v1 {

namespace detail {
namespace {

// The state machine's view of the backend, for one task.
class core_sampler final : public task_sampler {
public:
    explicit core_sampler(task_core& c) noexcept : c_(c) {}
    result<task_times> sample(bool& dead) noexcept override { return detail::sample(c_, dead); }
    void deliver_exit_records() noexcept override { platform_exit_backend().deliver(); }
    void await_exit_record() noexcept override { platform_exit_backend().await(c_); }
    instant now() noexcept override { return realtime_now(); }

private:
    task_core& c_;
};

std::error_code check_id(pid_t id) noexcept {
    if (id <= 0 || id > max_task_id()) return make_error_code(errc::invalid_argument);
    return {};
}

}  // namespace

result<task_times> query(task_core& c) noexcept {
    core_sampler s(c);
    return core_lifecycle(c).query(s);
}

void record_exit(task_core& c, instant seen) noexcept {
    core_sampler s(c);
    core_lifecycle(c).record_exit(s, seen);
}

}  // namespace detail

// ---- process -----------------------------------------------------------------

struct process::impl {
    detail::task_core_ptr core;
    ~impl() {
        if (core) detail::platform_exit_backend().unwatch(core, false);
    }
};

process::process() noexcept = default;
process::process(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
process::process(process&&) noexcept = default;
process& process::operator=(process&&) noexcept = default;
process::~process() = default;

result<process> process::open(pid_t pid) noexcept {
    if (auto ec = detail::check_id(pid)) return ec;
    return detail::handle_access::make_process(detail::open_process_core(pid));
}

result<process> process::open_self() noexcept { return open(detail::self_process_id()); }

result<process_times> process::times() const noexcept {
    if (!impl_) return errc::invalid_handle;
    return detail::query(*impl_->core);
}

result<std::optional<proctimes::exit_status>> process::exit_status() const noexcept {
    if (!impl_) return errc::invalid_handle;
    detail::core_sampler s(*impl_->core);
    return detail::core_lifecycle(*impl_->core).exit_status_now(s);
}

result<std::string> process::name() const {
    if (!impl_) return errc::invalid_handle;
    return detail::core_name(*impl_->core);
}

result<pid_t> process::parent_id() const noexcept {
    if (!impl_) return errc::invalid_handle;
    return detail::core_parent_id(*impl_->core);
}

result<std::vector<pid_t>> process::thread_ids() const {
    if (!impl_) return errc::invalid_handle;
    return detail::core_thread_ids(*impl_->core);
}

pid_t process::id() const noexcept { return impl_ ? detail::core_id(*impl_->core) : 0; }
const process_identity& process::identity() const noexcept {
    static const process_identity none{};
    return impl_ ? detail::core_identity(*impl_->core) : none;
}
instant process::creation() const noexcept { return impl_ ? detail::core_creation(*impl_->core) : instant{}; }

// ---- thread ------------------------------------------------------------------

struct thread::impl {
    detail::task_core_ptr core;
    ~impl() {
        if (core) detail::platform_exit_backend().unwatch(core, false);
    }
};

thread::thread() noexcept = default;
thread::thread(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
thread::thread(thread&&) noexcept = default;
thread& thread::operator=(thread&&) noexcept = default;
thread::~thread() = default;

result<thread> thread::open(pid_t tid) noexcept {
    if (auto ec = detail::check_id(tid)) return ec;
    return detail::handle_access::make_thread(detail::open_thread_core(tid));
}

result<thread> thread::open(pid_t pid, pid_t tid) noexcept {
    if (auto ec = detail::check_id(pid)) return ec;
    if (auto ec = detail::check_id(tid)) return ec;
    return detail::handle_access::make_thread(detail::open_thread_core(pid, tid));
}

result<thread> thread::open_self() noexcept { return open(detail::self_process_id(), detail::self_thread_id()); }

result<thread_times> thread::times() const noexcept {
    if (!impl_) return errc::invalid_handle;
    return detail::query(*impl_->core);
}

result<std::string> thread::name() const {
    if (!impl_) return errc::invalid_handle;
    return detail::core_name(*impl_->core);
}

pid_t thread::id() const noexcept { return impl_ ? detail::core_id(*impl_->core) : 0; }
pid_t thread::process_id() const noexcept { return impl_ ? detail::core_process_id(*impl_->core) : 0; }
const task_identity& thread::identity() const noexcept {
    static const task_identity none{};
    return impl_ ? detail::core_identity(*impl_->core) : none;
}
instant thread::creation() const noexcept { return impl_ ? detail::core_creation(*impl_->core) : instant{}; }

// ---- the calling process and thread ---------------------------------------------

namespace this_process {
pid_t id() noexcept { return detail::self_process_id(); }
result<process_times> times() noexcept { return detail::self_process_times(); }
}  // namespace this_process

namespace this_thread {
pid_t id() noexcept { return detail::self_thread_id(); }
result<thread_times> times() noexcept { return detail::self_thread_times(); }
}  // namespace this_thread

// ---- internal access ---------------------------------------------------------------

namespace detail {

task_core* handle_access::core(const process& p) noexcept { return p.impl_ ? p.impl_->core.get() : nullptr; }

bool core_is_self(const process& p) noexcept {
    const task_core* c = handle_access::core(p);
    return c && core_is_self(*c);
}
bool core_is_self(const thread& t) noexcept {
    const task_core* c = handle_access::core(t);
    return c && core_is_self(*c);
}
task_core* handle_access::core(const thread& t) noexcept { return t.impl_ ? t.impl_->core.get() : nullptr; }

result<process> handle_access::make_process(result<task_core_ptr> core) noexcept {
    if (!core) return core.error();
    std::unique_ptr<process::impl> p(new (std::nothrow) process::impl);
    if (!p) return errno_code(ENOMEM);
    p->core = std::move(*core);
    return process(std::move(p));
}

result<thread> handle_access::make_thread(result<task_core_ptr> core) noexcept {
    if (!core) return core.error();
    std::unique_ptr<thread::impl> p(new (std::nothrow) thread::impl);
    if (!p) return errno_code(ENOMEM);
    p->core = std::move(*core);
    return thread(std::move(p));
}

void handle_access::release_child(process& p) noexcept {
    if (!p.impl_) return;
    platform_exit_backend().unwatch(p.impl_->core, true);
    p.impl_->core.reset();  // ~impl must not unwatch it again
    p.impl_.reset();
}

}  // namespace detail

}  // namespace proctimes::inline v1
