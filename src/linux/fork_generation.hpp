// SPDX-License-Identifier: MIT
// One counter of fork(2) generations for the whole library.
//
// Caches about the calling process or thread (its creation instant, the
// monotonic guards of its CPU clocks) become wrong in a forked child: it has a
// new pid, a new main thread with its own start time, and CPU clocks that
// restart near zero. Each such cache remembers the generation it was filled
// in and refills itself when fork_generation() has moved on.
#pragma once

#include <cstdint>

namespace proctimes::inline v1::detail {

/// The number of forks this process descends from, counted from 1 in the
/// process that first called it: incremented in the child of every fork(2)
/// made after the first call (a pthread_atfork handler, registered once).
std::uint64_t fork_generation() noexcept;

}  // namespace proctimes::inline v1::detail
