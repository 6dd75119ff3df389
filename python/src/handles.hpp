// SPDX-License-Identifier: MIT
// The C++ objects behind proctimes.Process and proctimes.Thread.
#pragma once

#include <memory>

#include <sys/types.h>

#include "proctimes/proctimes.hpp"

namespace pyproctimes {

/// A process handle shared by the Python object and the calls in flight on it.
/// `h` is read and reset only with the GIL held; empty once closed.
struct py_process {
    std::shared_ptr<const proctimes::process> h;
    pid_t pid = 0;
    /// The handle, or ValueError when closed.
    [[nodiscard]] std::shared_ptr<const proctimes::process> get() const;
};

struct py_thread {
    std::shared_ptr<const proctimes::thread> h;
    pid_t tid = 0;
    pid_t pid = 0;
    [[nodiscard]] std::shared_ptr<const proctimes::thread> get() const;
};

}  // namespace pyproctimes
