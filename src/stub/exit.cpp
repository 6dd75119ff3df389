// SPDX-License-Identifier: MIT
// The stub backend's exit records (src/backend/backend.hpp: exit_backend):
// it watches no task's exit, has no exit records and no listener for task
// ends (no_exit_records).
#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

exit_backend& platform_exit_backend() noexcept { return no_exit_records::instance(); }

}  // namespace proctimes::inline v1::detail
