// SPDX-License-Identifier: MIT
// `ps --interval --group-by name|user|cgroup`: a frame's rows summed per
// group — live processes, processes that ended, and the children they reaped
// as the ledger counts them (once) — and, per cgroup, the cgroup's own counter
// over the same interval (exact, exited tasks included) beside the sum of the
// processes in it and below it.
#include <algorithm>
#include <chrono>
#include <map>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "output/writers.hpp"
#include "proctimes/cgroup.hpp"
#include "ps/internal.hpp"

namespace proctimes::cli::ps_detail {

namespace {

using std::chrono::nanoseconds;

// `path` is `root` or below it.
bool below(const std::string& path, const std::string& root) {
    if (root == "/") return true;
    return path.compare(0, root.size(), root) == 0 && (path.size() == root.size() || path[root.size()] == '/');
}

}  // namespace

cgroup_readings read_cgroups(const snapshot& s, const std::string& proc_root) {
    cgroup_readings r;
    for (const auto& p : s.processes) {
        auto cg = process_cgroup(p.pid(), proc_root);
        if (!cg) continue;  // gone since the walk, or hidden: its row goes to "?"
        if (!r.usage.contains(*cg)) {
            auto u = cgroup_cpu_usage(*cg);
            if (u) r.usage.emplace(*cg, *u);
        }
        r.cgroup_of.emplace(p.pid(), std::move(*cg));
    }
    return r;
}

std::vector<group_row> group_rows(const std::vector<task_record>& records, const cpu_ledger* l, const ps_options& opts,
                                  const cgroup_readings* before, const cgroup_readings* after) {
    std::unordered_map<pid_t, nanoseconds> counted;
    if (l)
        for (const auto& c : l->children) counted[c.pid] = c.counted;
    std::map<std::string, group_row> groups;
    for (const auto& r : records) {
        // Ended in the interval (the ledger's records); a zombie is alive here.
        const bool ended =
            r.used && (r.used->basis == interval_basis::ended || r.used->basis == interval_basis::ended_earlier);
        std::string key;
        if (opts.group_by == ps_grouping::user) {
            key = r.ps ? r.ps->user_name : "?";
        } else if (opts.group_by == ps_grouping::cgroup) {
            // A process that ended: the cgroup `before` saw it in, if any.
            const std::string* live = nullptr;
            if (after && !ended)
                if (auto it = after->cgroup_of.find(r.pid); it != after->cgroup_of.end()) live = &it->second;
            if (live) {
                key = *live;
            } else if (before && before->cgroup_of.contains(r.pid)) {
                key = before->cgroup_of.at(r.pid);
            } else {
                key = "?";
            }
        } else {
            key = r.name;
        }
        auto& g = groups[key];
        g.key = key;
        if (ended) {
            ++g.ended;
        } else {
            ++g.processes;
        }
        if (r.used) {
            g.kernel += r.used->kernel;
            g.user += r.used->user;
        }
        if (!ended)
            if (auto it = counted.find(r.pid); it != counted.end()) g.children += it->second;
    }
    std::vector<group_row> rows;
    rows.reserve(groups.size());
    for (auto& [k, g] : groups) rows.push_back(g);
    if (opts.group_by == ps_grouping::cgroup && before && after) {
        for (auto& g : rows) {
            const auto b = before->usage.find(g.key), a = after->usage.find(g.key);
            if (b != before->usage.end() && a != after->usage.end()) g.cgroup_usage = a->second - b->second;
            for (const auto& o : rows)
                if (o.key != "?" && below(o.key, g.key)) g.subtree += o.cpu();
        }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const group_row& a, const group_row& b) { return a.cpu() > b.cpu(); });
    if (opts.top && rows.size() > *opts.top) rows.resize(*opts.top);
    return rows;
}

void write_groups(std::ostream& out, const std::vector<group_row>& rows, const cpu_ledger* l, const ps_options& opts) {
    const nanoseconds interval = l ? l->interval : nanoseconds{0};
    const auto pct = [&](nanoseconds v) {
        return interval.count() > 0
                   ? 100.0 * std::chrono::duration<double>(v).count() / std::chrono::duration<double>(interval).count()
                   : 0.0;
    };
    const bool cg = opts.group_by == ps_grouping::cgroup;
    const auto fmt_opt = [](const std::optional<nanoseconds>& v) { return v ? std::to_string(v->count()) : ""; };
    switch (opts.output.format) {
        case output_format::json: {
            nlohmann::ordered_json arr = nlohmann::ordered_json::array();
            for (const auto& g : rows) {
                nlohmann::ordered_json j;
                j["record"] = "group";
                j["group_by"] = std::string(to_string(opts.group_by));
                j["group"] = to_valid_utf8(g.key);
                j["processes"] = g.processes;
                j["ended"] = g.ended;
                j["interval_ns"] = interval.count();
                j["interval_kernel_ns"] = g.kernel.count();
                j["interval_user_ns"] = g.user.count();
                j["interval_children_ns"] = g.children.count();
                j["cpu_ns"] = g.cpu().count();
                j["cpu_percent"] = pct(g.cpu());
                if (cg) {
                    j["cgroup_usage_ns"] = g.cgroup_usage ? nlohmann::ordered_json(g.cgroup_usage->count()) : nullptr;
                    j["subtree_cpu_ns"] = g.subtree.count();
                    j["cgroup_minus_subtree_ns"] =
                        g.cgroup_usage ? nlohmann::ordered_json((*g.cgroup_usage - g.subtree).count()) : nullptr;
                }
                arr.push_back(std::move(j));
            }
            out << arr.dump(2, ' ', true) << '\n';
            return;
        }
        case output_format::csv: {
            out << "record,group_by,group,processes,ended,interval_ns,interval_kernel_ns,interval_user_ns,"
                   "interval_children_ns,cpu_ns,cpu_percent"
                << (cg ? ",cgroup_usage_ns,subtree_cpu_ns,cgroup_minus_subtree_ns" : "") << '\n';
            for (const auto& g : rows) {
                out << fmt::format("group,{},{},{},{},{},{},{},{},{},{:.3f}", to_string(opts.group_by),
                                   csv_field(to_valid_utf8(g.key)), g.processes, g.ended, interval.count(),
                                   g.kernel.count(), g.user.count(), g.children.count(), g.cpu().count(), pct(g.cpu()));
                if (cg)
                    out << fmt::format(",{},{},{}", fmt_opt(g.cgroup_usage), g.subtree.count(),
                                       g.cgroup_usage ? std::to_string((*g.cgroup_usage - g.subtree).count()) : "");
                out << '\n';
            }
            return;
        }
        case output_format::table:
            break;
    }
    // Cells first: each column as wide as its widest cell, right-aligned,
    // the group's name last and unpadded.
    std::vector<std::vector<std::string>> cells;
    cells.push_back({"PROCS", "ENDED", "CPU%", "KERNEL", "USER", "CHILD"});
    if (cg) {
        cells.back().emplace_back("CGROUP");
        cells.back().emplace_back("OTHER");
    }
    for (const auto& g : rows) {
        cells.push_back({std::to_string(g.processes), std::to_string(g.ended), fmt::format("{:.1f}", pct(g.cpu())),
                         human_duration(g.kernel), human_duration(g.user), human_duration(g.children)});
        if (cg) {
            cells.back().push_back(g.cgroup_usage ? human_duration(*g.cgroup_usage) : "-");
            // What the counter holds beyond the rows (negative: the rows hold more).
            cells.back().push_back(!g.cgroup_usage                ? "-"
                                   : *g.cgroup_usage >= g.subtree ? human_duration(*g.cgroup_usage - g.subtree)
                                                                  : "-" + human_duration(g.subtree - *g.cgroup_usage));
        }
    }
    std::vector<std::size_t> width(cells.front().size(), 0);
    for (const auto& row : cells)
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));
    for (std::size_t r = 0; r < cells.size(); ++r) {
        for (std::size_t i = 0; i < cells[r].size(); ++i)
            out << (i ? " " : "") << std::string(width[i] - display_width(cells[r][i]), ' ') << cells[r][i];
        out << ' '
            << (r == 0 ? (cg                                   ? "CGROUP"
                          : opts.group_by == ps_grouping::user ? "OWNER"
                                                               : "NAME")
                       : escape_for_table(rows[r - 1].key))
            << '\n';
    }
}

}  // namespace proctimes::cli::ps_detail

namespace proctimes::cli {

std::string_view to_string(ps_grouping g) noexcept { return word_of(g, ""); }

}  // namespace proctimes::cli
