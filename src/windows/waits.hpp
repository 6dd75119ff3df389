// SPDX-License-Identifier: MIT
// The windows backend's wait helpers, shared by src/windows/waits.cpp and
// src/windows/spawn.cpp.
#pragma once

#include <chrono>
#include <optional>

#include "windows/task.hpp"

namespace proctimes::inline v1::detail::win {

/// The task's exit FILETIME as an instant (now, if it has none yet).
instant exit_time(task_core& c) noexcept;
/// Records the end of an ended task, stamped with its exit time.
void stamp_end(task_core& c) noexcept;
/// The deadline `timeout` after now; empty for no timeout (or one too long to matter).
std::optional<std::chrono::steady_clock::time_point> deadline_of(
    std::optional<std::chrono::nanoseconds> timeout) noexcept;
/// Milliseconds to the deadline, rounded up (INFINITE without one).
DWORD wait_ms(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept;
/// Waits for the task's handle: true once ended (and stamped), false on timeout.
result<bool> wait_one(task_core& c, std::optional<std::chrono::nanoseconds> timeout) noexcept;

}  // namespace proctimes::inline v1::detail::win
