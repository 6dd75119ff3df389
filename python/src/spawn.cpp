// SPDX-License-Identifier: MIT
// proctimes.spawn and proctimes.Child: proctimes::child::spawn / wait.
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "convert.hpp"
#include "errors.hpp"
#include "handles.hpp"
#include "spawn_options.hpp"
#include "wait.hpp"

namespace pyproctimes {

using namespace std::chrono;

namespace {

struct child_state {
    std::mutex mutex;  // guards c's non-const calls and `done`
    proctimes::child c;
    std::optional<proctimes::child_exit> done;  // what wait() returned
    explicit child_state(proctimes::child&& ch) : c(std::move(ch)) {}
};

struct py_child {
    std::shared_ptr<child_state> s;
    pid_t pid = 0;
};

// A path-like or str/bytes argument → bytes, as os.fsencode gives them.
std::string fs_bytes(const py::handle& o) {
    // Never destroyed: released after finalization, a py::object would crash.
    static const py::object& fsencode = *new py::object(py::module_::import("os").attr("fsencode"));
    std::string s = fsencode(o).cast<std::string>();
    // exec(2) would silently cut the string there, as subprocess refuses to.
    if (s.find('\0') != std::string::npos) throw py::value_error("embedded null byte");
    return s;
}

// An int descriptor, an object with fileno(), or None (-1: inherit).
int to_fd(const py::object& o) {
    if (o.is_none()) return -1;
    if (py::hasattr(o, "fileno")) return o.attr("fileno")().cast<int>();
    return o.cast<int>();
}

}  // namespace

proctimes::spawn_options to_spawn_options(const py::object& args, const py::object& cwd, const py::object& env,
                                          const py::object& program, const py::object& stdin_,
                                          const py::object& stdout_, const py::object& stderr_, bool new_process_group,
                                          bool default_signals) {
    if (py::isinstance<py::str>(args) || py::isinstance<py::bytes>(args))
        throw py::type_error("args must be a sequence of arguments, not one string");
    proctimes::spawn_options o;
    for (const py::handle a : args) o.argv.push_back(fs_bytes(a));
    if (!program.is_none()) o.program = fs_bytes(program);
    if (!cwd.is_none()) o.working_directory = fs_bytes(cwd);
    if (!env.is_none()) {
        std::vector<std::string> e;
        for (const auto& [k, v] : env.cast<py::dict>()) {
            std::string key = fs_bytes(k);
            // "A=B": "C" would reach the child as A='B=C'. os.execve and
            // subprocess refuse such a name, and so does this.
            if (key.empty() || key.find('=') != std::string::npos)
                throw py::value_error("illegal environment variable name");
            e.push_back(std::move(key) + "=" + fs_bytes(v));
        }
        o.environment = std::move(e);
    }
    o.stdin_fd = to_fd(stdin_);
    o.stdout_fd = to_fd(stdout_);
    o.stderr_fd = to_fd(stderr_);
    o.new_process_group = new_process_group;
    o.default_signals = default_signals;
    return o;
}

namespace {

py_child spawn(const py::object& args, const py::object& cwd, const py::object& env, const py::object& program,
               const py::object& stdin_, const py::object& stdout_, const py::object& stderr_, bool new_process_group,
               bool default_signals) {
    const proctimes::spawn_options o =
        to_spawn_options(args, cwd, env, program, stdin_, stdout_, stderr_, new_process_group, default_signals);
    proctimes::result<proctimes::child> r = proctimes::errc::invalid_handle;
    {
        py::gil_scoped_release nogil;
        r = proctimes::child::spawn(o);
    }
    auto st = std::make_shared<child_state>(unwrap(std::move(r), 0));
    const pid_t pid = st->c.id();
    return py_child{std::move(st), pid};
}

// The child's handle; raises why it has none (handle_error()) rather than
// "closed handle" when the command runs without one.
const proctimes::process& handle_of(const py_child& c) {
    if (!c.s->c.handle().valid()) raise_error(c.s->c.handle_error(), c.pid);
    return c.s->c.handle();
}

// The final values once the child has exited, else None. The wait itself is
// on the handle (safe from several threads at once, each with its own
// timeout); child::wait then reaps at once. It runs in slices (wait.hpp), so
// that a signal (Ctrl-C) interrupts it.
py::object child_wait(const py_child& ch, const py::object& timeout) {
    const auto to = to_timeout(timeout);
    const auto st = ch.s;
    std::optional<proctimes::child_exit> out;
    std::error_code err;
    if (!st->c.handle().valid()) {
        // No handle (handle_error(): no descriptor, no /proc, or the child
        // was gone before it could be opened): the child waits on its own
        // pidfd and reports what waitid gives.
        wait_in_slices(to, [&](nanoseconds slice) {
            std::lock_guard lock(st->mutex);
            if (st->done) {
                out = st->done;
                return true;
            }
            auto e = st->c.wait_for(slice);
            if (!e)
                err = e.error();
            else if (*e)
                out = st->done = **e;
            return !e || e->has_value();
        });
    } else {
        bool ended = wait_in_slices(to, [&](nanoseconds slice) {
            auto r = proctimes::wait_for_exit(st->c.handle(), slice);
            if (!r) err = r.error();
            return !r || *r;
        });
        if (ended && !err) {
            py::gil_scoped_release nogil;
            std::lock_guard lock(st->mutex);
            auto e = st->c.wait();
            if (e)
                out = st->done = *e;
            else
                err = e.error();
        }
    }
    if (err) raise_error(err, ch.pid);
    return out ? to_py(*out) : py::object(py::none());
}

}  // namespace

void bind_spawn(py::module_& m) {
    py::class_<py_child>(m, "Child",
                         "A process started by proctimes.spawn(). Its handle is safe from the first\n"
                         "instant (clone3 with CLONE_PIDFD). Dropping it without wait() leaves no zombie.")
        .def_property_readonly(
            "pid", [](const py_child& c) { return c.pid; }, "The child's process id.")
        .def_property_readonly(
            "process",
            [](const py_child& c) {
                // Shares the child's ownership: the handle lives as long as either object.
                return py_process{std::shared_ptr<const proctimes::process>(c.s, &c.s->c.handle()), c.pid};
            },
            "The child as a Process (times() while it runs and after it ends).")
        .def(
            "times", [](const py_child& c) { return to_py(unwrap(handle_of(c).times(), c.pid)); },
            "Times of the child (children excluded), live or final.")
        .def("wait", &child_wait, py::arg("timeout") = py::none(),
             "Waits for it to exit and reaps it: ChildExit(status, times, children_kernel_ns,\n"
             "children_user_ns, max_rss_kib, times_error), its final values; None on timeout\n"
             "(seconds, a number; None: forever). status is None when unknown (the kernel\n"
             "reaped it because SIGCHLD is ignored). Calling it again returns the same\n"
             "values. Releases the GIL; Ctrl-C raises KeyboardInterrupt (the child is not\n"
             "reaped then). TypeError for a timeout that is not a number, ValueError for a\n"
             "negative or NaN one.")
        .def(
            "cpu_times",
            [](const py_child& c) {
                // After wait(), the children fields are the waited-for descendants' time.
                std::optional<proctimes::child_exit> done;
                {
                    std::lock_guard lock(c.s->mutex);  // held briefly: waits happen outside it
                    done = c.s->done;
                }
                if (done) return to_cpu_times(done->times, done->children_user, done->children_kernel);
                return to_cpu_times(unwrap(handle_of(c).times(), c.pid));
            },
            "psutil's cpu_times(); children_user/children_system are known (not None)\n"
            "once the child has exited and been waited for.")
        .def(
            "exit_status",
            [](const py_child& c) {
                auto s = unwrap(handle_of(c).exit_status(), c.pid);
                return s ? to_py(*s) : py::object(py::none());
            },
            "ExitStatus(code, signal, core_dumped, shell_code) once it has exited (before\n"
            "or after wait()), else None.")
        .def("__repr__", [](const py_child& c) { return "proctimes.Child(pid=" + std::to_string(c.pid) + ")"; });

    m.def("spawn", &spawn, py::arg("args"), py::kw_only(), py::arg("cwd") = py::none(), py::arg("env") = py::none(),
          py::arg("program") = py::none(), py::arg("stdin") = py::none(), py::arg("stdout") = py::none(),
          py::arg("stderr") = py::none(), py::arg("new_process_group") = false, py::arg("default_signals") = false,
          R"(Starts a command and returns a Child; child.wait() gives its exit status and
final times, exactly (its own CPU, children excluded, split to 1 us when it
waited for no children).

args: a sequence of str/bytes/path-like; args[0] is searched in PATH unless
`program` is given. cwd, env (a dict; None: inherit), stdin/stdout/stderr (a
descriptor or an object with fileno(); None: inherit). ValueError for an
environment name that is empty or contains '=', and for a NUL byte in any
argument, name or value (as os.execve). Raises FileNotFoundError-
like proctimes.Error (errno ENOENT) or PermissionError-like AccessDenied when
the program cannot be executed. Releases the GIL.)");
}

}  // namespace pyproctimes
