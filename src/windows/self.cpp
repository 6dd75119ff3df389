// SPDX-License-Identifier: MIT
// The windows backend's calling process and thread (backend/backend.hpp): their ids
// and GetProcessTimes/GetThreadTimes on the pseudo-handles.
#include "windows/task.hpp"

namespace proctimes::inline v1::detail {

namespace {

result<task_times> times_of(HANDLE h, bool thread, bool with_creation) noexcept {
    FILETIME cr{}, ex{}, k{}, u{};
    const BOOL ok = thread ? ::GetThreadTimes(h, &cr, &ex, &k, &u) : ::GetProcessTimes(h, &cr, &ex, &k, &u);
    if (!ok) return win::last_error();
    task_times t;
    if (with_creation) t.creation = win::to_instant(cr);
    t.kernel = win::duration(k);
    t.user = win::duration(u);
    t.precision = win::os_precision();
    t.state = task_state::running;
    t.sampled_at = realtime_now();
    return t;
}

}  // namespace

pid_t self_process_id() noexcept { return static_cast<pid_t>(::GetCurrentProcessId()); }
pid_t self_thread_id() noexcept { return static_cast<pid_t>(::GetCurrentThreadId()); }

result<process_times> self_process_times() noexcept { return times_of(::GetCurrentProcess(), false, true); }
result<thread_times> self_thread_times(bool with_creation) noexcept {
    return times_of(::GetCurrentThread(), true, with_creation);
}

}  // namespace proctimes::inline v1::detail
