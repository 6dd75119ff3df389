// SPDX-License-Identifier: MIT
// `run --tree` for people: what the command cost and how much of it the tree
// accounts for, its busiest processes, and a summary by program.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "output/output.hpp"
#include "render.hpp"

namespace proctimes::cli::tree {

using std::chrono::nanoseconds;

namespace {

constexpr std::size_t argv_columns = 60;

// Rows of cells, each column as wide as its widest cell; `right` says which
// columns are aligned right. The last column is not padded.
std::string aligned(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
    std::vector<std::size_t> width(right.size(), 0);
    for (const auto& row : rows)
        for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
            width[c] = std::max(width[c], display_width(row[c]));
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
            const std::size_t pad = width[c] - display_width(row[c]);
            if (c) line += "  ";
            if (right[c]) line.append(pad, ' ');
            line += row[c];
            if (!right[c] && c + 1 < row.size()) line.append(pad, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + '\n';
    }
    return out;
}

std::string percent_of(nanoseconds part, nanoseconds whole) {
    if (whole.count() <= 0) return "-";
    return fmt::format("{:.1f} %", 100.0 * static_cast<double>(part.count()) / static_cast<double>(whole.count()));
}

std::string command_line(const std::vector<std::string>& command) {
    tree_program p;
    p.argv = command;
    return argv_for_table(p, 200);
}

// What the unaccounted CPU says: the rusage holds each process's CPU to the
// µs, so a difference within 1 µs a process is rounding, not a gap.
std::string unaccounted_note(const process_tree& t) {
    const auto rounding = std::chrono::microseconds{1} * static_cast<std::int64_t>(t.processes.size() + 1);
    if (t.unaccounted_cpu <= rounding && t.unaccounted_cpu >= -rounding)
        return "rusage - final own CPU: within the rusage's 1 µs a process";
    if (t.unaccounted_cpu.count() < 0) return "rusage - final own CPU: the tree saw more (orphans nobody waited for)";
    return "rusage - final own CPU: not attributed to a recorded process";
}

void header(std::string& out, const tree_report& r, const tree_shape& s) {
    const auto& t = r.tree;
    const auto line = [&out](std::string_view key, const std::string& value, std::string_view note = {}) {
        std::string l = fmt::format("{:<16} {}", key, value);
        if (!note.empty())
            l += fmt::format("{:<{}}  ({})", "", display_width(l) < 36 ? 36 - display_width(l) : 0, note);
        out += l + '\n';
    };
    line("command", command_line(r.command));
    std::string status = "unknown";
    if (r.exit.status)
        status = r.exit.status->signaled() ? fmt::format("killed by signal {} (exit status {})", r.exit.status->signal,
                                                         r.exit.status->shell_code())
                                           : std::to_string(r.exit.status->code);
    line("exit status", status);
    line("wall", human_duration(r.wall), "steady clock around the recording");
    line("cpu (rusage)", human_duration(t.rusage_cpu), "the command and the descendants it waited for");
    line("cpu (tree)", human_duration(s.total),
         fmt::format("own CPU summed over {} processes{}", t.processes.size(),
                     s.not_final.count() > 0 ? fmt::format("; {} not final", human_duration(s.not_final)) : ""));
    line("unaccounted",
         fmt::format("{} ({})", human_duration(t.unaccounted_cpu), percent_of(t.unaccounted_cpu, t.rusage_cpu)),
         unaccounted_note(t));
    if (t.unseen_processes > 0)
        line("unseen", fmt::format("{} processes", t.unseen_processes), "known to exist, not recorded");
    line("source", std::string(proctimes::to_string(t.source)), escape_for_table(t.source_note));
}

void busiest(std::string& out, const tree_report& r, const tree_shape& s, std::size_t top) {
    const auto& procs = r.tree.processes;
    std::vector<std::size_t> order(procs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&s](std::size_t a, std::size_t b) { return s.own[a] > s.own[b]; });
    const std::size_t shown = std::min(top, order.size());
    out += fmt::format("\nbusiest processes by own CPU ({} of {}):\n", shown, procs.size());
    std::vector<std::vector<std::string>> rows{{"PID", "PPID", "PROGRAM", "USER", "KERNEL", "WALL", "EXIT", "ARGS"}};
    bool marked = false;
    for (std::size_t k = 0; k < shown; ++k) {
        const auto& p = procs[order[k]];
        const tree_program* prog = last_program(p);
        const std::string mark = p.final_times ? "" : " *";
        marked = marked || !p.final_times;
        rows.push_back({std::to_string(p.pid), std::to_string(p.parent_pid), escape_for_table(program_name(prog)),
                        human_duration(p.user) + mark, human_duration(p.kernel) + mark,
                        human_duration(wall_of(p, s.end)) + (p.exited ? "" : " +"), exit_text(p),
                        prog ? argv_for_table(*prog, argv_columns) : std::string()});
    }
    out += aligned(rows, {true, true, false, true, true, true, true, false});
    if (marked) out += "* not final: the last values read before the process was left behind\n";
    if (std::any_of(procs.begin(), procs.end(), [](const tree_process& p) { return !p.exited; }))
        out += "+ not seen ending: wall up to the end of the recording\n";
}

void by_program(std::string& out, const tree_report& r, const tree_shape& s, std::size_t top) {
    const auto groups = group_by_program(r.tree, s);
    const std::size_t shown = std::min(top, groups.size());
    out += fmt::format("\nby program ({} of {}):\n", shown, groups.size());
    std::vector<std::vector<std::string>> rows{{"PROGRAM", "COUNT", "CPU", "WALL (SUM)", "SHARE"}};
    for (std::size_t k = 0; k < shown; ++k) {
        const auto& g = groups[k];
        rows.push_back({escape_for_table(g.name), std::to_string(g.count),
                        human_duration(g.cpu) + (g.not_final ? " *" : ""), human_duration(g.wall),
                        percent_of(g.cpu, s.total)});
    }
    out += aligned(rows, {false, true, true, true, true});
    if (shown < groups.size()) {
        nanoseconds rest{};
        std::size_t count = 0;
        for (std::size_t k = shown; k < groups.size(); ++k) rest += groups[k].cpu, count += groups[k].count;
        out += fmt::format("... {} more programs: {} processes, {} CPU\n", groups.size() - shown, count,
                           human_duration(rest));
    }
}

}  // namespace

std::string render_table(const tree_report& r, const table_options& opts) {
    const tree_shape s = shape_of(r.tree);
    std::string out;
    header(out, r, s);
    if (r.tree.processes.empty()) return out;
    busiest(out, r, s, opts.top);
    by_program(out, r, s, opts.top);
    return out;
}

}  // namespace proctimes::cli::tree
