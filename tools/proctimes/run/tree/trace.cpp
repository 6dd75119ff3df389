// SPDX-License-Identifier: MIT
// `run --tree --trace FILE`: the tree in Chrome's Trace Event Format (the
// JSON object form: {"traceEvents": [...], "displayTimeUnit": "ms"}), which
// Perfetto UI and chrome://tracing open. Each process is a track of its own
// (pid = tid = its pid), named after its last program and sorted so that a
// parent's track comes right before its children's; on it, one complete
// ("X") event spans the process's life and one spans each program it ran,
// and an instant ("i") marks each exec. Times are µs from the earliest
// instant of the tree, to the ns (three decimals).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "output/output.hpp"
#include "render.hpp"

namespace proctimes::cli::tree {

using json = nlohmann::ordered_json;
using std::chrono::nanoseconds;

namespace {

json argv_of(const tree_program* p) {
    json a = json::array();
    if (p)
        for (const auto& s : p->argv) a.push_back(to_valid_utf8(s));
    return a;
}

// µs from the origin, to the ns.
double micros(nanoseconds d) { return static_cast<double>(d.count()) / 1000.0; }

json event(std::string_view name, std::string_view cat, std::string_view ph, pid_t pid) {
    json e = json::object();
    e["name"] = to_valid_utf8(name);
    if (!cat.empty()) e["cat"] = std::string(cat);
    e["ph"] = std::string(ph);
    e["pid"] = pid;
    e["tid"] = pid;
    return e;
}

json process_args(const tree_process& p, const tree_shape& s, std::size_t i) {
    json a = json::object();
    a["pid"] = p.pid;
    a["parent_pid"] = p.parent_pid;
    a["argv"] = argv_of(last_program(p));
    a["user_ns"] = p.user.count();
    a["kernel_ns"] = p.kernel.count();
    a["subtree_cpu_ns"] = s.subtree[i].count();
    a["final_times"] = p.final_times;
    a["exit"] = exit_text(p);
    a["exited"] = p.exited.has_value();
    a["threads"] = p.threads;
    if (p.outlived_command) a["outlived_command"] = true;
    return a;
}

}  // namespace

std::string render_trace(const tree_report& r) {
    const auto& procs = r.tree.processes;
    const tree_shape s = shape_of(r.tree);
    json events = json::array();
    const auto at = [&s](instant t) { return std::max(t - s.origin, nanoseconds{0}); };
    for (std::size_t k = 0; k < s.preorder.size(); ++k) {
        const std::size_t i = s.preorder[k];
        const auto& p = procs[i];
        const std::string name = program_name(last_program(p));

        json meta = event("process_name", "", "M", p.pid);
        meta["args"] = {{"name", to_valid_utf8(name)}};
        events.push_back(std::move(meta));
        json sort = event("process_sort_index", "", "M", p.pid);
        sort["args"] = {{"sort_index", k}};
        events.push_back(std::move(sort));
        json thread = event("thread_name", "", "M", p.pid);
        thread["args"] = {{"name", to_valid_utf8(name)}};
        events.push_back(std::move(thread));

        const nanoseconds begin = at(p.created);
        const nanoseconds end = std::max(at(p.exited ? *p.exited : s.end), begin);
        json life = event(name, "process", "X", p.pid);
        life["ts"] = micros(begin);
        life["dur"] = micros(end - begin);
        life["args"] = process_args(p, s, i);
        events.push_back(std::move(life));

        // Each program from its start (fork or exec) to the next exec or the
        // end, kept inside the process's own event.
        for (std::size_t j = 0; j < p.programs.size(); ++j) {
            const auto& prog = p.programs[j];
            const nanoseconds from = std::clamp(at(prog.started), begin, end);
            const nanoseconds to =
                j + 1 < p.programs.size() ? std::clamp(at(p.programs[j + 1].started), from, end) : end;
            const std::string pname = program_name(&prog);
            json x = event(pname, "program", "X", p.pid);
            x["ts"] = micros(from);
            x["dur"] = micros(to - from);
            x["args"] = {{"executable", to_valid_utf8(prog.executable)},
                         {"argv", argv_of(&prog)},
                         {"argv_truncated", prog.argv_truncated}};
            events.push_back(std::move(x));
            if (j == 0) continue;  // the first program is what the process was forked as
            json exec = event("exec " + pname, "exec", "i", p.pid);
            exec["ts"] = micros(from);
            exec["s"] = "t";
            exec["args"] = {{"executable", to_valid_utf8(prog.executable)}};
            events.push_back(std::move(exec));
        }
    }
    json doc = json::object();
    doc["traceEvents"] = std::move(events);
    doc["displayTimeUnit"] = "ms";
    json command = json::array();
    for (const auto& a : r.command) command.push_back(to_valid_utf8(a));
    doc["otherData"] = {{"command", command.dump(-1, ' ', true)},
                        {"source", std::string(proctimes::to_string(r.tree.source))},
                        {"source_note", to_valid_utf8(r.tree.source_note)},
                        {"origin_time", procs.empty() ? std::string() : rfc3339_utc(s.origin)}};
    return doc.dump(-1, ' ', true) + "\n";
}

}  // namespace proctimes::cli::tree
