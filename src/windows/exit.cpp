// SPDX-License-Identifier: MIT
// The windows backend's part of the exit settings and the exit stream. The
// switches themselves are portable (src/exit/settings.cpp); there is no exit
// monitor to switch here: an open handle keeps an ended process or thread
// readable, with its exit time, so nothing is lost while nobody watches.
// Exit records (taskstats, eBPF) and the system-wide exit stream are
// Linux's: not_supported.
#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

result<exit_stream_source> exit_records_backend() noexcept { return make_error_code(errc::not_supported); }

result<std::unique_ptr<exit_stream::impl>> open_exit_stream(exit_stream_source) noexcept {
    return make_error_code(errc::not_supported);
}

}  // namespace proctimes::inline v1::detail
