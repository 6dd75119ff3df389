// SPDX-License-Identifier: MIT
// The windows backend's machine status (proctimes/machine.hpp): no load
// averages, memory totals or per-CPU counters are read here.
#include "proctimes/machine.hpp"
#include "proctimes/error.hpp"

namespace proctimes::inline v1 {

result<machine_status> read_machine_status(machine_part, const std::string&) noexcept {
    return make_error_code(errc::not_supported);
}

}  // namespace proctimes::inline v1
