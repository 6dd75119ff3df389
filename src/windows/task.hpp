// SPDX-License-Identifier: MIT
// The windows backend's task core (backend/backend.hpp): the HANDLE a process or
// thread handle keeps, and the state it shares with waiters. A Windows
// process or thread object stays readable for as long as a handle to it is
// open, ended or not: GetProcessTimes on it gives the final values and the
// exit FILETIME, so there is no exit monitor to run and nothing to reap.
#pragma once

#include "backend/backend.hpp"
#include "windows/win.hpp"

namespace proctimes::inline v1::detail {

struct task_core {
    bool is_thread = false;
    pid_t id = 0;   // pid, or tid
    pid_t pid = 0;  // the process (== id for a process)
    win::unique_handle handle;
    /// A spawned child's job object (its descendants' accounting), else empty.
    win::unique_handle job;
    task_identity identity;
    instant creation{};
    task_lifecycle life;
};

namespace win {
/// Makes the core of a process (or thread) from a handle that has at least
/// PROCESS_QUERY_LIMITED_INFORMATION (THREAD_QUERY_LIMITED_INFORMATION) and
/// SYNCHRONIZE; takes ownership of it. Errors: what reading its creation
/// time answers.
result<task_core_ptr> make_core(unique_handle h, bool is_thread, pid_t id, pid_t pid) noexcept;
/// The identity of a task created at `creation` (FILETIME ticks): the boot,
/// the id, and as its start ticks the creation in 100 ns units since the
/// Unix epoch (clock_ticks_per_second is 10^7 on Windows; src/windows/boot.cpp),
/// which every process computes the same.
task_identity identity_of(pid_t id, std::uint64_t creation) noexcept;
}  // namespace win

}  // namespace proctimes::inline v1::detail
