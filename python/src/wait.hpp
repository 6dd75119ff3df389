// SPDX-License-Identifier: MIT
// Waits that Python signals can interrupt. The library's waits resume after a
// signal handler runs (EINTR), as they must for C++ callers; a Python signal
// handler, though, only runs once the interpreter gets control back. So every
// wait of the binding runs in short slices without the GIL, and between two
// slices lets Python run its pending handlers: Ctrl-C raises
// KeyboardInterrupt (and any exception a handler raises propagates) within a
// slice, as time.sleep and subprocess.Popen.wait behave.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace pyproctimes {

namespace py = pybind11;

/// The longest a wait runs without giving Python's signal handlers a turn.
inline constexpr std::chrono::milliseconds wait_slice{50};

/// Calls step(slice) without the GIL until it returns true (done: the awaited
/// end came, or step recorded an error and wants to stop) or `timeout` has
/// passed on the monotonic clock (empty: forever). Each slice lasts at most
/// wait_slice, the last one exactly what is left. Between slices, runs the
/// pending Python signal handlers; an exception one raises is thrown
/// (error_already_set). Returns whether step reported done.
template <class Step>
bool wait_in_slices(std::optional<std::chrono::nanoseconds> timeout, Step&& step) {
    using namespace std::chrono;
    const auto start = steady_clock::now();
    for (;;) {
        nanoseconds slice = wait_slice;
        bool last = false;
        if (timeout) {
            const nanoseconds left = *timeout - duration_cast<nanoseconds>(steady_clock::now() - start);
            if (left <= slice) {
                slice = std::max(left, nanoseconds{0});
                last = true;
            }
        }
        bool done = false;
        {
            py::gil_scoped_release nogil;
            done = step(slice);
        }
        if (done || last) return done;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
}

}  // namespace pyproctimes
