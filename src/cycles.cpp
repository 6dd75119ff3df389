// SPDX-License-Identifier: MIT
// The portable part of cycles.hpp: the names of the rate sources.
#include "proctimes/cycles.hpp"

namespace proctimes::inline v1 {

std::string_view to_string(tsc_rate_source s) noexcept {
    switch (s) {
        case tsc_rate_source::cpuid_crystal:
            return "cpuid-0x15";
        case tsc_rate_source::cpuid_base_frequency:
            return "cpuid-0x16";
        case tsc_rate_source::hypervisor:
            return "hypervisor-cpuid";
        case tsc_rate_source::sysfs:
            return "sysfs";
        case tsc_rate_source::calibrated:
            return "calibrated";
        case tsc_rate_source::architected_timer:
            return "cntfrq";
        case tsc_rate_source::nominal:
            return "nominal";
    }
    return "unknown";
}

}  // namespace proctimes::inline v1
