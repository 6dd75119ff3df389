// SPDX-License-Identifier: MIT
// The Linux listener for the end of every task on the system (listener.cpp),
// which the backend's exit_backend::open_stream (backend/backend.hpp;
// monitor.cpp) opens.
#pragma once

#include <memory>

#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

/// Opens the listener that `from` names: the eBPF exit stream (bpf, or
/// automatic where it can be used), else taskstats. Errors as
/// exit_stream::open documents.
result<std::unique_ptr<exit_stream::impl>> open_exit_listener(exit_stream_source from) noexcept;

}  // namespace proctimes::inline v1::detail
