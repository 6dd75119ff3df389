// SPDX-License-Identifier: MIT
// The arrangement of a frame into display rows (view.hpp).
#include "top/view.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "top/row_fields.hpp"

namespace proctimes::cli::top {

namespace {

using std::chrono::nanoseconds;

// The tree's line drawing stops after this many levels (a chain of thousands
// of processes would otherwise draw nothing but lines).
constexpr int max_drawn_depth = 24;

std::string_view shown_command(const top_row& r) { return r.command.empty() ? std::string_view(r.name) : r.command; }

// A row's CPU in the interval: its own, and for a process the part of the
// children it reaped that the ledger counts (the frame's children columns),
// so that no CPU-second is shown twice.
display_row process_row(const top_row& r) {
    display_row d;
    d.what = r.tid ? display_row::kind::thread : display_row::kind::process;
    d.row = &r;
    d.key.pid = r.pid;
    d.key.tid = r.tid;
    d.own_cpu = r.interval_cpu() + (r.tid ? nanoseconds{0} : r.interval_children_cpu());
    d.cpu = d.own_cpu;
    d.kernel = r.kernel;
    d.user = user_time_of(r);
    d.threads = r.threads;
    d.has_rss = r.rss_bytes.has_value();
    d.rss = r.rss_bytes.value_or(0);
    return d;
}

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool contains_nocase(std::string_view hay, std::string_view needle) {
    if (needle.empty()) return true;
    if (needle.size() > hay.size()) return false;
    const auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                                [](char a, char b) { return lower(a) == lower(b); });
    return it != hay.end();
}

// The text a row sorts by in the command column.
std::string_view command_of(const display_row& d) {
    if (d.what == display_row::kind::group) return d.group_name;
    return d.row != nullptr ? shown_command(*d.row) : std::string_view();
}
std::string_view user_of(const display_row& d) {
    if (d.what == display_row::kind::group) return d.group_name;
    return d.row != nullptr ? std::string_view(user_name_of(*d.row)) : std::string_view();
}
proctimes::pid_t id_of(const display_row& d) { return d.key.tid.value_or(d.key.pid); }

// -1, 0, 1 as `a` sorts before, with or after `b` ascending.
int compare(const display_row& a, const display_row& b, column c) {
    const auto three = [](const auto& x, const auto& y) { return x < y ? -1 : (y < x ? 1 : 0); };
    switch (c) {
        case column::pid:
            if (a.what == display_row::kind::group) return three(a.members, b.members);
            return three(id_of(a), id_of(b));
        case column::user:
            return three(user_of(a), user_of(b));
        case column::state: {
            const char sa = a.row != nullptr ? a.row->state : ' ';
            const char sb = b.row != nullptr ? b.row->state : ' ';
            return three(sa, sb);
        }
        case column::cpu:
            return three(a.cpu, b.cpu);
        case column::kernel:
            return three(a.kernel, b.kernel);
        case column::user_time:
            return three(a.user, b.user);
        case column::threads:
            return three(a.threads, b.threads);
        case column::age: {
            // Older first ascending would read backwards: age grows as creation falls.
            const instant ca = a.row != nullptr ? a.row->creation : instant{};
            const instant cb = b.row != nullptr ? b.row->creation : instant{};
            return three(cb, ca);
        }
        case column::rss:
            return three(a.rss, b.rss);
        case column::command:
            return three(command_of(a), command_of(b));
    }
    return 0;
}

struct row_order {
    column c;
    bool descending;
    bool operator()(const display_row& a, const display_row& b) const {
        const int r = compare(a, b, c);
        if (r != 0) return descending ? r > 0 : r < 0;
        // Ties: by group name, then pid and tid ascending, whatever the direction.
        if (a.group_name != b.group_name) return a.group_name < b.group_name;
        if (a.key.pid != b.key.pid) return a.key.pid < b.key.pid;
        return a.key.tid.value_or(0) < b.key.tid.value_or(0);
    }
};

// A process's threads, sorted, each at `depth`.
void append_threads(std::vector<display_row>& out, const top_row& r, const view_state& s, int depth) {
    std::vector<display_row> threads;
    threads.reserve(r.thread_rows.size());
    for (const top_row& t : r.thread_rows) {
        display_row d = process_row(t);
        if (!d.key.tid) d.key.tid = t.pid;
        d.what = display_row::kind::thread;
        d.depth = depth;
        if (row_matches(d, s.filter)) threads.push_back(std::move(d));
    }
    std::stable_sort(threads.begin(), threads.end(), row_order{s.sort, s.descending});
    for (auto& t : threads) out.push_back(std::move(t));
}

std::vector<display_row> flat_rows(const top_frame& f, const view_state& s) {
    std::vector<display_row> rows;
    rows.reserve(f.rows.size());
    for (const top_row& r : f.rows) {
        display_row d = process_row(r);
        if (row_matches(d, s.filter)) rows.push_back(std::move(d));
    }
    std::stable_sort(rows.begin(), rows.end(), row_order{s.sort, s.descending});
    if (!s.all_threads) return rows;
    // A process listed shows all of its threads.
    view_state unfiltered = s;
    unfiltered.filter.clear();
    std::vector<display_row> out;
    out.reserve(rows.size());
    for (auto& d : rows) {
        const top_row* r = d.row;
        out.push_back(std::move(d));
        append_threads(out, *r, unfiltered, 1);
    }
    return out;
}

std::vector<display_row> thread_view(const top_frame& f, const view_state& s) {
    std::vector<display_row> out;
    const auto it =
        std::find_if(f.rows.begin(), f.rows.end(), [&](const top_row& r) { return r.pid == s.thread_of && !r.tid; });
    if (it == f.rows.end()) return out;
    if (it->thread_rows.empty()) {
        // The feed listed no thread: the process stands for its only (or unknown) threads.
        display_row d = process_row(*it);
        if (row_matches(d, s.filter)) out.push_back(std::move(d));
        return out;
    }
    append_threads(out, *it, s, 0);
    return out;
}

std::string group_key(const top_row& r, grouping g) {
    switch (g) {
        case grouping::program:
            return r.name;
        case grouping::user:
            return user_name_of(r);
        case grouping::cgroup:
            return r.cgroup.empty() ? std::string("(unknown)") : r.cgroup;
    }
    return {};
}

std::vector<display_row> grouped_rows(const top_frame& f, const view_state& s) {
    std::map<std::string, display_row> groups;
    for (const top_row& r : f.rows) {
        const display_row p = process_row(r);
        if (!row_matches(p, s.filter)) continue;
        std::string key = group_key(r, s.group);
        auto [it, fresh] = groups.try_emplace(key);
        display_row& g = it->second;
        if (fresh) {
            g.what = display_row::kind::group;
            g.group_name = key;
            g.key.group = std::move(key);
        }
        ++g.members;
        g.cpu += p.cpu;
        g.own_cpu += p.cpu;
        g.kernel += p.kernel;
        g.user += p.user;
        g.threads += p.threads;
        g.rss += p.rss;
        g.has_rss = g.has_rss || p.has_rss;
    }
    std::vector<display_row> rows;
    rows.reserve(groups.size());
    for (auto& [k, g] : groups) rows.push_back(std::move(g));
    std::stable_sort(rows.begin(), rows.end(), row_order{s.sort, s.descending});
    return rows;
}

std::vector<display_row> tree_rows(const top_frame& f, const view_state& s) {
    const std::size_t n = f.rows.size();
    std::unordered_map<proctimes::pid_t, std::size_t> index;
    index.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        // A pid ended and reused inside the interval: the live one is the parent.
        const auto [it, fresh] = index.try_emplace(f.rows[i].pid, i);
        if (!fresh && f.rows[it->second].ended && !f.rows[i].ended) it->second = i;
    }
    std::vector<std::vector<std::size_t>> children(n);
    std::vector<std::size_t> roots;
    for (std::size_t i = 0; i < n; ++i) {
        const top_row& r = f.rows[i];
        const auto p = index.find(r.ppid);
        if (p == index.end() || p->second == i || r.ppid == r.pid) {
            roots.push_back(i);
        } else {
            children[p->second].push_back(i);
        }
    }
    // Pre-order from the roots; a cycle of parents (never from a consistent
    // reading) is reached from none of them and is listed as roots.
    std::vector<display_row> node(n);
    for (std::size_t i = 0; i < n; ++i) node[i] = process_row(f.rows[i]);
    std::vector<std::size_t> order;
    order.reserve(n);
    std::vector<char> seen(n, 0);
    std::vector<std::size_t> parent(n, n);
    const auto walk = [&](std::size_t root) {
        std::vector<std::size_t> stack{root};
        seen[root] = 1;
        while (!stack.empty()) {
            const std::size_t i = stack.back();
            stack.pop_back();
            order.push_back(i);
            for (std::size_t c : children[i]) {
                if (seen[c] != 0) continue;
                seen[c] = 1;
                parent[c] = i;
                stack.push_back(c);
            }
        }
    };
    for (std::size_t r : roots) walk(r);
    for (std::size_t i = 0; i < n; ++i) {
        if (seen[i] != 0) continue;
        roots.push_back(i);
        walk(i);
    }
    // Subtree sums and the filter's verdict, children before parents.
    std::vector<char> keep(n, 0);
    for (std::size_t i = 0; i < n; ++i) keep[i] = row_matches(node[i], s.filter) ? 1 : 0;
    for (std::size_t k = order.size(); k-- > 0;) {
        const std::size_t i = order[k];
        const std::size_t p = parent[i];
        if (p == n) continue;
        node[p].cpu += node[i].cpu;
        if (keep[i] != 0) keep[p] = 1;
    }
    // Emit: siblings sorted (the subtree's CPU when sorting by CPU), depth first.
    const row_order less{s.sort, s.descending};
    const auto by_order = [&](std::size_t a, std::size_t b) { return less(node[a], node[b]); };
    std::vector<std::size_t> top_level;
    for (std::size_t r : roots)
        if (keep[r] != 0) top_level.push_back(r);
    std::stable_sort(top_level.begin(), top_level.end(), by_order);
    for (auto& c : children) std::stable_sort(c.begin(), c.end(), by_order);

    const char* const mid = s.utf8 ? "\u251c\u2500 " : "|- ";
    const char* const last = s.utf8 ? "\u2514\u2500 " : "`- ";
    const char* const bar = s.utf8 ? "\u2502  " : "|  ";
    view_state unfiltered = s;
    unfiltered.filter.clear();
    std::vector<display_row> out;
    out.reserve(n);
    // (node, depth, the ancestors' rails, last among its siblings)
    struct step {
        std::size_t i;
        int depth;
        std::string rails;
        bool last;
    };
    std::vector<step> stack;
    for (std::size_t k = top_level.size(); k-- > 0;) stack.push_back({top_level[k], 0, {}, true});
    while (!stack.empty()) {
        step st = std::move(stack.back());
        stack.pop_back();
        display_row d = std::move(node[st.i]);
        d.depth = st.depth;
        if (st.depth > 0) d.branch = st.rails + (st.last ? last : mid);
        std::string rails = st.depth == 0 ? std::string() : st.rails + (st.last ? "   " : bar);
        if (st.depth >= max_drawn_depth) rails = st.rails;  // deeper levels drawn at the same indent
        const top_row* r = d.row;
        out.push_back(std::move(d));
        if (s.all_threads && r != nullptr) {
            const std::size_t from = out.size();
            append_threads(out, *r, unfiltered, st.depth + 1);
            for (std::size_t k = from; k < out.size(); ++k) out[k].branch = rails + (k + 1 == out.size() ? last : mid);
        }
        std::vector<std::size_t> kids;
        for (std::size_t c : children[st.i])
            if (keep[c] != 0 && parent[c] == st.i) kids.push_back(c);
        for (std::size_t k = kids.size(); k-- > 0;)
            stack.push_back({kids[k], st.depth + 1, rails, k + 1 == kids.size()});
    }
    return out;
}

std::size_t scrolled_top(std::size_t cursor, std::size_t top, std::size_t count, std::size_t page) {
    if (page == 0) return cursor;
    if (cursor < top) top = cursor;
    if (cursor >= top + page) top = cursor + 1 - page;
    // No empty space below the last row while rows above are hidden.
    if (count >= page && top > count - page) top = count - page;
    if (count < page) top = 0;
    return top;
}

}  // namespace

std::string_view column_title(column c) noexcept {
    switch (c) {
        case column::pid:
            return "PID";
        case column::user:
            return "USER";
        case column::state:
            return "S";
        case column::cpu:
            return "CPU%";
        case column::kernel:
            return "KERNEL";
        case column::user_time:
            return "USER";
        case column::threads:
            return "THR";
        case column::age:
            return "AGE";
        case column::rss:
            return "RES";
        case column::command:
            return "COMMAND";
    }
    return "?";
}

double cpu_percent(nanoseconds cpu, nanoseconds interval) noexcept {
    if (interval.count() <= 0) return 0.0;
    return 100.0 * static_cast<double>(cpu.count()) / static_cast<double>(interval.count());
}

bool row_matches(const display_row& d, std::string_view needle) {
    if (needle.empty()) return true;
    if (d.what == display_row::kind::group) return contains_nocase(d.group_name, needle);
    if (d.row == nullptr) return false;
    const top_row& r = *d.row;
    if (contains_nocase(r.name, needle) || contains_nocase(r.command, needle) ||
        contains_nocase(user_name_of(r), needle))
        return true;
    if (contains_nocase(std::to_string(r.pid), needle)) return true;
    return r.tid && contains_nocase(std::to_string(*r.tid), needle);
}

std::vector<display_row> arrange(const top_frame& frame, const view_state& state) {
    switch (state.mode) {
        case view_mode::flat:
            return flat_rows(frame, state);
        case view_mode::tree:
            return tree_rows(frame, state);
        case view_mode::grouped:
            return grouped_rows(frame, state);
        case view_mode::threads:
            return thread_view(frame, state);
    }
    return {};
}

void place_cursor(view_state& s, const std::vector<display_row>& rows, std::size_t page, bool keep_key) {
    if (rows.empty()) {
        s.cursor = 0;
        s.top = 0;
        return;
    }
    bool found = false;
    if (keep_key && s.selected) {
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (rows[i].key == *s.selected) {
                s.cursor = i;
                found = true;
                break;
            }
        }
    }
    if (!found) {
        s.cursor = std::min(s.cursor, rows.size() - 1);
        // The selection stays on its process while it is listed; once it is
        // gone, the row now under the cursor is selected.
        s.selected = rows[s.cursor].key;
    }
    s.top = scrolled_top(s.cursor, s.top, rows.size(), page);
}

void select_row(view_state& s, const std::vector<display_row>& rows, std::size_t index, std::size_t page) {
    if (rows.empty()) {
        s.cursor = 0;
        s.top = 0;
        return;
    }
    s.cursor = std::min(index, rows.size() - 1);
    s.selected = rows[s.cursor].key;
    s.top = scrolled_top(s.cursor, s.top, rows.size(), page);
}

void move_cursor(view_state& s, const std::vector<display_row>& rows, std::ptrdiff_t delta, std::size_t page) {
    if (rows.empty()) return;
    const auto last = static_cast<std::ptrdiff_t>(rows.size() - 1);
    const std::ptrdiff_t at = std::clamp(static_cast<std::ptrdiff_t>(s.cursor) + delta, std::ptrdiff_t{0}, last);
    select_row(s, rows, static_cast<std::size_t>(at), page);
}

std::optional<std::size_t> find_row(const std::vector<display_row>& rows, std::string_view needle, std::size_t from) {
    if (rows.empty() || needle.empty()) return std::nullopt;
    const std::size_t n = rows.size();
    for (std::size_t k = 1; k <= n; ++k) {
        const std::size_t i = (from + k) % n;
        if (row_matches(rows[i], needle)) return i;
    }
    return std::nullopt;
}

}  // namespace proctimes::cli::top
