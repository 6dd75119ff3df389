// SPDX-License-Identifier: MIT
// proctimes._proctimes: the compiled part of the `proctimes` Python package.
// The package's __init__.py re-exports everything; users import proctimes.
#include <cstdint>
#include <optional>

#include "bindings.hpp"
#include "convert.hpp"
#include "errors.hpp"

namespace pyproctimes {

using namespace std::chrono;

namespace {

// A Python int that must fit in int64 (nanoseconds) → OverflowError otherwise.
std::int64_t to_int64(const py::handle& o, const char* what) {
    if (!py::isinstance<py::int_>(o)) throw py::type_error(std::string(what) + " must be an int");
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
    if (overflow) throw py::value_error(std::string(what) + " out of range of 64-bit nanoseconds");
    return v;
}

// A FILETIME as a Python int: 0 .. 0x7FFFFFFFFFFFFFFF, else ValueError.
proctimes::filetime to_filetime(const py::handle& o) {
    if (!py::isinstance<py::int_>(o)) throw py::type_error("a FILETIME must be an int (100 ns ticks)");
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
    if (overflow || v < 0) throw py::value_error("FILETIME out of range (0 .. 0x7FFFFFFFFFFFFFFF)");
    return proctimes::filetime{static_cast<std::uint64_t>(v)};
}

template <class T>
T or_range_error(std::optional<T> v, const char* what) {
    if (!v) throw py::value_error(what);
    return *v;
}

std::uint64_t filetime_from_time(const py::object& t) {
    std::optional<proctimes::filetime> ft;
    if (is_datetime(t))
        ft = proctimes::filetime_from_time(from_datetime(t));
    else
        ft = proctimes::filetime_from_time(proctimes::instant{nanoseconds{to_int64(t, "an instant in ns")}});
    return or_range_error(ft, "instant outside FILETIME's range (1601-01-01 .. 30828-09-14)").ticks;
}

std::uint64_t filetime_from_duration(const py::object& d) {
    std::optional<proctimes::filetime> ft;
    if (const auto us = timedelta_us(d)) {
        ft = proctimes::filetime_from_duration(*us);
    } else {
        ft = proctimes::filetime_from_duration(nanoseconds{to_int64(d, "a duration in ns")});
    }
    return or_range_error(ft, "negative duration, or one beyond FILETIME's range").ticks;
}

}  // namespace

void bind_misc(py::module_& m) {
    m.def(
        "this_process_times",
        [] { return to_py(unwrap(proctimes::this_process::times(), proctimes::this_process::id())); },
        "Times of the calling process: one getrusage(RUSAGE_SELF) (1 us, the kernel's own\n"
        "split) plus its creation instant.");
    m.def(
        "this_thread_times",
        [] { return to_py(unwrap(proctimes::this_thread::times(), 0, proctimes::this_thread::id())); },
        "Times of the calling thread: one getrusage(RUSAGE_THREAD) (1 us) plus its creation instant.");
    m.def(
        "process_time_ns", [] { return proctimes::process_cpu_clock::now().time_since_epoch().count(); },
        "CPU time of all threads of the calling process, ns (CLOCK_PROCESS_CPUTIME_ID; children excluded).");
    m.def(
        "thread_time_ns", [] { return proctimes::thread_cpu_clock::now().time_since_epoch().count(); },
        "CPU time of the calling thread, ns (CLOCK_THREAD_CPUTIME_ID).");

    m.def("filetime_from_time", &filetime_from_time, py::arg("t"),
          "An instant -> FILETIME (100 ns ticks since 1601-01-01 UTC), floored. t: an aware\n"
          "datetime, or an int of ns since the Unix epoch (a Times *_ns field). ValueError\n"
          "outside 1601-01-01 .. 30828-09-14; ValueError for a naive datetime.");
    m.def(
        "time_from_filetime",
        [](const py::object& ft) {
            auto t = proctimes::time_from_filetime(to_filetime(ft));
            return or_range_error(t, "FILETIME outside 1677-09-21 .. 2262-04-11 (int64 ns)").time_since_epoch().count();
        },
        py::arg("filetime"), "FILETIME -> ns since the Unix epoch, exact. ValueError outside int64 ns' range.");
    m.def(
        "datetime_from_filetime",
        [](const py::object& ft) {
            auto t = proctimes::time_from_filetime<microseconds>(to_filetime(ft));
            return to_datetime(or_range_error(t, "FILETIME out of range"));
        },
        py::arg("filetime"),
        "FILETIME -> an aware UTC datetime, floored to the microsecond (OverflowError after year 9999).");
    m.def("filetime_from_duration", &filetime_from_duration, py::arg("d"),
          "A duration (timedelta, or int ns) -> a FILETIME count of 100 ns ticks, floored.\n"
          "ValueError when negative.");
    m.def(
        "duration_from_filetime",
        [](const py::object& ft) {
            return or_range_error(proctimes::duration_from_filetime(to_filetime(ft)),
                                  "FILETIME duration beyond int64 ns (about 292 years)")
                .count();
        },
        py::arg("filetime"), "A FILETIME count of 100 ns ticks -> ns.");

    m.def("set_exit_monitor_enabled", &proctimes::set_exit_monitor_enabled, py::arg("on"),
          "Exit tracking for handles opened afterwards (default on; PROCTIMES_EXIT_MONITOR=0 turns it off).");
    m.def("exit_monitor_enabled", &proctimes::exit_monitor_enabled,
          "Whether handles opened from now on have their exit tracked (set_exit_monitor_enabled).");
    m.def("set_exit_records_enabled", &proctimes::set_exit_records_enabled, py::arg("on"),
          "The kernel's taskstats exit records (root): exact final values of threads.");
    m.def("exit_records_enabled", &proctimes::exit_records_enabled,
          "Whether the kernel's taskstats exit records are listened to (set_exit_records_enabled).");
}

}  // namespace pyproctimes

PYBIND11_MODULE(_proctimes, m) {
    m.doc() = "The compiled part of proctimes; import proctimes instead.";
    pyproctimes::load_types();
    pyproctimes::bind_handles(m);
    pyproctimes::bind_spawn(m);
    pyproctimes::bind_tree(m);
    pyproctimes::bind_snapshot(m);
    pyproctimes::bind_misc(m);
}
