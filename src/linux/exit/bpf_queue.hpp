// SPDX-License-Identifier: MIT
// The public exit_stream's eBPF half (proctimes/ledger.hpp): the internal
// bpf_exit_stream's records turned into ended_task values and queued for
// read(), with an eventfd that says the queue is not empty.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "fd.hpp"
#include "linux/bpf/exit_ring_reader.hpp"
#include "proctimes/ledger.hpp"

namespace proctimes::inline v1::detail {

class bpf_exit_queue {
public:
    /// Records the queue holds at most; more are counted lost.
    static constexpr std::size_t capacity = 1u << 20;

    /// Loads the programs and starts the stream (`on_read`: records taken by
    /// drain(), bpf_exit_stream::start's `on_read`). Errors as
    /// bpf_exit_stream::start(), and the eventfd's errno.
    static result<std::unique_ptr<bpf_exit_queue>> open(bool on_read = false) noexcept;

    /// Readable while records wait (non-blocking eventfd).
    [[nodiscard]] int fd() const noexcept { return efd_.get(); }
    /// Moves every queued record to `out`. Returns false when ends were lost
    /// since the previous drain. ENOMEM leaves the queue as it was.
    result<bool> drain(std::vector<ended_task>& out) noexcept;
    /// Ends lost since open(), exactly.
    [[nodiscard]] std::uint64_t lost() const noexcept;
    /// bpf_exit_stream::settle: once true, every end of the window that was
    /// released is in the queue (or counted lost).
    [[nodiscard]] bool settle(std::chrono::nanoseconds from, std::chrono::nanoseconds to,
                              std::chrono::steady_clock::time_point deadline) const {
        return stream_->settle(from, to, deadline);
    }

private:
    bpf_exit_queue() = default;
    void add(const bpf_task_end& e) noexcept;

    mutable std::mutex mutex_;
    std::vector<ended_task> queue_;
    std::uint64_t overflow_ = 0;   // records the queue had no room for
    std::uint64_t lost_seen_ = 0;  // lost() at the previous drain
    unique_fd efd_;
    std::unique_ptr<bpf_exit_stream> stream_;  // last: stopped first
};

}  // namespace proctimes::inline v1::detail
