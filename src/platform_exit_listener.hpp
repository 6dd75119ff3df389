// SPDX-License-Identifier: MIT
// The platform seam's part for exit_stream (proctimes/ledger.hpp): a backend
// supplies a listener for the end of every task on the system, as an
// exit_stream::impl, and src/exit/public_stream.cpp makes the public class of it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "proctimes/export.h"
#include "proctimes/ledger.hpp"
#include "proctimes/result.hpp"

namespace proctimes::inline v1 {

/// One open listener. Used by one thread at a time (the public class's rule).
/// Hidden like every implementation type (PROCTIMES_LOCAL): a shared
/// libproctimes exports none of it.
struct PROCTIMES_LOCAL exit_stream::impl {
    impl() = default;
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;
    impl(impl&&) = delete;
    impl& operator=(impl&&) = delete;
    virtual ~impl() = default;

    /// exit_stream::read: appends what waits, without blocking; false when
    /// records were lost since the previous read.
    virtual result<bool> read(std::vector<ended_task>& out) noexcept = 0;
    /// exit_stream::wait: true once a record waits, false on timeout or EINTR.
    virtual result<bool> wait(std::chrono::milliseconds timeout) noexcept = 0;
    /// exit_stream::native_handle: a descriptor readable while records wait.
    [[nodiscard]] virtual int native_handle() const noexcept = 0;
    /// exit_stream::source: the source's name ("bpf", "taskstats").
    [[nodiscard]] virtual std::string_view source() const noexcept = 0;
    /// exit_stream::lost: exact count of lost records, where the source has one.
    [[nodiscard]] virtual std::optional<std::uint64_t> lost() const noexcept = 0;
    /// exit_stream::settle: true once every released task's end of the
    /// window can be read (or was counted lost); false at the deadline. A
    /// source that sends each record as its task exits has nothing to wait for.
    [[nodiscard]] virtual result<bool> settle(std::chrono::nanoseconds /*from*/, std::chrono::nanoseconds /*to*/,
                                              std::chrono::milliseconds /*timeout*/) const noexcept {
        return true;
    }
};

namespace detail {

/// Opens the listener `from` names (exit_stream::open's contract and errors);
/// errc::not_supported where the backend has none.
result<std::unique_ptr<exit_stream::impl>> open_exit_stream(exit_stream_source from) noexcept;

}  // namespace detail
}  // namespace proctimes::inline v1
