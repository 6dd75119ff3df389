// SPDX-License-Identifier: MIT
// proctimes.Process and proctimes.Thread: thin wrappers over proctimes::process
// and proctimes::thread. Every value comes from one library call; this file
// only converts (convert.cpp) and raises (errors.cpp).
#include "handles.hpp"

#include <pybind11/stl.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "convert.hpp"
#include "errors.hpp"
#include "wait.hpp"

namespace pyproctimes {

using namespace std::chrono;
using proctimes::errc;

std::shared_ptr<const proctimes::process> py_process::get() const {
    if (!h) raise_error(errc::invalid_handle, pid);
    return h;
}

std::shared_ptr<const proctimes::thread> py_thread::get() const {
    if (!h) raise_error(errc::invalid_handle, pid, tid);
    return h;
}

namespace {

// A pid or tid from Python: None, or an int that must fit pid_t (larger ones
// are refused here as the library refuses ids above PID_MAX_LIMIT).
std::optional<pid_t> to_id(const py::object& o, const char* what) {
    if (o.is_none()) return std::nullopt;
    // Anything with __index__ (int, numpy integers), but not a bool.
    if (!PyIndex_Check(o.ptr()) || py::isinstance<py::bool_>(o))
        throw py::type_error(std::string(what) + " must be an int or None");
    const py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o.ptr()));
    if (!i) throw py::error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow || v < std::numeric_limits<pid_t>::min() || v > std::numeric_limits<pid_t>::max())
        throw py::value_error(std::string(what) + " out of range");
    return static_cast<pid_t>(v);
}

// Waits in slices (wait.hpp), so that a signal (Ctrl-C) interrupts it.
py::object handle_wait(const auto& h, const py::object& timeout, pid_t pid, pid_t tid) {
    const auto to = to_timeout(timeout);
    proctimes::result<bool> r = false;
    wait_in_slices(to, [&](nanoseconds slice) {
        r = proctimes::wait_for_exit(*h, slice);
        return !r || *r;
    });
    return py::bool_(unwrap(r, pid, tid));
}

py_process open_process(const py::object& pid_obj) {
    const auto pid = to_id(pid_obj, "pid");
    auto r = pid ? proctimes::process::open(*pid) : proctimes::process::open_self();
    auto h = std::make_shared<const proctimes::process>(unwrap(std::move(r), pid.value_or(0)));
    const pid_t id = h->id();
    return py_process{std::move(h), id};
}

py_thread open_thread(const py::object& tid_obj, const py::object& pid_obj) {
    const auto tid = to_id(tid_obj, "tid");
    const auto pid = to_id(pid_obj, "pid");
    if (!tid && pid) throw py::value_error("pid needs a tid");
    auto r = !tid  ? proctimes::thread::open_self()
             : pid ? proctimes::thread::open(*pid, *tid)
                   : proctimes::thread::open(*tid);
    auto h = std::make_shared<const proctimes::thread>(unwrap(std::move(r), pid.value_or(0), tid.value_or(0)));
    const pid_t id = h->id(), owner = h->process_id();
    return py_thread{std::move(h), id, owner};
}

// The live threads of a process, as handles. They are opened by number, so
// they belong to `h`'s process only if its pid was not reaped and reused
// before they were opened: a process still running after the opens proves it
// (an unreaped pid cannot be handed out again). When it has ended, nothing
// opened is kept and the answer is NoSuchProcess, as thread_ids() gives once
// the process is reaped.
py::list process_threads(const py_process& self) {
    const auto h = self.get();
    std::vector<proctimes::thread> opened;
    std::error_code err;
    {
        py::gil_scoped_release nogil;
        auto tids = h->thread_ids();
        if (!tids) {
            err = tids.error();
        } else {
            opened.reserve(tids->size());
            for (const pid_t tid : *tids) {
                auto th = proctimes::thread::open(self.pid, tid);
                if (th) {
                    opened.push_back(std::move(*th));
                } else if (th.error() != std::errc::no_such_process) {  // a thread that ended meanwhile is skipped
                    err = th.error();
                    break;
                }
            }
            if (!err) {
                auto ended = proctimes::wait_for_exit(*h, nanoseconds{0});
                if (!ended)
                    err = ended.error();
                else if (*ended)
                    err = errc::no_such_process;
            }
        }
    }
    if (err) raise_error(err, self.pid);
    py::list out;
    for (auto& th : opened) {
        const pid_t tid = th.id();
        out.append(py::cast(py_thread{std::make_shared<const proctimes::thread>(std::move(th)), tid, self.pid}));
    }
    return out;
}

constexpr const char* process_doc = R"(A handle to one process, safe across pid reuse.

Process(pid=None) opens the process `pid` (None: the calling process). The
handle holds the process itself (a pidfd and kept /proc descriptors), not its
number: once that process is reaped, every query raises NoSuchProcess -- even
after the pid has been given to another process -- unless its end was
recorded, in which case it keeps answering with the exit instant and the final
CPU times, like a Windows handle.

Raises NoSuchProcess (no such pid), AccessDenied (/proc hides it), ValueError
(pid <= 0, too large, or a thread that is not a process's main thread).
Usable as a context manager; close() releases its descriptors. Safe to use
from several threads.)";

constexpr const char* thread_doc = R"(A handle to one thread (task) of any process, safe across tid reuse.

Thread(tid=None, pid=None): tid None is the calling thread; with pid, the
thread must belong to that process. Raises NoSuchProcess, AccessDenied or
ValueError as Process does.)";

}  // namespace

void bind_handles(py::module_& m) {
    py::class_<py_process>(m, "Process", process_doc)
        .def(py::init(&open_process), py::arg("pid") = py::none())
        .def_property_readonly(
            "pid", [](const py_process& p) { return p.pid; }, "The process id (fixed at open).")
        .def(
            "times", [](const py_process& p) { return to_py(unwrap(p.get()->times(), p.pid)); },
            "Times(creation, exit, kernel, user, ...): GetProcessTimes. kernel + user are\n"
            "exact to 1 ns (the process CPU clock); the split between them is tick-sampled\n"
            "(10 ms); all threads, exited ones included, children excluded. After the\n"
            "process exits: state 'exited' with the exit instant and final values.")
        .def(
            "cpu_times", [](const py_process& p) { return to_cpu_times(unwrap(p.get()->times(), p.pid)); },
            "psutil's cpu_times(): CpuTimes(user, system, children_user, children_system,\n"
            "iowait) in seconds; the children fields and iowait are None (not known).")
        .def(
            "create_time",
            [](const py_process& p) {
                return static_cast<double>(p.get()->creation().time_since_epoch().count()) / 1e9;
            },
            "psutil's create_time(): seconds since the epoch, a float (exact: times().creation_ns).")
        .def(
            "exit_status",
            [](const py_process& p) {
                auto s = unwrap(p.get()->exit_status(), p.pid);
                return s ? to_py(*s) : py::object(py::none());
            },
            "ExitStatus(code, signal, core_dumped, shell_code), or None while it runs.\n"
            "Any process, not only children, while its end can still be read; raises\n"
            "Error (errno EOPNOTSUPP) when it was reaped before anyone could.")
        .def(
            "wait",
            [](const py_process& p, const py::object& timeout) { return handle_wait(p.get(), timeout, p.pid, 0); },
            py::arg("timeout") = py::none(),
            "Waits until the process has exited (any process, not only children; it is\n"
            "not reaped). timeout in seconds (a number; None: forever). True once exited,\n"
            "False on timeout. Releases the GIL; signal handlers run during the wait, so\n"
            "Ctrl-C raises KeyboardInterrupt. TypeError for a timeout that is not a number,\n"
            "ValueError for a negative or NaN one.")
        .def(
            "is_running",
            [](const py_process& p) { return !handle_wait(p.get(), py::float_(0.0), p.pid, 0).cast<bool>(); },
            "True while the process has not exited (this process, not whatever now has its pid).")
        .def(
            "identity", [](const py_process& p) { return to_py(p.get()->identity()); },
            "Identity(boot, id, start_ticks, serial): exact across pid reuse.")
        .def(
            "name", [](const py_process& p) { return to_str(unwrap(p.get()->name(), p.pid)); },
            "The command name (comm), read now.")
        .def(
            "ppid", [](const py_process& p) { return unwrap(p.get()->parent_id(), p.pid); },
            "The parent pid, read now.")
        .def(
            "thread_ids",
            [](const py_process& p) {
                const auto h = p.get();
                proctimes::result<std::vector<pid_t>> r = errc::invalid_handle;
                {
                    py::gil_scoped_release nogil;
                    r = h->thread_ids();
                }
                return unwrap(std::move(r), p.pid);
            },
            "The ids of the threads alive now, ascending.")
        .def("threads", &process_threads,
             "The threads alive now, as Thread handles. NoSuchProcess once the process\n"
             "has exited. Releases the GIL.")
        .def_property_readonly(
            "pidfd", [](const py_process& p) { return proctimes::native_pidfd(*p.get()); },
            "The pidfd (readable once the process exits; owned by the handle), or -1.")
        .def_property_readonly(
            "closed", [](const py_process& p) { return !p.h; },
            "True once close() (or the end of a with block) has released the handle.")
        .def(
            "close", [](py_process& p) { p.h.reset(); },
            "Releases the handle's descriptors (once no call in flight uses them).")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](py_process& p, const py::args&) { p.h.reset(); })
        .def("__eq__",
             [](const py_process& a, const py::object& b) -> py::object {
                 if (!py::isinstance<py_process>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
                 const auto& o = b.cast<const py_process&>();
                 return py::bool_(a.get()->identity() == o.get()->identity());
             })
        .def("__hash__", [](const py_process& p) { return py::hash(to_py(p.get()->identity())); })
        .def("__repr__", [](const py_process& p) {
            return "proctimes.Process(pid=" + std::to_string(p.pid) + (p.h ? ")" : ", closed)");
        });

    py::class_<py_thread>(m, "Thread", thread_doc)
        .def(py::init(&open_thread), py::arg("tid") = py::none(), py::arg("pid") = py::none())
        .def_property_readonly(
            "tid", [](const py_thread& t) { return t.tid; }, "The thread id (fixed at open).")
        .def_property_readonly(
            "pid", [](const py_thread& t) { return t.pid; }, "The process it belongs to.")
        .def(
            "times", [](const py_thread& t) { return to_py(unwrap(t.get()->times(), t.pid, t.tid)); },
            "Times of this thread (GetThreadTimes): kernel + user exact to 1 ns (its CPU\n"
            "clock, or schedstat for another process's thread), the split tick-sampled;\n"
            "creation from its own start tick.")
        .def(
            "cpu_times", [](const py_thread& t) { return to_cpu_times(unwrap(t.get()->times(), t.pid, t.tid)); },
            "CpuTimes(user, system, None, None, None) in seconds, psutil's field names.")
        .def(
            "create_time",
            [](const py_thread& t) {
                return static_cast<double>(t.get()->creation().time_since_epoch().count()) / 1e9;
            },
            "The thread's creation, seconds since the epoch (psutil has no equivalent).")
        .def(
            "wait",
            [](const py_thread& t, const py::object& timeout) { return handle_wait(t.get(), timeout, t.pid, t.tid); },
            py::arg("timeout") = py::none(),
            "Waits until the thread has exited (needs Linux >= 6.9; else Error with errno\n"
            "EOPNOTSUPP). timeout as Process.wait. True once exited, False on timeout.\n"
            "Releases the GIL; Ctrl-C raises KeyboardInterrupt.")
        .def(
            "identity", [](const py_thread& t) { return to_py(t.get()->identity()); },
            "Identity(boot, id, start_ticks, serial) of the thread: exact across tid reuse.")
        .def(
            "name", [](const py_thread& t) { return to_str(unwrap(t.get()->name(), t.pid, t.tid)); },
            "The thread's name (comm), read now.")
        .def_property_readonly(
            "closed", [](const py_thread& t) { return !t.h; },
            "True once close() (or the end of a with block) has released the handle.")
        .def(
            "close", [](py_thread& t) { t.h.reset(); },
            "Releases the handle's descriptors (once no call in flight uses them).")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](py_thread& t, const py::args&) { t.h.reset(); })
        .def("__eq__",
             [](const py_thread& a, const py::object& b) -> py::object {
                 if (!py::isinstance<py_thread>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
                 const auto& o = b.cast<const py_thread&>();
                 return py::bool_(a.get()->identity() == o.get()->identity());
             })
        .def("__hash__", [](const py_thread& t) { return py::hash(to_py(t.get()->identity())); })
        .def("__repr__", [](const py_thread& t) {
            return "proctimes.Thread(tid=" + std::to_string(t.tid) + ", pid=" + std::to_string(t.pid) +
                   (t.h ? ")" : ", closed)");
        });
}

}  // namespace pyproctimes
