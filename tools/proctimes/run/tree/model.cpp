// SPDX-License-Identifier: MIT
// What every renderer of `run --tree` derives from the recorded tree: its
// shape (parents, depths, subtree CPU), names, exits and groups.
#include "model.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "output/output.hpp"
#include "system.hpp"

namespace proctimes::cli::tree {

using std::chrono::nanoseconds;

tree_shape shape_of(const process_tree& t) {
    tree_shape s;
    const std::size_t n = t.processes.size();
    s.parent.resize(n, 0);
    s.children.resize(n);
    s.depth.resize(n, 0);
    s.own.resize(n);
    s.subtree.resize(n);
    if (n == 0) return s;
    s.origin = t.processes[0].created;
    s.end = s.origin;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& p = t.processes[i];
        const auto pi = p.parent_index;
        s.parent[i] = (i > 0 && pi >= 0 && static_cast<std::size_t>(pi) < i) ? static_cast<std::size_t>(pi) : 0;
        if (i > 0) {
            s.children[s.parent[i]].push_back(i);
            s.depth[i] = s.depth[s.parent[i]] + 1;
            s.max_depth = std::max(s.max_depth, s.depth[i]);
        }
        s.own[i] = std::max(p.cpu(), nanoseconds{0});
        s.total += s.own[i];
        if (!p.final_times) s.not_final += s.own[i];
        s.origin = std::min(s.origin, p.created);
        s.end = std::max(s.end, p.created);
        if (p.exited) s.end = std::max(s.end, *p.exited);
        for (const auto& prog : p.programs) {
            s.origin = std::min(s.origin, prog.started);
            s.end = std::max(s.end, prog.started);
        }
    }
    // Parents come before their children: one backward pass sums subtrees.
    for (std::size_t i = n; i-- > 0;) {
        s.subtree[i] += s.own[i];
        if (i > 0) s.subtree[s.parent[i]] += s.subtree[i];
    }
    // Pre-order without recursion (a tree can be thousands deep).
    s.preorder.reserve(n);
    std::vector<std::size_t> stack{0};
    while (!stack.empty()) {
        const std::size_t i = stack.back();
        stack.pop_back();
        s.preorder.push_back(i);
        const auto& c = s.children[i];
        stack.insert(stack.end(), c.rbegin(), c.rend());
    }
    return s;
}

const tree_program* last_program(const tree_process& p) noexcept {
    return p.programs.empty() ? nullptr : &p.programs.back();
}

std::string program_name(const tree_program* p) {
    if (p == nullptr) return "?";
    const auto base = [](std::string_view path) {
        while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
        const auto slash = path.rfind('/');
        return std::string(slash == std::string_view::npos || path.size() == 1 ? path : path.substr(slash + 1));
    };
    if (!p->executable.empty()) return base(p->executable);
    if (!p->argv.empty() && !p->argv.front().empty()) return base(p->argv.front());
    return "?";
}

nanoseconds wall_of(const tree_process& p, instant end) noexcept {
    const instant stop = p.exited ? *p.exited : end;
    return std::max(stop - p.created, nanoseconds{0});
}

std::string exit_text(const tree_process& p) {
    if (!p.status) return p.exited ? "?" : "-";
    const auto& st = *p.status;
    if (!st.signaled()) return std::to_string(st.code);
    std::string s = sys::signal_name(st.signal);
    if (st.core_dumped) s += " (core)";
    return s;
}

std::string argv_for_table(const tree_program& p, std::size_t max_columns) {
    std::string line;
    for (const auto& a : p.argv) {
        if (!line.empty()) line += ' ';
        line += escape_for_table(shell_quote(a));  // ASCII: one column per byte
        if (line.size() > max_columns) break;
    }
    const bool cut = line.size() > max_columns || p.argv_truncated;
    if (!cut) return line;
    const std::size_t keep = max_columns > 3 ? max_columns - 3 : 0;
    if (line.size() > keep) line.resize(keep);
    return line + "...";
}

std::vector<program_group> group_by_program(const process_tree& t, const tree_shape& s) {
    std::map<std::string, program_group> by_name;
    for (std::size_t i = 0; i < t.processes.size(); ++i) {
        const auto& p = t.processes[i];
        const std::string name = program_name(last_program(p));
        auto& g = by_name[name];
        g.name = name;
        ++g.count;
        g.cpu += s.own[i];
        g.wall += wall_of(p, s.end);
        g.not_final = g.not_final || !p.final_times;
    }
    std::vector<program_group> groups;
    groups.reserve(by_name.size());
    for (auto& [name, g] : by_name) groups.push_back(std::move(g));
    std::stable_sort(groups.begin(), groups.end(),
                     [](const program_group& a, const program_group& b) { return a.cpu > b.cpu; });
    return groups;
}

}  // namespace proctimes::cli::tree
