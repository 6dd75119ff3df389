// SPDX-License-Identifier: MIT
#include "exit/bounds.hpp"

namespace proctimes::inline v1 {

std::string_view to_string(exit_source s) noexcept {
    switch (s) {
        case exit_source::none:
            return "none";
        case exit_source::observed:
            return "observed";
        case exit_source::exit_record:
            return "exit_record";
        case exit_source::bpf_exit:
            return "bpf_exit";
    }
    return "unknown";
}

}  // namespace proctimes::inline v1
