// SPDX-License-Identifier: MIT
// A child's construction, moves and destruction: the same for every backend,
// which supplies release() (what a child owns beyond its members: the Linux
// backend's pidfd and exit-monitor registration; nothing in the stub).
#include <utility>

#include "proctimes/spawn.hpp"

namespace proctimes::inline v1 {

child::child() noexcept = default;
child::child(child&& o) noexcept
    : process_(std::move(o.process_)),
      pid_(o.pid_),
      pidfd_(std::exchange(o.pidfd_, -1)),
      handle_error_(o.handle_error_),
      clone_before_(o.clone_before_),
      clone_after_(o.clone_after_),
      result_(o.result_) {}
child& child::operator=(child&& o) noexcept {
    if (this != &o) {
        release();
        process_ = std::move(o.process_);
        pid_ = o.pid_;
        pidfd_ = std::exchange(o.pidfd_, -1);
        handle_error_ = o.handle_error_;
        clone_before_ = o.clone_before_;
        clone_after_ = o.clone_after_;
        result_ = o.result_;
    }
    return *this;
}
child::~child() { release(); }

}  // namespace proctimes::inline v1
