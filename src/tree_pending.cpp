// SPDX-License-Identifier: MIT
// proctimes::run_tree where no tree recorder is built: not_supported, and
// nothing is started. The recorder itself replaces this file.
#include "proctimes/tree.hpp"

namespace proctimes {

result<tree_run> run_tree(const spawn_options& /*options*/, const tree_options& /*tree*/) noexcept {
    return errc::not_supported;
}

}  // namespace proctimes
