// SPDX-License-Identifier: MIT
// The stub backend's machine status (proctimes/machine.hpp): no load
// averages, memory totals or per-CPU counters are read here.
#include "backend/backend.hpp"

namespace proctimes::inline v1 {

result<machine_status> read_machine_status(machine_part, const std::string&) noexcept {
    return make_error_code(errc::not_supported);
}

}  // namespace proctimes::inline v1
