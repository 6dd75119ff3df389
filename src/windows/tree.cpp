// SPDX-License-Identifier: MIT
// The windows backend's run_tree (proctimes/tree.hpp): a traced process tree
// is not implemented on Windows yet (docs/WINDOWS.md). It answers
// errc::not_supported after the argument checks the other backends make.
#include "proctimes/tree.hpp"

namespace proctimes::inline v1 {

result<tree_run> run_tree(const spawn_options& options, const tree_options& tree) noexcept {
    if (options.argv.empty() || options.argv[0].empty() || tree.max_argv_bytes == 0) return errc::invalid_argument;
    return errc::not_supported;
}

}  // namespace proctimes::inline v1
