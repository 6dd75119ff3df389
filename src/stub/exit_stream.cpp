// SPDX-License-Identifier: MIT
// The stub backend's exit stream and system CPU times (proctimes/ledger.hpp):
// there is no listener for task ends and no system-wide CPU counter.
#include "platform_exit_listener.hpp"

namespace proctimes::inline v1 {

namespace detail {
result<std::unique_ptr<exit_stream::impl>> open_exit_stream(exit_stream_source) noexcept {
    return make_error_code(errc::not_supported);
}
}  // namespace detail

result<system_cpu_times> read_system_cpu_times(const std::string&) noexcept {
    return make_error_code(errc::not_supported);
}

}  // namespace proctimes::inline v1
