// SPDX-License-Identifier: MIT
// `run --tree --svg FILE`: a self-contained SVG icicle of the tree. The
// command is the top box; each process's box lies under its parent's, from
// the left in creation order, as wide as the CPU of the process and its
// descendants; the process's own part is the darker right end of its box
// (where no child lies below). Every box has a <title> (pid, argv, CPU, wall,
// exit) that browsers show on hover, and a label where it is wide enough.
// Colours are a hash of the program's name, so one program has one colour.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "output/output.hpp"
#include "render.hpp"

namespace proctimes::cli::tree {

using std::chrono::nanoseconds;

std::string xml_text(std::string_view bytes) {
    const std::string valid = to_valid_utf8(bytes);
    std::string out;
    out.reserve(valid.size() + 16);
    for (std::size_t i = 0; i < valid.size();) {
        const auto c = static_cast<unsigned char>(valid[i]);
        // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters.
        if (c == 0xEF && i + 2 < valid.size() && static_cast<unsigned char>(valid[i + 1]) == 0xBF &&
            (static_cast<unsigned char>(valid[i + 2]) & 0xFE) == 0xBE) {
            out += fmt::format("\\u{:04X}", 0xFFFE + (static_cast<unsigned char>(valid[i + 2]) - 0xBE));
            i += 3;
            continue;
        }
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            case '\n':
                out += "&#10;";
                break;  // kept by attribute normalisation, shown by <title>
            case '\t':
                out += "&#9;";
                break;
            default:
                if (c < 0x20)
                    out += fmt::format("\\x{:02x}", c);
                else
                    out += static_cast<char>(c);
        }
        ++i;
    }
    return out;
}

namespace {

constexpr double width_px = 1200;
constexpr double margin = 10;
constexpr double row = 20;
constexpr double header_rows = 3;
constexpr double char_px = 7.3;  // 12 px monospace

// FNV-1a of the name: a hue, so a program keeps its colour from run to run.
std::uint32_t name_hash(std::string_view s) {
    std::uint32_t h = 2166136261u;
    for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    return h;
}

// An HSL colour (h in degrees, s and l in [0, 1]) as #rrggbb.
std::string rgb(double h, double s, double l) {
    const double c = (1 - std::abs(2 * l - 1)) * s;
    const double hp = h / 60.0;
    const double x = c * (1 - std::abs(std::fmod(hp, 2.0) - 1));
    double r = 0, g = 0, b = 0;
    if (hp < 1)
        r = c, g = x;
    else if (hp < 2)
        r = x, g = c;
    else if (hp < 3)
        g = c, b = x;
    else if (hp < 4)
        g = x, b = c;
    else if (hp < 5)
        r = x, b = c;
    else
        r = c, b = x;
    const double m = l - c / 2;
    const auto byte = [m](double v) { return static_cast<int>(std::lround(std::clamp(v + m, 0.0, 1.0) * 255)); };
    return fmt::format("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b));
}

std::string argv_line(const tree_program* p) {
    if (p == nullptr) return {};
    std::string s;
    for (const auto& a : p->argv) s += (s.empty() ? "" : " ") + a;
    if (p->argv_truncated) s += " ...";
    return s;
}

std::string title_of(const tree_process& p, const tree_shape& s, std::size_t i) {
    const tree_program* prog = last_program(p);
    std::string t = fmt::format("pid {} (parent {})\n{}\n", p.pid, p.parent_pid, argv_line(prog));
    t += fmt::format("own CPU {} (user {}, kernel {}){}\n", human_duration(s.own[i]), human_duration(p.user),
                     human_duration(p.kernel), p.final_times ? "" : ", not final");
    t += fmt::format("with descendants {}\n", human_duration(s.subtree[i]));
    t += fmt::format("wall {}{}\nexit {}", human_duration(wall_of(p, s.end)), p.exited ? "" : " (not seen ending)",
                     exit_text(p));
    return t;
}

// The label of a box `w` px wide: the program's name, then its CPU when both
// fit; cut to the width; empty when nothing readable fits.
std::string label_of(const std::string& name, nanoseconds cpu, double w) {
    const auto fits = static_cast<std::size_t>(std::max(0.0, (w - 6) / char_px));
    if (fits < 3) return {};
    std::string full = escape_for_table(name) + " " + human_duration(cpu);
    // human_duration may hold "µ": two bytes, one column.
    if (display_width(full) <= fits) return full;
    std::string shortname = escape_for_table(name);
    if (shortname.size() <= fits) return shortname;
    shortname.resize(fits - 2);
    return shortname + "..";
}

}  // namespace

std::string render_svg(const tree_report& r) {
    const auto& procs = r.tree.processes;
    const tree_shape s = shape_of(r.tree);
    const std::size_t n = procs.size();
    // Weights: CPU; when the tree recorded none, one per process instead.
    const bool by_count = s.total.count() == 0;
    std::vector<double> own(n), sub(n);
    for (std::size_t i = 0; i < n; ++i) own[i] = by_count ? 1.0 : static_cast<double>(s.own[i].count());
    for (std::size_t i = n; i-- > 0;) {
        sub[i] += own[i];
        if (i > 0) sub[s.parent[i]] += sub[i];
    }
    const double scale = n > 0 && sub[0] > 0 ? width_px / sub[0] : 0;
    const double height = margin * 2 + row * (header_rows + static_cast<double>(n > 0 ? s.max_depth + 1 : 0));

    std::string out;
    out += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
    out += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} "
        "{1:.0f}\" font-family=\"monospace\" font-size=\"12\" data-width=\"{2:.0f}\" data-total-cpu-ns=\"{3}\">\n",
        width_px + 2 * margin, height, width_px, s.total.count());
    out += "<style>text { pointer-events: none; } g.process:hover > rect.box { stroke: #000; }</style>\n";
    out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    std::string command;
    for (const auto& a : r.command) command += (command.empty() ? "" : " ") + a;
    const auto header_line = [&](int k, const std::string& t) {
        out += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n", margin, margin + row * k + 14, xml_text(t));
    };
    header_line(0, command);
    header_line(1, fmt::format("wall {}, CPU (rusage) {}, tree CPU {} in {} processes, unaccounted {}",
                               human_duration(r.wall), human_duration(r.tree.rusage_cpu), human_duration(s.total), n,
                               human_duration(r.tree.unaccounted_cpu)));
    header_line(2, fmt::format("source {}{}; width: CPU of a process and its descendants{}",
                               proctimes::to_string(r.tree.source),
                               r.tree.source_note.empty() ? "" : " (" + r.tree.source_note + ")",
                               by_count ? " (no CPU recorded: one unit per process)" : "; darker: its own"));

    std::vector<double> x(n, margin), next(n, margin);  // next: where the next child of i starts
    for (const std::size_t i : s.preorder) {
        if (i > 0) {
            x[i] = next[s.parent[i]];
            next[s.parent[i]] += sub[i] * scale;
        }
        next[i] = x[i];
        const auto& p = procs[i];
        const double w = sub[i] * scale;
        const double y = margin + row * (header_rows + static_cast<double>(s.depth[i]));
        const std::string name = program_name(last_program(p));
        const double hue = static_cast<double>(name_hash(name) % 360);
        out +=
            fmt::format("<g class=\"process\" data-index=\"{}\" data-parent=\"{}\" data-depth=\"{}\" data-pid=\"{}\">",
                        i, i == 0 ? -1 : static_cast<std::int64_t>(s.parent[i]), s.depth[i], p.pid);
        out += "<title>" + xml_text(title_of(p, s, i)) + "</title>";
        out += fmt::format(
            "<rect class=\"box\" x=\"{:.3f}\" y=\"{:.0f}\" width=\"{:.3f}\" height=\"{:.0f}\" fill=\"{}\"/>", x[i], y,
            w, row - 1, rgb(hue, 0.55, 0.72));
        const double own_w = own[i] * scale;
        if (own_w > 0)
            out += fmt::format(
                "<rect class=\"own\" x=\"{:.3f}\" y=\"{:.0f}\" width=\"{:.3f}\" height=\"{:.0f}\" fill=\"{}\"/>",
                x[i] + w - own_w, y, own_w, row - 1, rgb(hue, 0.55, 0.5));
        const std::string label = label_of(name, s.subtree[i], w);
        if (!label.empty())
            out += fmt::format("<text x=\"{:.3f}\" y=\"{:.0f}\">{}</text>", x[i] + 3, y + 14, xml_text(label));
        out += "</g>\n";
    }
    out += "</svg>\n";
    return out;
}

}  // namespace proctimes::cli::tree
