// SPDX-License-Identifier: MIT
// The arguments of proctimes.spawn and proctimes.run_tree as the library's
// spawn_options (spawn.cpp): one place checks and converts them.
#pragma once

#include <pybind11/pybind11.h>

#include "proctimes/spawn.hpp"

namespace pyproctimes {

namespace py = pybind11;

/// args (a sequence, not one string), cwd, env, program, the three
/// descriptors and the two flags, as spawn() documents them. Raises
/// TypeError/ValueError as spawn() does.
proctimes::spawn_options to_spawn_options(const py::object& args, const py::object& cwd, const py::object& env,
                                          const py::object& program, const py::object& stdin_,
                                          const py::object& stdout_, const py::object& stderr_, bool new_process_group,
                                          bool default_signals);

}  // namespace pyproctimes
