// SPDX-License-Identifier: MIT
// `run --tree --format json` and `--format csv`: every process of the tree
// with stable field names (docs/CLI.md, "run --tree"), then the tree's own
// fields.
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "output/output.hpp"
#include "render.hpp"

namespace proctimes::cli::tree {

using json = nlohmann::ordered_json;
using std::chrono::nanoseconds;

namespace {

json text(std::string_view bytes) { return to_valid_utf8(bytes); }

json texts(const std::vector<std::string>& v) {
    json a = json::array();
    for (const auto& s : v) a.push_back(text(s));
    return a;
}

json ticks_or_null(const std::optional<instant>& t) {
    if (!t) return nullptr;
    const auto ft = filetime_ticks(*t);
    return ft ? json(*ft) : json(nullptr);
}

json time_or_null(const std::optional<instant>& t) { return t ? json(rfc3339_utc(*t)) : json(nullptr); }

json status_fields(json& o, const std::optional<exit_status>& st) {
    o["exit_code"] = st && !st->signaled() ? json(st->code) : json(nullptr);
    o["signal"] = st && st->signaled() ? json(st->signal) : json(nullptr);
    o["core_dumped"] = st && st->core_dumped;
    return o;
}

json program_object(const tree_program& p) {
    json o = json::object();
    o["executable"] = text(p.executable);
    o["argv"] = texts(p.argv);
    o["argv_truncated"] = p.argv_truncated;
    o["started_filetime"] = ticks_or_null(p.started);
    o["started_time"] = rfc3339_utc(p.started);
    return o;
}

json process_object(const tree_process& p, const tree_shape& s, std::size_t i) {
    json o = json::object();
    o["pid"] = p.pid;
    o["parent_pid"] = p.parent_pid;
    o["parent_index"] = p.parent_index;
    o["depth"] = s.depth[i];
    json programs = json::array();
    for (const auto& prog : p.programs) programs.push_back(program_object(prog));
    o["programs"] = std::move(programs);
    o["creation_filetime"] = ticks_or_null(p.created);
    o["creation_time"] = rfc3339_utc(p.created);
    o["creation_resolution_ns"] = p.precision.creation_resolution.count();
    o["exit_filetime"] = ticks_or_null(p.exited);
    o["exit_time"] = time_or_null(p.exited);
    o["exit_source"] = p.exited ? json(std::string(to_string(p.precision.exit_source))) : json(nullptr);
    o["exit_resolution_ns"] = p.exited ? json(p.precision.exit_resolution.count()) : json(nullptr);
    o["wall_ns"] = p.exited ? json(wall_of(p, s.end).count()) : json(nullptr);
    o["kernel_ns"] = p.kernel.count();
    o["user_ns"] = p.user.count();
    o["resolution_ns"] = p.precision.resolution.count();
    o["total_resolution_ns"] = p.precision.total_resolution.count();
    o["cpu_source"] = std::string(to_string(p.precision.source));
    o["final_times"] = p.final_times;
    o["subtree_cpu_ns"] = s.subtree[i].count();
    status_fields(o, p.status);
    o["threads"] = p.threads;
    o["outlived_command"] = p.outlived_command;
    return o;
}

// The tree-level fields, in order (JSON object and CSV row alike).
json tree_object(const tree_report& r, const tree_shape& s) {
    const auto& t = r.tree;
    json o = json::object();
    o["command"] = texts(r.command);
    o["wall_ns"] = r.wall.count();
    status_fields(o, r.exit.status);
    o["source"] = std::string(proctimes::to_string(t.source));
    o["source_note"] = text(t.source_note);
    o["rusage_cpu_ns"] = t.rusage_cpu.count();
    o["orphans_rusage_cpu_ns"] = t.orphans_rusage_cpu.count();
    o["tree_cpu_ns"] = s.total.count();
    o["not_final_cpu_ns"] = s.not_final.count();
    o["unaccounted_cpu_ns"] = t.unaccounted_cpu.count();
    o["unseen_processes"] = t.unseen_processes;
    o["max_rss_kib"] = r.exit.max_rss_kib;
    o["process_count"] = t.processes.size();
    return o;
}

}  // namespace

std::string render_json(const tree_report& r) {
    const auto& t = r.tree;
    const tree_shape s = shape_of(t);
    json o = tree_object(r, s);
    json list = json::array();
    for (std::size_t i = 0; i < t.processes.size(); ++i) list.push_back(process_object(t.processes[i], s, i));
    o["processes"] = std::move(list);
    return o.dump(2, ' ', true) + "\n";
}

namespace {

// A JSON value as one CSV cell: null as empty, strings bare, the rest as JSON.
std::string cell(const json& v) {
    if (v.is_null()) return "";
    if (v.is_string()) return csv_field(v.get<std::string>());
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_array()) return csv_field(v.dump(-1, ' ', true));
    return v.dump();
}

void append_rows(std::string& out, const std::vector<json>& rows, const std::vector<std::string>& columns) {
    for (std::size_t c = 0; c < columns.size(); ++c) out += (c ? "," : "") + columns[c];
    out += '\n';
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < columns.size(); ++c) {
            if (c) out += ',';
            const auto it = row.find(columns[c]);
            if (it != row.end()) out += cell(*it);
        }
        out += '\n';
    }
}

}  // namespace

std::string render_csv(const tree_report& r) {
    const auto& t = r.tree;
    const tree_shape s = shape_of(t);
    // The process columns: the JSON fields, with the program the process ran
    // last flattened (`programs` is their number; JSON has them all).
    static const std::vector<std::string> process_columns = {"pid",
                                                             "parent_pid",
                                                             "parent_index",
                                                             "depth",
                                                             "programs",
                                                             "executable",
                                                             "argv",
                                                             "argv_truncated",
                                                             "started_filetime",
                                                             "started_time",
                                                             "creation_filetime",
                                                             "creation_time",
                                                             "creation_resolution_ns",
                                                             "exit_filetime",
                                                             "exit_time",
                                                             "exit_source",
                                                             "exit_resolution_ns",
                                                             "wall_ns",
                                                             "kernel_ns",
                                                             "user_ns",
                                                             "resolution_ns",
                                                             "total_resolution_ns",
                                                             "cpu_source",
                                                             "final_times",
                                                             "subtree_cpu_ns",
                                                             "exit_code",
                                                             "signal",
                                                             "core_dumped",
                                                             "threads",
                                                             "outlived_command"};
    std::vector<json> rows;
    rows.reserve(t.processes.size());
    for (std::size_t i = 0; i < t.processes.size(); ++i) {
        json o = process_object(t.processes[i], s, i);
        const json programs = std::move(o["programs"]);
        o["programs"] = programs.size();
        if (!programs.empty())
            for (const auto& [k, v] : programs.back().items()) o[k] = v;
        rows.push_back(std::move(o));
    }
    std::string out;
    append_rows(out, rows, process_columns);
    out += '\n';
    const json top = tree_object(r, s);
    std::vector<std::string> tree_columns;
    for (const auto& [k, v] : top.items()) tree_columns.push_back(k);
    append_rows(out, {top}, tree_columns);
    return out;
}

}  // namespace proctimes::cli::tree
