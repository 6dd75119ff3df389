// SPDX-License-Identifier: MIT
// The stub backend's exit records and exit stream (src/backend/backend.hpp):
// there is no listener for task ends.
#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

result<exit_stream_source> exit_records_backend() noexcept { return make_error_code(errc::not_supported); }

result<std::unique_ptr<exit_stream::impl>> open_exit_stream(exit_stream_source) noexcept {
    return make_error_code(errc::not_supported);
}

}  // namespace proctimes::inline v1::detail
