// SPDX-License-Identifier: MIT
// The keys of the full-screen view, as htop users expect them (the help pane,
// draw_panes.cpp, lists them), and the mouse.
#include <curses.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "top/cells.hpp"
#include "top/screen_state.hpp"
#include "top/text.hpp"

namespace proctimes::cli::top {

namespace {

using std::chrono::nanoseconds;

constexpr int key_escape = 27;

// The refresh intervals + and - step through.
constexpr std::array<std::int64_t, 10> interval_steps_ms{100, 200, 500, 1000, 2000, 3000, 5000, 10000, 30000, 60000};

// ASCII, and the bytes of a UTF-8 character, which getch() gives one by one.
bool printable(int key) { return (key >= 0x20 && key < 0x7F) || (key >= 0x80 && key <= 0xFF); }
bool backspace(int key) { return key == KEY_BACKSPACE || key == 127 || key == 8; }
bool enter(int key) { return key == '\n' || key == '\r' || key == KEY_ENTER; }

const display_row* selected_row(const screen_state& s) {
    if (s.rows.empty() || s.view.cursor >= s.rows.size()) return nullptr;
    return &s.rows[s.view.cursor];
}

void step_interval(screen_state& s, int direction) {
    const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(s.interval).count();
    std::int64_t next = now;
    if (direction > 0) {
        const auto it = std::upper_bound(interval_steps_ms.begin(), interval_steps_ms.end(), now);
        next = it == interval_steps_ms.end() ? interval_steps_ms.back() : *it;
    } else {
        const auto it = std::lower_bound(interval_steps_ms.begin(), interval_steps_ms.end(), now);
        next = it == interval_steps_ms.begin() ? interval_steps_ms.front() : *(it - 1);
    }
    s.interval = std::chrono::milliseconds(next);
    s.message = fmt::format("refresh every {:g} s", static_cast<double>(next) / 1000.0);
}

// "15", "TERM", "SIGTERM", "term": the signal, or 0.
int parse_signal(std::string text) {
    if (text.empty()) return SIGTERM;
    int n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size()) return n > 0 && n < NSIG ? n : 0;
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (text.rfind("SIG", 0) == 0) text.erase(0, 3);
    for (int sig = 1; sig < 32; ++sig)
        if (signal_name(sig) == text) return sig;
    return 0;
}

void send_signal(screen_state& s) {
    if (::kill(s.signal_pid, s.signal_chosen) == 0) {
        s.message = fmt::format("sent SIG{} to {}", signal_name(s.signal_chosen), s.signal_pid);
    } else {
        s.message =
            fmt::format("SIG{} to {} failed: {}", signal_name(s.signal_chosen), s.signal_pid, std::strerror(errno));
    }
}

// A key while the bottom line reads text. Returns false for keys it leaves alone.
void text_key(screen_state& s, int key) {
    const bool esc = key == key_escape;
    if (s.input == input_mode::confirm_signal) {
        if (key == 'y' || key == 'Y') {
            send_signal(s);
        } else {
            s.message = "no signal sent";
        }
        s.input = input_mode::none;
        return;
    }
    if (esc) {
        if (s.input == input_mode::filter) {
            s.view.filter.clear();
            rearrange(s);
        }
        s.input = input_mode::none;
        return;
    }
    if (enter(key)) {
        switch (s.input) {
            case input_mode::search:
                s.search = s.typed;
                break;
            case input_mode::interval: {
                double secs = 0;
                const auto [end, ec] = std::from_chars(s.typed.data(), s.typed.data() + s.typed.size(), secs);
                if (ec != std::errc() || end != s.typed.data() + s.typed.size() || !(secs >= 0.1 && secs <= 3600)) {
                    s.message = "the interval is a number of seconds from 0.1 to 3600";
                } else {
                    s.interval = std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(secs));
                    s.message = fmt::format("refresh every {:g} s", secs);
                }
                break;
            }
            case input_mode::jump:
                if (!s.typed.empty()) s.replay_jump = s.typed;
                break;
            case input_mode::signal: {
                s.signal_chosen = parse_signal(s.typed);
                if (s.signal_chosen == 0) {
                    s.message = "no such signal";
                } else {
                    s.input = input_mode::confirm_signal;
                    return;
                }
                break;
            }
            default:
                break;
        }
        s.input = input_mode::none;
        return;
    }
    if (backspace(key)) {
        if (!s.typed.empty()) s.typed.pop_back();
    } else if (printable(key) && s.typed.size() < 200) {
        s.typed += static_cast<char>(key);
    } else {
        return;
    }
    if (s.input == input_mode::filter) {
        s.view.filter = s.typed;
        rearrange(s);
    } else if (s.input == input_mode::search) {
        const std::size_t from = s.view.cursor == 0 ? s.rows.size() - 1 : s.view.cursor - 1;
        if (const auto at = find_row(s.rows, s.typed, s.rows.empty() ? 0 : from))
            select_row(s.view, s.rows, *at, s.page);
    }
}

void mouse_key(screen_state& s) {
    MEVENT ev{};
    if (getmouse(&ev) != OK) return;
    if ((ev.bstate & BUTTON4_PRESSED) != 0U) {
        move_cursor(s.view, s.rows, -3, s.page);
        return;
    }
#if defined(BUTTON5_PRESSED)
    if ((ev.bstate & BUTTON5_PRESSED) != 0U) {
        move_cursor(s.view, s.rows, 3, s.page);
        return;
    }
#endif
    if ((ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED)) == 0U) return;
    if (ev.y == s.header_y && !s.help) {
        column c = s.view.sort;
        for (const auto& [x, col] : s.heading_x)
            if (ev.x >= x) c = col;
        if (c == s.view.sort) {
            s.view.descending = !s.view.descending;
        } else {
            s.view.sort = c;
        }
        rearrange(s);
        return;
    }
    if (ev.y >= s.rows_y && ev.y < s.rows_y + static_cast<int>(s.page)) {
        const std::size_t at = s.view.top + static_cast<std::size_t>(ev.y - s.rows_y);
        if (at < s.rows.size()) select_row(s.view, s.rows, at, s.page);
    }
}

void cycle_sort(screen_state& s, int direction) {
    const auto it = std::find(all_columns.begin(), all_columns.end(), s.view.sort);
    auto i = static_cast<std::ptrdiff_t>(it - all_columns.begin()) + direction;
    const auto n = static_cast<std::ptrdiff_t>(all_columns.size());
    i = (i % n + n) % n;
    s.view.sort = all_columns[static_cast<std::size_t>(i)];
    // Numbers read best largest first, names in alphabetical order.
    s.view.descending = s.view.sort != column::command && s.view.sort != column::user && s.view.sort != column::pid;
    s.message = fmt::format("sorted by {}", column_title(s.view.sort));
    rearrange(s);
}

void threads_key(screen_state& s) {
    if (s.view.mode == view_mode::threads) {
        s.view.mode = s.before_threads;
        rearrange(s);
        return;
    }
    const display_row* d = selected_row(s);
    if (d == nullptr || d->row == nullptr) {
        s.message = "select a process first";
        return;
    }
    if (d->row->thread_rows.empty() && d->row->threads > 1)
        s.message = "threads are read when top runs with -H (proctimes top -H)";
    s.before_threads = s.view.mode;
    s.view.thread_of = d->row->pid;
    s.view.mode = view_mode::threads;
    s.view.selected.reset();
    s.view.cursor = 0;
    rearrange(s);
}

void signal_key(screen_state& s) {
    if (!s.allow_signals) {
        s.message = "sending signals is turned off for this run";
        return;
    }
    const display_row* d = selected_row(s);
    if (d == nullptr || d->row == nullptr || d->row->ended) {
        s.message = "select a running process first";
        return;
    }
    s.signal_pid = d->key.tid.value_or(d->row->pid);
    s.signal_name = safe_text(d->row->name, s.view.utf8);
    s.typed.clear();
    s.input = input_mode::signal;
}

}  // namespace

void handle_key(screen_state& s, int key) {
    if (key == KEY_RESIZE) return;
    if (s.input != input_mode::none) {
        text_key(s, key);
        return;
    }
    s.message.clear();
    if (s.help) {
        s.help = false;
        return;
    }
    const auto page = static_cast<std::ptrdiff_t>(s.page);
    switch (key) {
        case 'q':
        case KEY_F(10):
            s.quit = true;
            break;
        case KEY_UP:
            move_cursor(s.view, s.rows, -1, s.page);
            break;
        case KEY_DOWN:
            move_cursor(s.view, s.rows, 1, s.page);
            break;
        case KEY_PPAGE:
            move_cursor(s.view, s.rows, -page, s.page);
            break;
        case KEY_NPAGE:
            move_cursor(s.view, s.rows, page, s.page);
            break;
        case KEY_HOME:
            select_row(s.view, s.rows, 0, s.page);
            break;
        case KEY_END:
            select_row(s.view, s.rows, s.rows.empty() ? 0 : s.rows.size() - 1, s.page);
            break;
        case '>':
        case '.':
        case KEY_F(6):
            cycle_sort(s, 1);
            break;
        case '<':
        case ',':
            cycle_sort(s, -1);
            break;
        case 'I':
            s.view.descending = !s.view.descending;
            rearrange(s);
            break;
        case '/':
        case KEY_F(3):
            s.input = input_mode::search;
            s.typed.clear();
            break;
        case 'n':
            if (s.search.empty()) {
                s.message = "no search yet (/)";
            } else if (const auto at = find_row(s.rows, s.search, s.view.cursor)) {
                select_row(s.view, s.rows, *at, s.page);
            } else {
                s.message = "no row matches " + safe_text(s.search, s.view.utf8);
            }
            break;
        case '\\':
        case KEY_F(4):
            s.input = input_mode::filter;
            s.typed = s.view.filter;
            break;
        case 't':
        case KEY_F(5):
            s.view.mode = s.view.mode == view_mode::tree ? view_mode::flat : view_mode::tree;
            rearrange(s);
            break;
        case 'g':
            if (s.view.mode != view_mode::grouped) {
                s.view.mode = view_mode::grouped;
                s.view.group = grouping::program;
            } else if (s.view.group == grouping::program) {
                s.view.group = grouping::user;
            } else if (s.view.group == grouping::user) {
                s.view.group = grouping::cgroup;
            } else {
                s.view.mode = view_mode::flat;
            }
            rearrange(s);
            break;
        case 'H':
            threads_key(s);
            break;
        case ' ':
        case 'p':
            s.paused = !s.paused;
            break;
        case '+':
        case '=':
            step_interval(s, -1);
            break;
        case '-':
            step_interval(s, 1);
            break;
        case 'd':
            s.input = input_mode::interval;
            s.typed.clear();
            break;
        case 'F':
            s.follow = !s.follow;
            s.message = s.follow ? "following the selected process" : "not following";
            break;
        case 'k':
        case KEY_F(9):
            signal_key(s);
            break;
        case '?':
        case 'h':
        case KEY_F(1):
            s.help = true;
            break;
        case '\n':
        case '\r':
        case KEY_ENTER:
            s.detail = !s.detail;
            break;
        case key_escape:
            if (s.detail) {
                s.detail = false;
            } else if (s.view.mode == view_mode::threads) {
                threads_key(s);
            } else if (!s.view.filter.empty()) {
                s.view.filter.clear();
                rearrange(s);
            }
            break;
        case KEY_MOUSE:
            mouse_key(s);
            break;
        case '[':
        case ']':
        case KEY_LEFT:
        case KEY_RIGHT:
            if (s.replay) {
                s.replay_step += key == '[' || key == KEY_LEFT ? -1 : 1;
            } else if (key == '[' || key == ']') {
                s.message = "[ and ] step through a recording: proctimes top --replay";
            }
            break;
        case 'j':
            if (s.replay) {
                s.input = input_mode::jump;
                s.typed.clear();
            } else {
                s.message = "j jumps to a time of a recording: proctimes top --replay";
            }
            break;
        default:
            break;
    }
}

}  // namespace proctimes::cli::top
