// SPDX-License-Identifier: MIT
// Drawing the full-screen view: the header (time, CPU bars, the ledger line,
// load, memory, tasks), the column headings, the process rows and the bottom
// line; the panes (detail, help) are in draw_panes.cpp.
#include <curses.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "output/output.hpp"
#include "top/cells.hpp"
#include "top/draw.hpp"
#include "top/row_fields.hpp"
#include "top/text.hpp"

namespace proctimes::cli::top {

namespace {

using std::chrono::nanoseconds;

struct col_spec {
    column c;
    int width;  ///< 0: the rest of the line
    bool right;
};

// The columns that fit `cols`: every one from 70 columns, fewer below.
std::vector<col_spec> layout(int cols) {
    if (cols >= 70)
        return {{column::pid, 7, true},     {column::user, 8, false},  {column::state, 1, false},
                {column::cpu, 6, true},     {column::kernel, 8, true}, {column::user_time, 8, true},
                {column::threads, 4, true}, {column::age, 5, true},    {column::rss, 6, true},
                {column::command, 0, false}};
    if (cols >= 50)
        return {{column::pid, 7, true},     {column::user, 8, false},   {column::state, 1, false},
                {column::cpu, 6, true},     {column::threads, 4, true}, {column::rss, 6, true},
                {column::command, 0, false}};
    return {{column::pid, 7, true}, {column::cpu, 6, true}, {column::command, 0, false}};
}

std::string pad(const std::string& text, int width, bool right) {
    const int w = display_width(text);
    if (w >= width) return std::string(fit_width(text, width));
    const std::string fill(static_cast<std::size_t>(width - w), ' ');
    return right ? fill + text : text + fill;
}

std::string heading(const screen_state& s, column c) {
    std::string t(column_title(c));
    if (c == column::pid && s.view.mode == view_mode::grouped) t = "PROCS";
    if (c == column::pid && (s.view.mode == view_mode::threads || s.view.all_threads)) t = "PID/TID";
    if (c == column::cpu && s.view.mode == view_mode::tree) t = "TREE%";
    if (c == column::command && s.view.mode == view_mode::grouped) {
        static constexpr std::array<const char*, 3> names{"PROGRAM", "USER NAME", "CGROUP"};
        t = names[static_cast<std::size_t>(s.view.group)];
    }
    return t;
}

// The command line with its program's directory left out, so that a row
// shows the program and its arguments (the detail pane has it whole).
std::string_view without_directory(std::string_view command) {
    const std::size_t end = command.find(' ');
    const std::size_t slash = command.substr(0, end).rfind('/');
    if (slash == std::string_view::npos || slash + 1 == std::min(end, command.size())) return command;
    return command.substr(slash + 1);
}

std::string cell(const screen_state& s, const display_row& d, column c) {
    const bool group = d.what == display_row::kind::group;
    const top_row* r = d.row;
    switch (c) {
        case column::pid:
            if (group) return std::to_string(d.members);
            return std::to_string(d.key.tid.value_or(d.key.pid));
        case column::user:
            if (group) return s.view.group == grouping::user ? safe_text(d.group_name, s.view.utf8) : "";
            return safe_text(user_name_of(*r), s.view.utf8);
        case column::state:
            return group ? "" : std::string(1, r->state);
        case column::cpu:
            if (s.frame.interval.count() <= 0) return "-";
            return fmt::format("{:.1f}", cpu_percent(d.cpu, s.frame.interval));
        case column::kernel:
            return cpu_time_cell(d.kernel);
        case column::user_time:
            return cpu_time_cell(d.user);
        case column::threads:
            // A thread row counts none; an ended process has none left.
            if (d.what == display_row::kind::thread || (r != nullptr && r->ended && d.threads == 0)) return "";
            return std::to_string(d.threads);
        case column::age:
            if (group) return "";
            return age_cell(r->ended && r->exit ? *r->exit - r->creation : s.frame.taken - r->creation);
        case column::rss:
            return d.has_rss ? bytes_cell(d.rss) : "-";
        case column::command: {
            if (group) return safe_text(d.group_name, s.view.utf8);
            std::string text = d.branch;
            if (r->ended) text += "[" + end_status(*r) + "] ";
            if (d.what == display_row::kind::thread || r->command.empty()) {
                text += safe_text(r->name, s.view.utf8);
            } else {
                // A line is a few hundred columns at most: no need to escape a long command line whole.
                text += safe_text(without_directory(r->command).substr(0, 4096), s.view.utf8);
            }
            return text;
        }
    }
    return {};
}

// A bar of `share` (0..1) `width` columns wide, with the percentage inside: [|||||   42.1%].
void draw_bar(const screen_state& s, int y, int x, int width, const std::string& label, double share) {
    const int label_w = put(y, x, label, width, colour_attr(s, pair_label, A_BOLD));
    const int inner = width - label_w - 2;
    if (inner < 1) return;
    share = std::clamp(share, 0.0, 1.0);
    const std::string pct = fmt::format("{:.1f}%", share * 100.0);
    const int filled = static_cast<int>(std::lround(share * inner));
    put(y, x + label_w, "[", 1, A_NORMAL);
    put(y, x + label_w + 1, std::string(static_cast<std::size_t>(filled), '|'), inner,
        colour_attr(s, pair_bar, A_BOLD));
    const int pct_w = static_cast<int>(pct.size());
    if (pct_w <= inner) put(y, x + label_w + 1 + inner - pct_w, pct, pct_w, A_NORMAL);
    put(y, x + label_w + 1 + inner, "]", 1, A_NORMAL);
}

std::string title_line(const screen_state& s) {
    const top_frame& f = s.frame;
    std::string t = s.replay ? "proctimes top  REPLAY" : "proctimes top";
    if (s.have_frame) {
        // A recording's interval is named by its date too.
        const std::string when = table_time(f.taken, false);
        t += "  " + (s.replay ? when : when.substr(std::min<std::size_t>(11, when.size()), 8));
    }
    t += fmt::format("  every {:g} s", std::chrono::duration<double>(s.interval).count());
    if (s.have_frame && f.interval.count() > 0)
        t += fmt::format("  (last {:.3f} s)", std::chrono::duration<double>(f.interval).count());
    if (s.paused) t += "  [paused]";
    if (s.view.mode == view_mode::tree) t += "  [tree]";
    if (s.view.mode == view_mode::grouped) {
        static constexpr std::array<const char*, 3> names{"program", "user", "cgroup"};
        t += fmt::format("  [by {}]", names[static_cast<std::size_t>(s.view.group)]);
    }
    if (s.view.mode == view_mode::threads) t += fmt::format("  [threads of {}]", s.view.thread_of);
    if (!s.view.filter.empty()) t += "  [filter: " + safe_text(s.view.filter, s.view.utf8) + "]";
    if (s.follow && s.view.selected) t += fmt::format("  [follow {}]", s.view.selected->pid);
    return t;
}

std::string ledger_line(const screen_state& s, bool compact) {
    const top_frame& f = s.frame;
    const std::string source = f.ended_source.empty() ? std::string() : " | " + f.ended_source;
    if (!f.ledger) {
        if (!f.ledger_error.empty()) return "ledger: " + safe_text(f.ledger_error, s.view.utf8) + source;
        return "ledger: from the second frame on" + source;
    }
    const cpu_ledger& l = *f.ledger;
    const double busy = static_cast<double>(std::max<std::int64_t>(1, l.busy.count()));
    // Rounded to the tenth it is shown at, so that a tiny negative share reads 0.0, not -0.0.
    const auto pct = [busy](nanoseconds v) {
        return std::round(1000.0 * static_cast<double>(v.count()) / busy) / 10.0 + 0.0;
    };
    const std::size_t ended_rows =
        static_cast<std::size_t>(std::count_if(f.rows.begin(), f.rows.end(), [](const top_row& r) { return r.ended; }));
    const std::size_t ended_count = std::max(ended_rows, l.processes.size());
    if (compact) {
        std::string t =
            fmt::format("busy {} attr {:.1f}% (ended {:.1f}%, {}) unattr {:.1f}%", seconds_text(l.busy),
                        pct(l.attributed()), pct(l.ended + l.reaped_children), ended_count, pct(l.unattributed));
        return t + source;
    }
    std::string t =
        fmt::format("busy {}: attributed {:.1f}% ({:.1f}% by {} ended) unattributed {:.1f}%", seconds_text(l.busy),
                    pct(l.attributed()), pct(l.ended + l.reaped_children), ended_count, pct(l.unattributed));
    t += source;
    if (f.records_lost && *f.records_lost > 0) t += fmt::format(", {} records lost", *f.records_lost);
    return t;
}

std::string system_line(const screen_state& s) {
    const top_frame& f = s.frame;
    const std::uint64_t used = f.memory_total > f.memory_available ? f.memory_total - f.memory_available : 0;
    const std::size_t ended =
        static_cast<std::size_t>(std::count_if(f.rows.begin(), f.rows.end(), [](const top_row& r) { return r.ended; }));
    // No memory total: the machine's status was not read for this frame (load and memory left out).
    std::string t = f.memory_total == 0
                        ? std::string()
                        : fmt::format("load {:.2f} {:.2f} {:.2f}  mem {} of {} used  ", f.load[0], f.load[1], f.load[2],
                                      bytes_cell(used), bytes_cell(f.memory_total));
    t += fmt::format("tasks {}  processes {} ({} ended)", f.tasks, f.live_processes, ended);
    if (f.uptime.count() > 0) t += "  up " + age_cell(f.uptime);
    return t;
}

// The header from line 0; returns the next free line. Lines are dropped,
// least needed first, so that `keep` lines remain below.
int draw_header(const screen_state& s, int keep) {
    const int cols = COLS;
    int budget = std::max(0, LINES - keep);
    int y = 0;
    const auto take = [&]() { return budget-- > 0; };
    if (!take()) return y;
    put(y++, 0, title_line(s), cols, colour_attr(s, pair_title, A_BOLD));
    if (!s.have_frame) return y;
    if (budget > 0) {
        take();
        std::string line = ledger_line(s, false);
        if (display_width(line) > cols) line = ledger_line(s, true);
        put(y++, 0, line, cols, A_NORMAL);
    }
    if (budget > 0) {
        take();
        put(y++, 0, system_line(s), cols, A_NORMAL);
    }
    if (budget > 0 && cols >= 20) {
        take();
        draw_bar(s, y++, 0, std::min(cols, 100), fmt::format("CPU{:>3} ", s.frame.cpus), s.frame.busy);
    }
    // Per-CPU bars, as many to a line as leave each 20 columns or more.
    const auto& per = s.frame.busy_per_cpu;
    if (!per.empty() && cols >= 20) {
        const int across = std::clamp(cols / 26, 1, 8);
        const int width = cols / across;
        const int lines =
            static_cast<int>((per.size() + static_cast<std::size_t>(across) - 1) / static_cast<std::size_t>(across));
        if (lines <= budget) {
            for (std::size_t i = 0; i < per.size(); ++i) {
                const int row = static_cast<int>(i) / across;
                const int col = static_cast<int>(i) % across;
                draw_bar(s, y + row, col * width, width - 1, fmt::format("{:>3} ", i), per[i]);
            }
            y += lines;
            budget -= lines;
        }
    }
    return y;
}

void draw_rows(screen_state& s, int top, int height) {
    const auto cols_spec = layout(COLS);
    s.heading_x.clear();
    s.header_y = top;
    std::string line;
    int x = 0;
    // Headings: the sorted column marked.
    move(top, 0);
    clrtoeol();
    const int heading_attr = colour_attr(s, pair_heading, A_REVERSE);
    put(top, 0, std::string(static_cast<std::size_t>(COLS), ' '), COLS, heading_attr);
    for (const col_spec& c : cols_spec) {
        const int w = c.width == 0 ? std::max(0, COLS - x) : c.width;
        s.heading_x.emplace_back(x, c.c);
        std::string h = heading(s, c.c);
        int attr = heading_attr;
        if (c.c == s.view.sort) {
            const char* mark =
                s.view.utf8 ? (s.view.descending ? "\u25bc" : "\u25b2") : (s.view.descending ? "v" : "^");
            if (c.right) {
                h.insert(0, mark);
            } else {
                h += mark;
            }
            attr |= A_BOLD | A_UNDERLINE;
        }
        put(top, x, pad(h, w, c.right), w, attr);
        x += w + 1;
    }
    s.rows_y = top + 1;
    s.page = static_cast<std::size_t>(std::max(1, height - 1));
    for (int i = 0; i < height - 1; ++i) {
        const std::size_t at = s.view.top + static_cast<std::size_t>(i);
        const int y = top + 1 + i;
        move(y, 0);
        clrtoeol();
        if (at >= s.rows.size()) continue;
        const display_row& d = s.rows[at];
        const bool selected = at == s.view.cursor;
        int attr = A_NORMAL;
        if (d.row != nullptr && d.row->ended) attr = colour_attr(s, pair_ended, A_DIM);
        if (selected) attr = colour_attr(s, pair_select, A_REVERSE);
        if (selected) put(y, 0, std::string(static_cast<std::size_t>(COLS), ' '), COLS, attr);
        x = 0;
        for (const col_spec& c : cols_spec) {
            const int w = c.width == 0 ? std::max(0, COLS - x) : c.width;
            put(y, x, pad(cell(s, d, c.c), w, c.right), w, attr);
            x += w + 1;
            if (x >= COLS) break;
        }
    }
    if (s.rows.empty() && height > 1) {
        put(top + 1, 0, s.view.filter.empty() ? "(no process)" : "(no process matches the filter)", COLS, A_DIM);
    }
}

std::string bottom_line(const screen_state& s) {
    switch (s.input) {
        case input_mode::search:
            return "Search: " + safe_text(s.typed, s.view.utf8);
        case input_mode::filter:
            return "Filter: " + safe_text(s.typed, s.view.utf8);
        case input_mode::interval:
            return "Interval in seconds: " + safe_text(s.typed, s.view.utf8);
        case input_mode::signal:
            return fmt::format("Signal to {} ({}), number or name [15 TERM]: ", s.signal_pid, s.signal_name) +
                   safe_text(s.typed, s.view.utf8);
        case input_mode::confirm_signal:
            return fmt::format("Send SIG{} to {} ({})? y/n", signal_name(s.signal_chosen), s.signal_pid, s.signal_name);
        case input_mode::jump:
            return "Jump to (2026-11-28 03:00, today 03:00, -1h): " + safe_text(s.typed, s.view.utf8);
        case input_mode::none:
            break;
    }
    if (!s.message.empty()) return s.message;
    if (s.replay)
        return "REPLAY  [ ] or Left/Right step an interval  j jump to a time  p play/pause  F1/? help  / search  "
               "t tree  g group  q quit";
    return "F1/? help  Enter detail  / search  \\ filter  t tree  g group  H threads  < > sort  I invert  p pause  "
           "+ - interval  F follow  k kill  q quit";
}

}  // namespace

int put(int y, int x, std::string_view safe, int width, int attributes) {
    if (y < 0 || y >= LINES || x < 0 || x >= COLS || width <= 0) return 0;
    width = std::min(width, COLS - x);
    int used = 0;
    const std::string_view part = fit_width(safe, width, &used);
    if (part.empty()) return 0;
    attrset(static_cast<attr_t>(attributes));
    // The last cell of the last line: ncurses would scroll; drawn one short.
    if (y == LINES - 1 && x + used >= COLS) {
        const std::string_view shorter = fit_width(part, width - 1, &used);
        mvaddnstr(y, x, shorter.data(), static_cast<int>(shorter.size()));
    } else {
        mvaddnstr(y, x, part.data(), static_cast<int>(part.size()));
    }
    attrset(A_NORMAL);
    return used;
}

int colour_attr(const screen_state& s, short pair, int mono) {
    if (!s.colour) return mono;
    if (pair == pair_select) return static_cast<int>(COLOR_PAIR(pair)) | A_BOLD;
    return static_cast<int>(COLOR_PAIR(pair)) | (pair == pair_heading || pair == pair_title ? A_BOLD : 0);
}

void rearrange(screen_state& s) {
    if (s.view.mode == view_mode::grouped && s.view.group == grouping::cgroup) s.cgroups.fill(s.frame);
    s.rows = arrange(s.frame, s.view);
    place_cursor(s.view, s.rows, s.page, true);
}

void draw_screen(screen_state& s) {
    erase();
    // Below the header: the headings, at least one row (three when there is
    // room), and the bottom line.
    // The help takes every line below the title.
    const int keep = s.help ? std::max(0, LINES - 1) : (LINES >= 12 ? 5 : 3);
    const int y = draw_header(s, keep);
    const int bottom = LINES - 1;
    const int area = bottom - y;
    if (s.help) {
        draw_help(s, y, area);
    } else if (area > 0) {
        int rows_h = area;
        if (s.detail) {
            // The pane first (its eleven lines and a heading), the rows in what is left.
            const int pane = area >= 8 ? std::min(12, area - 4) : area;
            rows_h = area - pane;
            draw_detail(s, y + rows_h, pane);
        }
        if (rows_h > 0) {
            s.page = static_cast<std::size_t>(std::max(1, rows_h - 1));
            place_cursor(s.view, s.rows, s.page, true);
            draw_rows(s, y, rows_h);
        }
    }
    if (bottom >= 0) {
        const int attr = s.input != input_mode::none || !s.message.empty() ? colour_attr(s, pair_warn, A_BOLD) : A_DIM;
        put(bottom, 0, bottom_line(s), COLS, attr);
    }
    if (s.input != input_mode::none) {
        curs_set(1);
        move(bottom, std::min(COLS - 1, display_width(bottom_line(s))));
    } else {
        curs_set(0);
    }
    refresh();
}

}  // namespace proctimes::cli::top
