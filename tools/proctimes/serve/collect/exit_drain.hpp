// SPDX-License-Identifier: MIT
// The exit records between two collections, held until a collection takes
// the records its snapshot closes: read by a background thread that keeps the
// taskstats socket drained, or, from the eBPF stream (which holds them itself),
// by the collection.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "proctimes/ledger.hpp"

namespace proctimes::cli::serve {

class exit_drain {
public:
    /// Opens the exit stream (`from`) and starts draining it; else keeps why
    /// not (`why()`), and every take is empty.
    explicit exit_drain(exit_stream_source from);
    /// No records: `why` says why (e.g. "off").
    explicit exit_drain(std::string why) : why_(std::move(why)) {}
    exit_drain(const exit_drain&) = delete;
    exit_drain& operator=(const exit_drain&) = delete;
    ~exit_drain();

    /// Whether records are read.
    [[nodiscard]] bool open() const noexcept { return stream_.has_value(); }
    /// The stream's source (bpf or taskstats) when open.
    [[nodiscard]] std::optional<exit_stream_source> source() const noexcept {
        return stream_ ? stream_->source() : std::nullopt;
    }
    /// Why no records are read (when not open).
    [[nodiscard]] const std::string& why() const noexcept { return why_; }
    /// Hands over the records received up to `since_boot` (a snapshot's
    /// CLOCK_BOOTTIME): the interval that snapshot closes.
    std::vector<ended_task> take_until(std::chrono::nanoseconds since_boot);
    /// Exit records lost: with the eBPF stream each end lost (exit_stream::lost()),
    /// with taskstats the times the kernel dropped records (socket overflow);
    /// and each record the buffer here had no room for.
    [[nodiscard]] std::uint64_t lost() const;

private:
    void loop();
    // Moves what the stream holds into pending_ (`got`: scratch); mu_ held.
    void pull(std::vector<ended_task>& got);

    std::optional<exit_stream> stream_;
    std::string why_;
    mutable std::mutex mu_;
    std::vector<ended_task> pending_;
    std::uint64_t lost_ = 0, dropped_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace proctimes::cli::serve
