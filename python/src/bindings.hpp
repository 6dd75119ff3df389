// SPDX-License-Identifier: MIT
// The parts of the proctimes._proctimes extension, each bound by one function.
//
// Threads: every call that can block (waits, spawning) or walks /proc
// (snapshots, a process's thread list) releases the GIL while the C++ library
// works, and builds its Python result after taking the GIL back. Handle
// objects hold their C++ handle through a shared_ptr copied (under the GIL) by
// each call, so close() from one Python thread while another waits is safe: the
// descriptors are released when the last call using them returns.
#pragma once

#include <pybind11/pybind11.h>

namespace pyproctimes {

namespace py = pybind11;

void bind_handles(py::module_& m);   // Process, Thread (handles.cpp)
void bind_spawn(py::module_& m);     // Child, spawn (spawn.cpp)
void bind_tree(py::module_& m);      // run_tree (tree.cpp)
void bind_snapshot(py::module_& m);  // snapshot, Snapshotter (snapshot.cpp)
void bind_misc(py::module_& m);      // own times, clocks, FILETIME, switches (module.cpp)

}  // namespace pyproctimes
