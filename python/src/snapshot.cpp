// SPDX-License-Identifier: MIT
// proctimes.snapshot and proctimes.Snapshotter: proctimes::take_snapshot and
// proctimes::snapshotter. The walk runs without the GIL; the Python list is
// built after it.
#include <cmath>
#include <mutex>
#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "errors.hpp"

namespace pyproctimes {

using namespace std::chrono;

namespace {

proctimes::snapshot_options make_options(bool threads, bool precise, const std::string& proc_root, unsigned workers,
                                         double reuse_idle_threads_for) {
    if (proc_root.find('\0') != std::string::npos) throw py::value_error("embedded null byte in proc_root");
    if (std::isnan(reuse_idle_threads_for) || reuse_idle_threads_for < 0)
        throw py::value_error("reuse_idle_threads_for must be >= 0 seconds");
    proctimes::snapshot_options o;
    o.threads = threads;
    o.cpu = precise ? proctimes::snapshot_cpu::precise : proctimes::snapshot_cpu::precise_processes;
    o.proc_root = proc_root;
    o.workers = workers;
    o.reuse_idle_threads_for = duration_cast<nanoseconds>(duration<double>(std::min(reuse_idle_threads_for, 1e9)));
    return o;
}

// A snapshotter is not thread-safe: the mutex makes the Python object so
// (a second take() waits for the first, without the GIL).
struct py_snapshotter {
    std::mutex mutex;
    proctimes::snapshotter s;
    proctimes::snapshot last;  // reused memory: a steady-state walk allocates nothing
};

constexpr const char* snapshot_doc = R"(Every process (and with threads=True every thread) of the system, from one
walk of /proc: a Snapshot (a list of SnapshotProcess, ascending by pid; each
with .threads). Each entry's times are the four Windows values: creation
(bit-identical with Process handles), kernel and user (processes: 1 ns total
from the CPU clock, 10 ms split; threads: 10 ms ticks, or 1 ns totals with
precise=True, at about 1.5x the cost). Processes that could not be read are
in .failures, tasks that ended mid-walk are counted in .vanished.

proc_root: another procfs mount or a captured tree. workers: threads walking
/proc (0: the library chooses). Raises Error when /proc cannot be read.
Releases the GIL during the walk.)";

}  // namespace

void bind_snapshot(py::module_& m) {
    m.def(
        "snapshot",
        [](bool threads, bool precise, const std::string& proc_root, unsigned workers) {
            const auto o = make_options(threads, precise, proc_root, workers, 0);
            proctimes::result<proctimes::snapshot> r = proctimes::errc::invalid_handle;
            {
                py::gil_scoped_release nogil;
                r = proctimes::take_snapshot(o);
            }
            return to_py(unwrap(std::move(r), 0));
        },
        py::arg("threads") = true, py::kw_only(), py::arg("precise") = false, py::arg("proc_root") = "/proc",
        py::arg("workers") = 0u, snapshot_doc);

    py::class_<py_snapshotter>(m, "Snapshotter",
                               "Takes snapshot after snapshot with the same options, keeping /proc open and\n"
                               "reusing memory. reuse_idle_threads_for (seconds, 0: off): copy the thread\n"
                               "entries of processes that have not run since the previous take() instead of\n"
                               "reading them again (their values are exactly what a read would give), for\n"
                               "at most that long. Safe to share between threads (takes are serialized).")
        .def(py::init([](bool threads, bool precise, const std::string& proc_root, unsigned workers,
                         double reuse_idle_threads_for) {
                 auto o = make_options(threads, precise, proc_root, workers, reuse_idle_threads_for);
                 auto s = unwrap(proctimes::snapshotter::open(std::move(o)), 0);
                 auto p = std::make_unique<py_snapshotter>();
                 p->s = std::move(s);
                 return p;
             }),
             py::arg("threads") = true, py::kw_only(), py::arg("precise") = false, py::arg("proc_root") = "/proc",
             py::arg("workers") = 0u, py::arg("reuse_idle_threads_for") = 0.0)
        .def(
            "take",
            [](py_snapshotter& self) {
                // Lock order: the mutex is only ever waited for without the GIL,
                // so holding it while taking the GIL back cannot deadlock.
                std::unique_lock<std::mutex> lock;
                proctimes::result<void> r;
                {
                    py::gil_scoped_release nogil;
                    lock = std::unique_lock(self.mutex);
                    r = self.s.take(self.last);
                }
                unwrap(r, 0);
                return to_py(self.last);
            },
            "A new Snapshot (see proctimes.snapshot). Releases the GIL during the walk.");
}

}  // namespace pyproctimes
