// SPDX-License-Identifier: MIT
// The portable part of tree.hpp: the names of the sources.
#include "proctimes/tree.hpp"

namespace proctimes::inline v1 {

std::string_view to_string(tree_source s) noexcept {
    switch (s) {
        case tree_source::ptrace:
            return "ptrace";
        case tree_source::bpf:
            return "bpf";
        case tree_source::none:
            return "none";
    }
    return "unknown";
}

}  // namespace proctimes::inline v1
