// SPDX-License-Identifier: MIT
// The windows backend's part of the exit settings and the exit stream. The
// switches themselves are portable (src/exit/settings.cpp); there is no exit
// monitor to switch here: an open handle keeps an ended process or thread
// readable, with its exit time, so nothing is lost while nobody watches.
// Exit records (taskstats, eBPF) and the system-wide exit stream are
// Linux's: not_supported. Settings are read from the process environment.
#include <cstdlib>

#include "backend/backend.hpp"
#include "platform_exit_listener.hpp"

namespace proctimes::inline v1::detail {

std::error_code exit_records_backend_status() noexcept { return make_error_code(errc::not_supported); }
bool exit_records_backend_uses_bpf() noexcept { return false; }

result<std::unique_ptr<exit_stream::impl>> open_exit_stream(exit_stream_source) noexcept {
    return make_error_code(errc::not_supported);
}

// Windows has no set-user-ID programs: a secure lookup is the plain one.
const char* platform_env_lookup(const char* name, bool /*secure*/) noexcept { return std::getenv(name); }

}  // namespace proctimes::inline v1::detail
