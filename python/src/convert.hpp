// SPDX-License-Identifier: MIT
// Conversions from the library's C++ types to Python objects, one function per
// type, all in convert.cpp: a field added to a C++ type is added in one place
// (and in _types.py / the .pyi stubs).
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <optional>
#include <string_view>

#include "proctimes/proctimes.hpp"

namespace pyproctimes {

namespace py = pybind11;

/// The Python types of proctimes._types, looked up once at module import.
struct python_types {
    py::object Precision, Times, Identity, ExitStatus, CpuTimes, ChildExit;
    py::object Counters, Memory, SnapshotThread, SnapshotProcess, SnapshotFailure, Snapshot;
    py::object Error, NoSuchProcess, AccessDenied;
};
/// Imports proctimes._types (and the datetime C API). Called from PYBIND11_MODULE.
void load_types();
const python_types& types();

/// Builds an instance of a named tuple class from its fields, in order,
/// without a Python-level __new__ call (snapshots build thousands).
py::object make_named(const py::object& cls, const py::tuple& fields);

/// A timezone-aware UTC datetime, floored to the microsecond. Raises
/// OverflowError outside datetime's years 1..9999.
py::object to_datetime(std::chrono::sys_time<std::chrono::microseconds> t);
py::object to_datetime(proctimes::instant t);
/// An aware datetime (naive ones are refused: ValueError) → microseconds
/// since the Unix epoch, exact.
std::chrono::sys_time<std::chrono::microseconds> from_datetime(py::handle dt);

/// Whether `o` is a datetime.datetime; a timedelta's exact microseconds, or
/// empty when `o` is not a timedelta.
bool is_datetime(py::handle o);
std::optional<std::chrono::microseconds> timedelta_us(py::handle o);

/// A task name (comm, any byte but NUL) as str: UTF-8 with surrogateescape,
/// as os.fsdecode does.
py::str to_str(std::string_view bytes);

py::object to_py(const proctimes::cpu_precision& p);
py::object to_py(const proctimes::task_times& t);
py::object to_py(const proctimes::task_identity& id);
py::object to_py(const proctimes::exit_status& s);
py::object to_py(const proctimes::child_exit& e);
/// psutil's pcputimes from times; children_* None unless given.
py::object to_cpu_times(const proctimes::task_times& t,
                        std::optional<std::chrono::nanoseconds> children_user = std::nullopt,
                        std::optional<std::chrono::nanoseconds> children_kernel = std::nullopt);
/// A whole snapshot: a proctimes.Snapshot list of SnapshotProcess.
py::object to_py(const proctimes::snapshot& s);

/// A timeout in seconds (None: forever) → the library's optional duration.
/// Raises TypeError for a non-number (a str), ValueError for a negative or
/// NaN value, OverflowError for an int too large for a float; +inf means
/// forever.
std::optional<std::chrono::nanoseconds> to_timeout(const py::object& seconds);

}  // namespace pyproctimes
