// SPDX-License-Identifier: MIT
#include "errors.hpp"

#include <cerrno>

#include "convert.hpp"

namespace pyproctimes {

int errno_of(std::error_code ec) noexcept {
    if (ec.category() == std::system_category() || ec.category() == std::generic_category()) return ec.value();
    const std::error_condition c = ec.default_error_condition();
    return c.category() == std::generic_category() ? c.value() : EIO;
}

void raise_error(std::error_code ec, pid_t pid, pid_t tid) {
    const python_types& t = types();
    const std::string msg = ec.message();
    const py::object py_pid = pid > 0 ? py::object(py::int_(pid)) : py::object(py::none());
    const py::object py_tid = tid > 0 ? py::object(py::int_(tid)) : py::object(py::none());
    const int err = errno_of(ec);

    py::object cls;
    if (ec == std::errc::no_such_process) {
        cls = t.NoSuchProcess;
    } else if (ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted) {
        cls = t.AccessDenied;
    } else if (ec == proctimes::errc::invalid_argument || ec == proctimes::errc::not_a_process ||
               ec == std::errc::invalid_argument) {
        PyErr_SetString(PyExc_ValueError, (msg + (pid ? " (pid " + std::to_string(pid) + ")" : "")).c_str());
        throw py::error_already_set();
    } else if (ec == proctimes::errc::invalid_handle) {
        PyErr_SetString(PyExc_ValueError, "operation on a closed handle");
        throw py::error_already_set();
    } else if (ec == proctimes::errc::out_of_range) {
        PyErr_SetString(PyExc_OverflowError, msg.c_str());
        throw py::error_already_set();
    } else {
        cls = t.Error;
    }
    py::object exc = cls(err, msg, py::arg("pid") = py_pid, py::arg("tid") = py_tid);
    PyErr_SetObject(cls.ptr(), exc.ptr());
    throw py::error_already_set();
}

}  // namespace pyproctimes
