// SPDX-License-Identifier: MIT
// A hold between clone and exec for child::spawn: the child waits on a pipe
// until the parent has done what it must do to it before it runs the command
// (run_tree attaches its tracer there, so that nothing the command starts is
// missed), then execs as child::spawn always does.
#pragma once

#include <sys/types.h>

#include "proctimes/spawn.hpp"

namespace proctimes::inline v1::detail {

struct spawn_gate {
    /// Called in the parent, on the spawning thread, right after the clone,
    /// while the child waits before its exec. The child is released when it returns.
    void (*after_clone)(pid_t pid, void* context) noexcept = nullptr;
    void* context = nullptr;

    /// child::spawn(options) with this hold.
    static result<child> spawn(const spawn_options& options, spawn_gate& gate) noexcept {
        return child::spawn_impl(options, &gate);
    }
};

/// Reaps the child behind `pidfd` (closing it) on a thread of its own once it
/// ends, without blocking the caller: for a child nobody will wait for
/// (child::release, the orphans of run_tree). When no thread can be started
/// it is reaped at once if it has ended; else it stays a zombie until this
/// process waits for any child, and stderr says so once per process.
void reap_when_ended(int pidfd, pid_t pid) noexcept;

}  // namespace proctimes::inline v1::detail
