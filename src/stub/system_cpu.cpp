// SPDX-License-Identifier: MIT
// The stub backend's system CPU times (proctimes/ledger.hpp): no system-wide
// CPU counter here.
#include "backend/backend.hpp"

namespace proctimes::inline v1 {

result<system_cpu_times> read_system_cpu_times(const std::string&) noexcept {
    return make_error_code(errc::not_supported);
}

}  // namespace proctimes::inline v1
