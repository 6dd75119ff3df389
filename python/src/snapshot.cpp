// SPDX-License-Identifier: MIT
// proctimes.snapshot and proctimes.Snapshotter: proctimes::take_snapshot and
// proctimes::snapshotter. The walk runs without the GIL; the Python list is
// built after it.
#include <cmath>
#include <memory>
#include <mutex>
#include <string>

#include <unistd.h>

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
struct snapshotter_state {
    std::mutex mutex;
    proctimes::snapshotter s;
    proctimes::snapshot last;  // reused memory: a steady-state walk allocates nothing
};

struct py_snapshotter {
    std::unique_ptr<snapshotter_state> st;
    proctimes::snapshot_options options;
    pid_t owner = 0;  // the process that made `st` (fork detection)
};

// After fork(): the library gives a forked child descriptors and eBPF objects
// of its own at its next take. But if another thread was in take() when this
// process forked, that thread does not exist here, the mutex stays locked
// forever and the state it was changing is half-done: the child then leaves
// that state alone (never freed) and opens a new snapshotter. Called with the
// GIL held, which every take() holds to get here.
void own_after_fork(py_snapshotter& self) {
    const pid_t me = ::getpid();
    if (self.owner == me) return;
    self.owner = me;
    if (self.st->mutex.try_lock()) {
        self.st->mutex.unlock();
        return;
    }
    auto fresh = std::make_unique<snapshotter_state>();
    fresh->s = unwrap(proctimes::snapshotter::open(self.options), 0);
    (void)self.st.release();  // in use by a thread that did not survive the fork
    self.st = std::move(fresh);
}

constexpr const char* snapshot_doc = R"(Every process (and with threads=True every thread) of the system, from one
walk of /proc: a Snapshot (a list of SnapshotProcess, ascending by pid; each
with .threads). Each entry's times are the four Windows values: creation
(bit-identical with Process handles), kernel and user (processes: 1 ns total
from the CPU clock, 10 ms split; threads: 10 ms ticks, or 1 ns totals with
precise=True, at about 1.5x the cost). Processes that could not be read are
in .failures, tasks that ended mid-walk are counted in .vanished.

proc_root: another procfs mount or a captured tree. workers: threads walking
/proc (0: the library chooses; at most 4 per usable CPU and 64, whatever is
asked: Snapshot.workers says how many ran). Raises Error when /proc cannot be
read. Releases the GIL during the walk.)";

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
                               "at most that long. Safe to share between threads (takes are serialized).\n"
                               "\n"
                               "With workers and reuse_idle_threads_for left at 0, it reads every task\n"
                               "through the eBPF task walk where it can (root or CAP_BPF + CAP_PERFMON, a\n"
                               "kernel with BTF): Times.precision.source is then \"bpf\" (1 ns totals for\n"
                               "threads too, 1 ns creation instants); elsewhere it walks /proc. After\n"
                               "os.fork() the child's copy opens descriptors and eBPF objects of its own:\n"
                               "parent and child can take at the same time.")
        .def(py::init([](bool threads, bool precise, const std::string& proc_root, unsigned workers,
                         double reuse_idle_threads_for) {
                 auto o = make_options(threads, precise, proc_root, workers, reuse_idle_threads_for);
                 auto p = std::make_unique<py_snapshotter>();
                 p->st = std::make_unique<snapshotter_state>();
                 p->st->s = unwrap(proctimes::snapshotter::open(o), 0);
                 p->options = std::move(o);
                 p->owner = ::getpid();
                 return p;
             }),
             py::arg("threads") = true, py::kw_only(), py::arg("precise") = false, py::arg("proc_root") = "/proc",
             py::arg("workers") = 0u, py::arg("reuse_idle_threads_for") = 0.0)
        .def(
            "take",
            [](py_snapshotter& self) {
                // Lock order: the mutex is only ever waited for without the GIL,
                // so holding it while taking the GIL back cannot deadlock.
                own_after_fork(self);
                snapshotter_state& st = *self.st;  // replaced only under the GIL, never while taken
                std::unique_lock<std::mutex> lock;
                proctimes::result<void> r;
                {
                    py::gil_scoped_release nogil;
                    lock = std::unique_lock(st.mutex);
                    r = st.s.take(st.last);
                }
                unwrap(r, 0);
                return to_py(st.last);
            },
            "A new Snapshot (see proctimes.snapshot). Releases the GIL during the walk.");
}

}  // namespace pyproctimes
