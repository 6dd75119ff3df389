// SPDX-License-Identifier: MIT
// The stub backend's tasks (backend/backend.hpp): a platform without a backend
// opens nothing, and says so with errc::not_supported. No core is ever
// created, so the hooks that take one are unreachable; they still answer
// as a backend must.
#include <climits>

#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

struct task_core {
    task_identity identity;
    task_lifecycle life;
};

namespace {
std::error_code unsupported() noexcept { return make_error_code(errc::not_supported); }
}  // namespace

result<task_core_ptr> open_process_core(pid_t) noexcept { return unsupported(); }
result<task_core_ptr> open_thread_core(pid_t) noexcept { return unsupported(); }
result<task_core_ptr> open_thread_core(pid_t, pid_t) noexcept { return unsupported(); }
// Any id a pid_t can hold: the open itself answers not_supported.
pid_t max_task_id() noexcept { return static_cast<pid_t>(INT_MAX); }

pid_t core_id(const task_core&) noexcept { return 0; }
pid_t core_process_id(const task_core&) noexcept { return 0; }
const task_identity& core_identity(const task_core& c) noexcept { return c.identity; }
instant core_creation(const task_core&) noexcept { return instant{}; }
native_handle core_native_handle(const task_core&) noexcept { return no_native_handle; }
bool core_is_self(const task_core&) noexcept { return false; }
task_lifecycle& core_lifecycle(task_core& c) noexcept { return c.life; }

result<task_times> sample(task_core&, bool& dead) noexcept {
    dead = false;
    return unsupported();
}
result<std::string> core_name(const task_core&) { return unsupported(); }
result<pid_t> core_parent_id(const task_core&) noexcept { return unsupported(); }
result<std::vector<pid_t>> core_thread_ids(const task_core&) { return unsupported(); }

// The exit watch, exit records and the exit stream: src/stub/exit.cpp.

}  // namespace proctimes::inline v1::detail
