// SPDX-License-Identifier: MIT
// proctimes.run_tree: proctimes::run_tree, and its result as the named
// tuples of proctimes._types (TreeRun, ProcessTree, TreeProcess, TreeProgram).
#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "errors.hpp"
#include "spawn_options.hpp"

namespace pyproctimes {

namespace {

using std::chrono::duration;
using std::chrono::nanoseconds;

double seconds(nanoseconds d) { return duration<double>(d).count(); }
std::int64_t ns_since_epoch(proctimes::instant t) { return t.time_since_epoch().count(); }

py::object tree_types(const char* name) {
    // Looked up once per call of run_tree, not per process.
    return py::module_::import("proctimes._types").attr(name);
}

struct tree_classes {
    py::object program, process, tree, run;
};

py::object to_py(const tree_classes& c, const proctimes::tree_program& p) {
    py::list argv;
    for (const auto& a : p.argv) argv.append(to_str(a));
    return make_named(c.program, py::make_tuple(to_str(p.executable), argv, p.argv_truncated, to_datetime(p.started),
                                                ns_since_epoch(p.started)));
}

py::object to_py(const tree_classes& c, const proctimes::tree_process& p) {
    py::list programs;
    for (const auto& prog : p.programs) programs.append(to_py(c, prog));
    py::object exited = p.exited ? to_datetime(*p.exited) : py::object(py::none());
    py::object exited_ns = p.exited ? py::object(py::int_(ns_since_epoch(*p.exited))) : py::object(py::none());
    py::object status = p.status ? pyproctimes::to_py(*p.status) : py::object(py::none());
    return make_named(
        c.process,
        py::make_tuple(p.pid, p.parent_pid, p.parent_index, programs, to_datetime(p.created), ns_since_epoch(p.created),
                       exited, exited_ns, seconds(p.kernel), seconds(p.user), p.kernel.count(), p.user.count(),
                       pyproctimes::to_py(p.precision), p.final_times, status, p.threads, p.outlived_command));
}

py::object to_py(const tree_classes& c, const proctimes::tree_run& r) {
    py::list processes;
    for (const auto& p : r.tree.processes) processes.append(to_py(c, p));
    const auto& t = r.tree;
    py::object tree = make_named(
        c.tree, py::make_tuple(std::string(to_string(t.source)), t.source_note, processes, t.unseen_processes,
                               t.rusage_cpu.count(), t.orphans_rusage_cpu.count(), t.unaccounted_cpu.count()));
    return make_named(c.run, py::make_tuple(pyproctimes::to_py(r.command), tree));
}

proctimes::tree_source to_source(const py::object& prefer) {
    if (prefer.is_none()) return proctimes::tree_source::none;
    const auto s = prefer.cast<std::string>();
    if (s == "ptrace") return proctimes::tree_source::ptrace;
    if (s == "bpf") return proctimes::tree_source::bpf;
    throw py::value_error("prefer must be None, 'ptrace' or 'bpf'");
}

py::object run_tree(const py::object& args, const py::object& cwd, const py::object& env, const py::object& program,
                    const py::object& stdin_, const py::object& stdout_, const py::object& stderr_,
                    bool new_process_group, bool default_signals, std::size_t max_argv_bytes,
                    const py::object& prefer) {
    const proctimes::spawn_options o =
        to_spawn_options(args, cwd, env, program, stdin_, stdout_, stderr_, new_process_group, default_signals);
    proctimes::tree_options t;
    t.prefer = to_source(prefer);
    t.max_argv_bytes = max_argv_bytes;
    const tree_classes classes{tree_types("TreeProgram"), tree_types("TreeProcess"), tree_types("ProcessTree"),
                               tree_types("TreeRun")};
    proctimes::result<proctimes::tree_run> r = proctimes::errc::invalid_handle;
    {
        py::gil_scoped_release nogil;
        r = proctimes::run_tree(o, t);
    }
    return to_py(classes, unwrap(std::move(r), 0));
}

}  // namespace

void bind_tree(py::module_& m) {
    m.def("run_tree", &run_tree, py::arg("args"), py::kw_only(), py::arg("cwd") = py::none(),
          py::arg("env") = py::none(), py::arg("program") = py::none(), py::arg("stdin") = py::none(),
          py::arg("stdout") = py::none(), py::arg("stderr") = py::none(), py::arg("new_process_group") = false,
          py::arg("default_signals") = false, py::arg("max_argv_bytes") = 4096, py::arg("prefer") = py::none(),
          R"(Runs a command as spawn() does, records every process it starts at any
depth, waits for it, and returns TreeRun(command, tree): command is what
Child.wait() gives (a ChildExit); tree is a ProcessTree: source ("ptrace", or
"none" when ptrace is refused, with source_note saying why), processes (the
command first, then every descendant in creation order, each a TreeProcess:
pid, parent_index, programs with their argv, created/exited, its own final
kernel/user CPU, status, threads), and rusage_cpu_ns / unaccounted_cpu_ns,
which tell whether the tree's CPU adds up to the command's wait rusage.

The recording ends when the command has ended: descendants still running then
are let go, with outlived_command True. The arguments are spawn()'s, plus
max_argv_bytes (the bound on each program's recorded arguments; ValueError-like
proctimes.Error for 0) and prefer (None: bpf as root, else ptrace; "ptrace"
or "bpf"; a source that cannot be used falls back to the next, and
source_note says why). Blocks until the command ends, with the
GIL released; Ctrl-C reaches the command when it runs in the terminal's
process group, and run_tree returns once it has ended. See docs/TREE.md.)");
}

}  // namespace pyproctimes
