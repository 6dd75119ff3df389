// SPDX-License-Identifier: MIT
// tools/proctimes/run/thread_tracker.hpp — run --threads: polls the command's
// thread list, opens a handle for every new thread and samples every open one
// (so that a thread's last sample is at most one poll old when it ends).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "output/output.hpp"
#include "proctimes/process.hpp"

namespace proctimes::cli {

class thread_tracker {
public:
    explicit thread_tracker(const process& p) : proc_(p) {}

    void poll();

    /// Final records: the handle's answer now (exit instant and last sample),
    /// or the tracker's own last sample.
    std::vector<task_record> records(pid_t pid);

    /// Threads the poll saw but could not open for a reason other than their
    /// end (a thread that ended first is a missed thread, not a failure): the
    /// descriptor limit, an access check. Each kept until an open succeeds.
    [[nodiscard]] const std::map<pid_t, std::error_code>& open_failures() const noexcept { return open_failures_; }
    /// The first failure to list the threads, other than the process's end.
    [[nodiscard]] std::optional<std::error_code> list_failure() const noexcept { return list_failure_; }

private:
    struct tracked_thread {
        thread handle;
        std::string name;
        std::optional<thread_times> last;  // the newest successful sample
    };
    const process& proc_;
    std::map<pid_t, tracked_thread> threads_;
    std::map<pid_t, std::error_code> open_failures_;
    std::optional<std::error_code> list_failure_;
    std::chrono::steady_clock::time_point last_names_{};
};

/// Whether `ec` says the task has ended (no_such_process, no_such_thread,
/// ESRCH): the one failure that is not an error when reading a live list.
bool ended(std::error_code ec) noexcept;

}  // namespace proctimes::cli
