// SPDX-License-Identifier: MIT
// The panes over the process list: the detail of the selected process in the
// Windows model (creation and exit as FILETIME and ISO 8601, kernel and user
// time, their precision), and the key help.
#include <curses.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <string_view>
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

std::string instant_text(instant t) {
    const auto ticks = filetime_ticks(t);
    if (!ticks) return rfc3339_utc(t);
    return fmt::format("{}  FILETIME {}", rfc3339_utc(t), *ticks);
}

std::string times_text(nanoseconds t) {
    return fmt::format("{}.{:09} s  = {} FILETIME units of 100 ns", t.count() / 1'000'000'000,
                       t.count() % 1'000'000'000, t.count() / 100);
}

std::string resolution_text(nanoseconds r) {
    if (r.count() <= 0) return "unknown";
    if (r < std::chrono::microseconds(1)) return fmt::format("{} ns", r.count());
    if (r < std::chrono::milliseconds(1)) return fmt::format("{} us", r.count() / 1000);
    return fmt::format("{} ms", r.count() / 1'000'000);
}

std::vector<std::string> process_lines(const screen_state& s, const display_row& d) {
    const top_row& r = *d.row;
    const bool u8 = s.view.utf8;
    std::vector<std::string> out;
    std::string who =
        d.key.tid ? fmt::format("thread {} of process {}", *d.key.tid, r.pid) : fmt::format("process {}", r.pid);
    out.push_back(fmt::format("{}  parent {}  user {}{}  state {}{}", who, r.ppid, safe_text(user_name_of(r), u8),
                              r.uid ? fmt::format(" (uid {})", *r.uid) : std::string(), r.state,
                              r.ended ? "  " + end_status(r) : std::string()));
    // The Windows model first: creation, exit, kernel, user, their precision.
    out.push_back("creation  " + instant_text(r.creation));
    if (r.exit) {
        out.push_back(fmt::format("exit      {}  ({})", instant_text(*r.exit), to_string(r.exit_source)));
    } else {
        out.push_back("exit      - (running)");
    }
    out.push_back("kernel    " + times_text(r.kernel));
    out.push_back("user      " + times_text(user_time_of(r)));
    out.push_back(
        fmt::format("precision kernel and user to {} each; instants to 100 ns", resolution_text(r.resolution)));
    out.push_back(fmt::format("interval  kernel {}  user {}  reaped children {}  = {:.1f}%",
                              seconds_text(r.interval_kernel), seconds_text(r.interval_user),
                              seconds_text(r.interval_children_cpu()), cpu_percent(d.own_cpu, s.frame.interval)));
    std::string name = "name      " + safe_text(r.name, u8) + fmt::format("   threads {}", r.threads);
    if (r.rss_bytes) name += "  resident " + bytes_cell(*r.rss_bytes);
    out.push_back(name);
    if (!r.command.empty()) out.push_back("command   " + safe_text(std::string_view(r.command).substr(0, 4096), u8));
    std::string io;
    if (r.read_bytes && r.write_bytes)
        io = "I/O read " + bytes_cell(*r.read_bytes) + " written " + bytes_cell(*r.write_bytes);
    if (r.voluntary_switches && r.involuntary_switches) {
        io += fmt::format("{}context switches {} voluntary {} involuntary", io.empty() ? "" : ", ",
                          *r.voluntary_switches, *r.involuntary_switches);
    }
    if (!io.empty()) out.push_back("interval  " + io);
    if (!r.cgroup.empty()) out.push_back("cgroup    " + safe_text(r.cgroup, u8));
    return out;
}

std::vector<std::string> group_lines(const screen_state& s, const display_row& d) {
    return {"group     " + safe_text(d.group_name, s.view.utf8),
            fmt::format("processes {}  threads {}", d.members, d.threads),
            fmt::format("interval  {} = {:.1f}% of a CPU", seconds_text(d.cpu), cpu_percent(d.cpu, s.frame.interval)),
            "kernel    " + times_text(d.kernel), "user      " + times_text(d.user)};
}

}  // namespace

void draw_detail(const screen_state& s, int top, int height) {
    if (height <= 0) return;
    const int frame_attr = colour_attr(s, pair_heading, A_REVERSE);
    put(top, 0, std::string(static_cast<std::size_t>(COLS), ' '), COLS, frame_attr);
    put(top, 0, " Detail (Enter closes)", COLS, frame_attr);
    if (s.rows.empty() || s.view.cursor >= s.rows.size()) {
        put(top + 1, 0, "(nothing selected)", COLS, A_DIM);
        return;
    }
    const display_row& d = s.rows[s.view.cursor];
    const auto lines = d.what == display_row::kind::group ? group_lines(s, d) : process_lines(s, d);
    for (int i = 0; i + 1 < height && i < static_cast<int>(lines.size()); ++i) {
        move(top + 1 + i, 0);
        clrtoeol();
        put(top + 1 + i, 0, lines[static_cast<std::size_t>(i)], COLS, A_NORMAL);
    }
}

void draw_help(const screen_state& s, int top, int height) {
    static constexpr std::array<const char*, 23> lines{
        "proctimes top: every process that used CPU in the interval, those that ended in it included",
        "",
        "Up/Down PgUp/PgDn Home/End  move the selection (mouse: click a row, a heading sorts)",
        "Enter            detail: creation, exit, kernel and user time (Windows model)",
        "< > F6           sort by the previous / next column      I  invert the order",
        "/                search (as you type); n next match",
        "\\                filter rows (name, command, user, pid); Esc clears",
        "t                tree of processes (TREE% = CPU of the subtree)",
        "g                group by program, user, cgroup, then none",
        "H                threads of the selected process (again: back)",
        "F                follow the selected process as rows move",
        "space p          pause / resume (a replay plays its intervals at the refresh rate)",
        "[ ] Left Right   replay: the interval before / after;  j  jump to a time",
        "+ -  d           faster / slower refresh; d types the interval",
        "k                send a signal to the selected process (asks first)",
        "Esc              close the pane, the threads view or the filter",
        "? F1 h           this help          q F10  quit",
        "",
        "Ended rows (state X) are processes that ended in the interval, with their exit status.",
        "The ledger line: busy CPU of the interval, the part attributed to processes (of which",
        "ended ones), and what is left unattributed; then how ended processes are known.",
        "",
        "Any key closes this help.",
    };
    for (int i = 0; i < height && i < static_cast<int>(lines.size()); ++i) {
        move(top + i, 0);
        clrtoeol();
        put(top + i, 0, lines[static_cast<std::size_t>(i)], COLS,
            i == 0 ? colour_attr(s, pair_title, A_BOLD) : A_NORMAL);
    }
}

}  // namespace proctimes::cli::top
