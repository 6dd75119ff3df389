// SPDX-License-Identifier: MIT
// The hook for handles (docs/BPF.md): the exit stream kept as a bounded table
// of recent ends, looked up by task identity. Where the exit monitor today
// asks the taskstats exit records (src/linux/exit/taskstats.hpp) for the final
// values of a task it could not read after its end, it can ask find() here
// instead and get exact values (1 ns CPU total, 1 ns exit instant) without
// CAP_NET_ADMIN's socket.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "linux/bpf/exit_ring_reader.hpp"

namespace proctimes::inline v1::detail {

class bpf_recent_exits {
public:
    /// Starts the exit stream. Errors as bpf_exit_stream::start().
    static result<std::unique_ptr<bpf_recent_exits>> start(std::size_t capacity = 65536) noexcept;

    /// The end of the task (tid, start_ticks: /proc's field 22) if the stream
    /// delivered it and it is among the last `capacity` ends. Thread-safe.
    [[nodiscard]] std::optional<bpf_task_end> find(pid_t tid, std::uint64_t start_ticks) const;

    /// Whether the end of the task (tid, start_ticks) was lost and no end of
    /// it was delivered: its final values will not come. Thread-safe.
    [[nodiscard]] bool lost(pid_t tid, std::uint64_t start_ticks) const;

    /// Ends lost system-wide (bpf_exit_stream::dropped()).
    [[nodiscard]] std::uint64_t dropped() const noexcept { return stream_->dropped(); }
    /// Of those, the ends whose task is not known (bpf_exit_stream::
    /// unnamed_lost()): when it grew, a miss of find() may be a lost end
    /// rather than one not yet delivered.
    [[nodiscard]] std::uint64_t unnamed_lost() const noexcept { return stream_->unnamed_lost(); }

private:
    bpf_recent_exits() = default;
    void add(const bpf_task_end& e);
    void add_lost(const bpf_lost_task& t);

    mutable std::mutex mutex_;
    std::size_t capacity_ = 0;
    std::unordered_multimap<pid_t, bpf_task_end> by_tid_;
    std::deque<std::pair<pid_t, std::uint64_t>> order_;  // oldest first: (tid, start_ticks)
    // Identities of lost ends (tid, start_ticks), the last `capacity` of them.
    std::unordered_multimap<pid_t, std::uint64_t> lost_;
    std::deque<std::pair<pid_t, std::uint64_t>> lost_order_;
    std::unique_ptr<bpf_exit_stream> stream_;
};

}  // namespace proctimes::inline v1::detail
