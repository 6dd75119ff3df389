// SPDX-License-Identifier: MIT
#include "convert.hpp"

#include <datetime.h>  // after Python.h (convert.hpp); PyDateTimeAPI is per file: only this one uses it

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "errors.hpp"

namespace pyproctimes {

using namespace std::chrono;

namespace {

python_types* g_types = nullptr;

// Small caches of immutable objects that recur in every result (the state
// strings, a handful of precisions, the boot id). Only touched with the GIL held.
struct caches {
    py::str running, exited, exited_partial;
    std::vector<std::pair<proctimes::cpu_precision, py::object>> precisions;
    proctimes::boot_id boot{};
    py::object boot_str;
};
caches* g_caches = nullptr;

py::object get_attr(const py::module_& m, const char* name) { return m.attr(name); }

const py::str& state_str(proctimes::task_state s) {
    switch (s) {
        case proctimes::task_state::running:
            return g_caches->running;
        case proctimes::task_state::exited:
            return g_caches->exited;
        case proctimes::task_state::exited_partial:
            return g_caches->exited_partial;
    }
    return g_caches->running;
}

py::object boot_str(const proctimes::boot_id& b) {
    if (!g_caches->boot_str || !(b == g_caches->boot)) {
        g_caches->boot = b;
        g_caches->boot_str = py::str(b.to_string());
    }
    return g_caches->boot_str;
}

py::object optional_ns(const std::optional<proctimes::instant>& t) {
    return t ? py::object(py::int_(t->time_since_epoch().count())) : py::object(py::none());
}

double seconds(nanoseconds d) { return static_cast<double>(d.count()) / 1e9; }

py::object task_times_tuple(const proctimes::task_times& t) {
    return make_named(
        types().Times,
        py::make_tuple(to_datetime(t.creation), t.exit ? to_datetime(*t.exit) : py::object(py::none()),
                       seconds(t.kernel), seconds(t.user), t.creation.time_since_epoch().count(), optional_ns(t.exit),
                       t.kernel.count(), t.user.count(), state_str(t.state), to_py(t.precision),
                       t.sampled_at.time_since_epoch().count(), optional_ns(t.exit_earliest)));
}

}  // namespace

void load_types() {
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI) throw py::error_already_set();
    const py::module_ m = py::module_::import("proctimes._types");
    g_types = new python_types{
        // lives as long as the interpreter: never freed
        get_attr(m, "Precision"),       get_attr(m, "Times"),           get_attr(m, "Identity"),
        get_attr(m, "ExitStatus"),      get_attr(m, "CpuTimes"),        get_attr(m, "ChildExit"),
        get_attr(m, "Counters"),        get_attr(m, "Memory"),          get_attr(m, "SnapshotThread"),
        get_attr(m, "SnapshotProcess"), get_attr(m, "SnapshotFailure"), get_attr(m, "Snapshot"),
        get_attr(m, "Error"),           get_attr(m, "NoSuchProcess"),   get_attr(m, "AccessDenied"),
    };
    g_caches = new caches{py::str("running"), py::str("exited"), py::str("exited_partial"), {}, {}, {}};
}

const python_types& types() { return *g_types; }

py::object make_named(const py::object& cls, const py::tuple& fields) {
    // tuple.__new__(cls, fields): what namedtuple's _make does, minus the call
    // through Python.
    const py::tuple args = py::make_tuple(fields);
    PyObject* o = PyTuple_Type.tp_new(reinterpret_cast<PyTypeObject*>(cls.ptr()), args.ptr(), nullptr);
    if (!o) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(o);
}

py::object to_datetime(sys_time<microseconds> t) {
    const auto day = floor<days>(t);
    const year_month_day ymd{day};
    const int y = static_cast<int>(ymd.year());
    if (y < 1 || y > 9999) {
        PyErr_SetString(PyExc_OverflowError, "instant outside datetime's range (years 1 to 9999)");
        throw py::error_already_set();
    }
    const hh_mm_ss<microseconds> tod{t - day};
    PyObject* o = PyDateTimeAPI->DateTime_FromDateAndTime(
        y, static_cast<int>(static_cast<unsigned>(ymd.month())), static_cast<int>(static_cast<unsigned>(ymd.day())),
        static_cast<int>(tod.hours().count()), static_cast<int>(tod.minutes().count()),
        static_cast<int>(tod.seconds().count()), static_cast<int>(tod.subseconds().count()), PyDateTime_TimeZone_UTC,
        PyDateTimeAPI->DateTimeType);
    if (!o) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(o);
}

py::object to_datetime(proctimes::instant t) { return to_datetime(floor<microseconds>(t)); }

sys_time<microseconds> from_datetime(py::handle dt) {
    if (!PyDateTime_Check(dt.ptr())) throw py::type_error("expected a datetime.datetime");
    if (dt.attr("utcoffset")().is_none())
        throw py::value_error("a naive datetime has no defined instant: give it a tzinfo (e.g. timezone.utc)");
    // Never destroyed: a static py::object would be released after the
    // interpreter has finalized.
    static PyObject* const epoch = PyDateTimeAPI->DateTime_FromDateAndTime(
        1970, 1, 1, 0, 0, 0, 0, PyDateTime_TimeZone_UTC, PyDateTimeAPI->DateTimeType);
    if (!epoch) throw py::error_already_set();
    const py::object delta = dt - py::handle(epoch);  // exact: a timedelta of days, seconds, microseconds
    return sys_time<microseconds>{*timedelta_us(delta)};
}

bool is_datetime(py::handle o) { return PyDateTime_Check(o.ptr()); }

std::optional<microseconds> timedelta_us(py::handle o) {
    if (!PyDelta_Check(o.ptr())) return std::nullopt;
    return microseconds{std::int64_t{PyDateTime_DELTA_GET_DAYS(o.ptr())} * 86'400'000'000 +
                        std::int64_t{PyDateTime_DELTA_GET_SECONDS(o.ptr())} * 1'000'000 +
                        PyDateTime_DELTA_GET_MICROSECONDS(o.ptr())};
}

py::str to_str(std::string_view bytes) {
    PyObject* o = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "surrogateescape");
    if (!o) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(o);
}

py::object to_py(const proctimes::cpu_precision& p) {
    for (const auto& [key, obj] : g_caches->precisions)
        if (key == p) return obj;
    py::object obj = make_named(
        types().Precision, py::make_tuple(p.resolution.count(), p.total_resolution.count(),
                                          p.creation_resolution.count(), std::string(proctimes::to_string(p.source)),
                                          std::string(proctimes::to_string(p.exit_source)), p.exit_resolution.count()));
    if (g_caches->precisions.size() < 64) g_caches->precisions.emplace_back(p, obj);
    return obj;
}

py::object to_py(const proctimes::task_times& t) { return task_times_tuple(t); }

py::object to_py(const proctimes::task_identity& id) {
    return make_named(types().Identity, py::make_tuple(boot_str(id.boot), id.id, id.start_ticks, id.serial));
}

py::object to_py(const proctimes::exit_status& s) {
    return make_named(types().ExitStatus, py::make_tuple(s.code, s.signal, s.core_dumped, s.shell_code()));
}

py::object to_py(const proctimes::child_exit& e) {
    // An unknown status (the child was reaped by someone else, e.g. the kernel
    // when SIGCHLD is ignored) is None, never a made-up 0.
    py::object status = e.status ? to_py(*e.status) : py::object(py::none());
    py::object times_error = e.times_error ? py::object(py::str(e.times_error.message())) : py::object(py::none());
    return make_named(types().ChildExit, py::make_tuple(status, to_py(e.times), e.children_kernel.count(),
                                                        e.children_user.count(), e.max_rss_kib, times_error));
}

py::object to_cpu_times(const proctimes::task_times& t, std::optional<nanoseconds> children_user,
                        std::optional<nanoseconds> children_kernel) {
    auto opt = [](std::optional<nanoseconds> d) {
        return d ? py::object(py::float_(seconds(*d))) : py::object(py::none());
    };
    return make_named(types().CpuTimes, py::make_tuple(seconds(t.user), seconds(t.kernel), opt(children_user),
                                                       opt(children_kernel), py::none()));
}

namespace {

py::object optional_int(const std::optional<std::uint64_t>& v) {
    return v ? py::object(py::int_(*v)) : py::object(py::none());
}

py::object optional_duration_ns(const std::optional<nanoseconds>& v) {
    return v ? py::object(py::int_(v->count())) : py::object(py::none());
}

py::object to_py(const std::optional<proctimes::task_counters>& c) {
    if (!c) return py::none();
    return make_named(types().Counters,
                      py::make_tuple(c->minor_faults, c->major_faults, c->voluntary_switches, c->involuntary_switches,
                                     optional_int(c->read_bytes), optional_int(c->write_bytes)));
}

py::object to_py(const std::optional<proctimes::process_memory>& m) {
    if (!m) return py::none();
    return make_named(types().Memory, py::make_tuple(m->resident_bytes, m->virtual_bytes, m->swap_bytes));
}

// RLIM_INFINITY as Python's resource module states it (-1), any other limit as is.
py::object limit_to_py(const std::optional<std::uint64_t>& v) {
    if (!v) return py::none();
    if (*v == std::numeric_limits<std::uint64_t>::max()) return py::int_(-1);
    return py::int_(*v);
}

}  // namespace

py::object to_py(const proctimes::snapshot& s) {
    const python_types& ty = types();
    py::list processes(s.processes.size());
    std::size_t i = 0;
    for (const auto& p : s.processes) {
        const auto span = s.threads_of(p);
        py::list threads(span.size());
        std::size_t j = 0;
        for (const auto& t : span) {
            threads[j++] = make_named(ty.SnapshotThread,
                                      py::make_tuple(t.tid(), t.pid, to_str(t.name.view()), std::string(1, t.state),
                                                     task_times_tuple(t.times), to_py(t.identity), to_py(t.counters)));
        }
        const py::object uid =
            p.uid == proctimes::snapshot_process::unknown_uid ? py::object(py::none()) : py::object(py::int_(p.uid));
        processes[i++] = make_named(
            ty.SnapshotProcess,
            py::make_tuple(p.pid(), p.parent_pid, uid, to_str(p.name.view()), std::string(1, p.state), p.kernel_thread,
                           p.thread_count, task_times_tuple(p.times), to_py(p.identity), std::move(threads),
                           optional_duration_ns(p.children_kernel), optional_duration_ns(p.children_user),
                           to_py(p.counters), to_py(p.memory), limit_to_py(p.open_files_limit)));
    }
    py::list failures;
    for (const auto& f : s.failures) {
        static constexpr const char* items[] = {"process", "owner", "thread_list", "thread"};
        const auto k = static_cast<std::size_t>(f.item);
        failures.append(make_named(ty.SnapshotFailure, py::make_tuple(f.pid, f.tid, k < 4 ? items[k] : "unknown",
                                                                      errno_of(f.error), f.error.message())));
    }
    py::object out = ty.Snapshot(std::move(processes));
    out.attr("taken_ns") = s.taken.time_since_epoch().count();
    out.attr("walk_duration_ns") = s.walk_duration.count();
    out.attr("failures") = std::move(failures);
    out.attr("vanished") = s.vanished;
    out.attr("reused_threads") = s.reused_threads;
    out.attr("workers") = s.workers;
    return out;
}

std::optional<nanoseconds> to_timeout(const py::object& seconds) {
    if (seconds.is_none()) return std::nullopt;
    // A real number (int, float, or anything with __float__ or __index__), as
    // time.sleep takes: a str or other non-number raises TypeError.
    const double s = PyFloat_AsDouble(seconds.ptr());
    if (s == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    if (std::isnan(s)) throw py::value_error("timeout is NaN");
    if (s < 0) throw py::value_error("timeout must be >= 0 or None");
    // Beyond ~292 years a nanosecond count overflows: that is forever.
    if (s >= static_cast<double>(std::numeric_limits<std::int64_t>::max()) / 1e9) return std::nullopt;
    return nanoseconds{static_cast<std::int64_t>(std::ceil(s * 1e9))};
}

}  // namespace pyproctimes
