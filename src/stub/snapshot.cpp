// SPDX-License-Identifier: MIT
// Stub backend, snapshots: a platform without a snapshot source. Every
// snapshotter::open and take_snapshot answers errc::not_supported; the
// portable snapshot code (src/snapshot*.cpp) builds and links unchanged.
#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

result<std::unique_ptr<snapshot_source>> open_snapshot_source(const snapshot_options&) noexcept {
    return errc::not_supported;
}

}  // namespace proctimes::inline v1::detail
