// SPDX-License-Identifier: MIT
// The field registry (fields.hpp): each field of docs/CLI.md's "Field
// reference", once, with how to get it; then the field lists of the commands.
#include "fields.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <vector>

#include <fmt/format.h>

namespace proctimes::cli {

namespace {

using kind = field_value::kind;

const ps_values& ps_of(const task_record& r) {
    static const ps_values none{};
    return r.ps ? *r.ps : none;
}

const interval_values& used_of(const task_record& r) {
    static const interval_values none{};
    return r.used ? *r.used : none;
}

// FILETIME ticks of an instant, or null (while running, or out of FILETIME's range).
void set_ticks(field_value& v, const std::optional<instant>& t) {
    const auto ticks = t ? filetime_ticks(*t) : std::nullopt;
    if (ticks) {
        v.set_unsigned(*ticks);
    } else {
        v.set_null();
    }
}

// RFC 3339 UTC, or null.
void set_time(field_value& v, const std::optional<instant>& t) {
    if (!t) return v.set_null();
    v.type = kind::text;
    v.text.clear();
    append_rfc3339_utc(v.text, *t);
}

// Table cells.
std::string on_process_row(const task_record& r, long long n) { return r.tid ? std::string() : std::to_string(n); }
std::string duration_cell(std::chrono::nanoseconds d) { return human_duration(d); }

// Run's fields: absent on thread records (JSON leaves them out, CSV leaves the
// columns empty).
template <typename F>
void with_run(const task_record& r, field_value& v, F f) {
    if (r.run) {
        f(*r.run);
    } else {
        v.set_absent();
    }
}

// exit_code and signal: of run's command, or of a process watch saw end in its
// scope; absent on other records.
void set_exit_status(const task_record& r, field_value& v, std::optional<int> run_values::*of_run,
                     std::optional<int> scope_values::*of_scope) {
    const std::optional<int>* x = r.run ? &(*r.run.*of_run) : r.scope ? &(*r.scope.*of_scope) : nullptr;
    if (!x) return v.set_absent();
    if (*x) return v.set_integer(**x);
    v.set_null();
}

}  // namespace

// ---- the registry --------------------------------------------------------------
//
// Every task record.

namespace fields {

// The registry is a table: one field per entry, its parts on as few lines as
// they read best, which an automatic layout would spread one argument a line.
// clang-format off

const field pid{
    "pid", "PID", align::right, 7, true, [](const task_record& r, field_value& v) { v.set_integer(r.pid); },
    [](const task_record& r, const output_options&) { return on_process_row(r, r.pid); }};
const field tid{"tid", "TID", align::right, 0, true,
                [](const task_record& r, field_value& v) {
                    // A process record has no tid member in JSON (an empty CSV column).
                    if (r.tid) {
                        v.set_integer(*r.tid);
                    } else {
                        v.set_absent();
                    }
                },
                [](const task_record& r, const output_options&) {
                    return r.tid ? std::to_string(*r.tid) : std::string();
                }};
const field name{"name", "NAME", align::left, 15, true,
                 [](const task_record& r, field_value& v) { v.set_text(r.name); },
                 [](const task_record& r, const output_options&) {
                     std::string cell = r.tid ? "  " : "";  // threads indented under their process
                     cell += escape_for_table(r.name);
                     return cell;
                 }};
const field creation_filetime{"creation_filetime", "", align::right, 0, true,
                              [](const task_record& r, field_value& v) { set_ticks(v, r.creation); }, nullptr};
const field exit_filetime{"exit_filetime", "", align::right, 0, true,
                          [](const task_record& r, field_value& v) { set_ticks(v, r.exit); }, nullptr};
const field creation_time{"creation_time", "CREATED", align::left, 0, true,
                          [](const task_record& r, field_value& v) { set_time(v, r.creation); },
                          [](const task_record& r, const output_options& o) { return table_time(r.creation, o.utc); }};
const field exit_time{"exit_time", "EXITED", align::left, 33, true,
                      [](const task_record& r, field_value& v) { set_time(v, r.exit); },
                      [](const task_record& r, const output_options& o) {
                          // "<= " for an observed instant only where the exit detail is written.
                          if (o.exit_detail) return table_exit(r, o.utc);
                          return r.exit ? table_time(*r.exit, o.utc) : std::string("-");
                      }};
const field exit_source{"exit_source", "", align::left, 0, true,
                        [](const task_record& r, field_value& v) {
                            if (r.exit) {
                                v.set_text(std::string(to_string(r.exit_source)));
                            } else {
                                v.set_null();
                            }
                        },
                        nullptr};
const field exit_earliest_filetime{
    "exit_earliest_filetime", "", align::right, 0, true,
    [](const task_record& r, field_value& v) { set_ticks(v, r.exit ? r.exit_earliest : std::nullopt); }, nullptr};
const field exit_earliest_time{
    "exit_earliest_time", "", align::left, 0, true,
    [](const task_record& r, field_value& v) { set_time(v, r.exit ? r.exit_earliest : std::nullopt); }, nullptr};
const field exit_resolution_ns{"exit_resolution_ns", "", align::right, 0, true,
                               [](const task_record& r, field_value& v) {
                                   if (r.exit) {
                                       v.set_integer(r.exit_resolution.count());
                                   } else {
                                       v.set_null();
                                   }
                               },
                               nullptr};
const field kernel_ns{"kernel_ns", "KERNEL", align::right, 10, true,
                      [](const task_record& r, field_value& v) { v.set_integer(r.kernel.count()); },
                      [](const task_record& r, const output_options&) { return duration_cell(r.kernel); }};
const field user_ns{"user_ns", "USER", align::right, 10, true,
                    [](const task_record& r, field_value& v) { v.set_integer(r.user.count()); },
                    [](const task_record& r, const output_options&) { return duration_cell(r.user); }};
const field resolution_ns{"resolution_ns", "RES", align::right, 6, true,
                          [](const task_record& r, field_value& v) { v.set_integer(r.resolution.count()); },
                          [](const task_record& r, const output_options&) { return duration_cell(r.resolution); }};
const field total_resolution_ns{
    "total_resolution_ns", "", align::right, 0, true,
    [](const task_record& r, field_value& v) { v.set_integer(r.total_resolution.count()); }, nullptr};
const field source{"source", "", align::left, 0, true,
                   [](const task_record& r, field_value& v) { v.set_text(source_text(r)); }, nullptr};
const field state{"state", "STATE", align::left, 0, true,
                  [](const task_record& r, field_value& v) { v.set_text(state_text(r)); },
                  [](const task_record& r, const output_options&) { return state_text(r); }};
const field sampled_at_time{"sampled_at_time", "", align::left, 0, true,
                            [](const task_record& r, field_value& v) { set_time(v, r.sampled_at); }, nullptr};

// watch's STATE: the state, and what it says about the end when that is not
// plain (the table is its only report, so it says more than run's).
const field state_detail{
    "", "STATE", align::left, 0, true, nullptr, [](const task_record& r, const output_options& o) {
        std::string s = state_text(r);
        if (r.state == task_state::exited_partial && r.sampled_at)
            s += fmt::format(" (last sampled at {})", table_time(*r.sampled_at, o.utc));
        // An observed instant is "no later than" (the "<=" of EXITED): say how
        // early the end can have been when that is more than a millisecond before.
        if (r.exit_source == proctimes::exit_source::observed && r.exit_earliest && r.exit_resolution >= std::chrono::milliseconds{1})
            s += fmt::format(" (ended after {})", table_time(*r.exit_earliest, o.utc));
        return s;
    }};

// ps.

const field ppid{"ppid", "PPID", align::right, 0, true,
                 [](const task_record& r, field_value& v) { v.set_integer(ps_of(r).ppid); },
                 [](const task_record& r, const output_options&) { return on_process_row(r, ps_of(r).ppid); }};
const field uid{"uid", "", align::right, 0, true,
                [](const task_record& r, field_value& v) {
                    if (const auto& u = ps_of(r).uid) {
                        v.set_unsigned(*u);
                    } else {
                        v.set_null();
                    }
                },
                nullptr};
const field user_name{"user_name", "OWNER", align::left, 0, true,
                      [](const task_record& r, field_value& v) { v.set_text(ps_of(r).user_name); },
                      [](const task_record& r, const output_options&) { return escape_for_table(ps_of(r).user_name); }};
const field proc_state{"proc_state", "S", align::left, 0, true,
                       [](const task_record& r, field_value& v) {
                           v.type = field_value::kind::text;
                           v.text.assign(1, ps_of(r).proc_state);
                       },
                       [](const task_record& r, const output_options&) {
                           return escape_for_table(std::string_view(&ps_of(r).proc_state, 1));
                       }};

// ps --interval: the CPU used over the interval. The table shows "-" for a
// record without it.

const field interval_ns{"interval_ns", "", align::right, 0, true,
                        [](const task_record& r, field_value& v) { v.set_integer(used_of(r).interval.count()); },
                        nullptr};
const field interval_kernel_ns{
    "interval_kernel_ns", "KERNEL", align::right, 0, true,
    [](const task_record& r, field_value& v) { v.set_integer(used_of(r).kernel.count()); },
    [](const task_record& r, const output_options&) { return r.used ? duration_cell(r.used->kernel) : "-"; }};
const field interval_user_ns{
    "interval_user_ns", "USER", align::right, 0, true,
    [](const task_record& r, field_value& v) { v.set_integer(used_of(r).user.count()); },
    [](const task_record& r, const output_options&) { return r.used ? duration_cell(r.used->user) : "-"; }};
const field cpu_percent{
    "cpu_percent", "CPU%", align::right, 0, true,
    [](const task_record& r, field_value& v) { v.set_real(used_of(r).cpu_percent, 3); },
    [](const task_record& r, const output_options&) {
        return r.used ? fmt::format("{:.1f}", r.used->cpu_percent) : std::string("-");
    }};
const field basis{"basis", "", align::left, 0, true,
                  [](const task_record& r, field_value& v) { v.set_text(to_string(used_of(r).basis)); }, nullptr};

// ps --interval: the children a process reaped in the interval (the growth of
// its cutime/cstime); null where the snapshot source does not read them, and
// on thread records.
void set_children(field_value& v, const task_record& r, bool kernel) {
    const auto& c = kernel ? used_of(r).children_kernel : used_of(r).children_user;
    if (c && !r.tid) {
        v.set_integer(c->count());
    } else {
        v.set_null();
    }
}
const field interval_children_kernel_ns{
    "interval_children_kernel_ns", "", align::right, 0, true,
    [](const task_record& r, field_value& v) { set_children(v, r, true); }, nullptr};
const field interval_children_user_ns{
    "interval_children_user_ns", "", align::right, 0, true,
    [](const task_record& r, field_value& v) { set_children(v, r, false); }, nullptr};
const field children_cell{
    "", "CHILD", align::right, 0, true, nullptr, [](const task_record& r, const output_options&) {
        const auto& u = used_of(r);
        if (r.tid || !u.children_kernel || !u.children_user) return std::string(r.tid ? "" : "-");
        return duration_cell(*u.children_kernel + *u.children_user);
    }};

// run: the command's record only.

const field command{"command", "", align::left, 0, false,
                    [](const task_record& r, field_value& v) {
                        with_run(r, v, [&](const run_values& x) { v.set_list(x.command); });
                    },
                    nullptr};
const field elapsed_ns{"elapsed_ns", "", align::right, 0, true,
                       [](const task_record& r, field_value& v) {
                           with_run(r, v, [&](const run_values& x) { v.set_integer(x.elapsed.count()); });
                       },
                       nullptr};
const field wall_ns{"wall_ns", "", align::right, 0, true,
                    [](const task_record& r, field_value& v) {
                        with_run(r, v, [&](const run_values& x) { v.set_integer(x.wall.count()); });
                    },
                    nullptr};
const field run_cpu_percent{"cpu_percent", "", align::right, 0, true,
                            [](const task_record& r, field_value& v) {
                                with_run(r, v, [&](const run_values& x) { v.set_real(x.cpu_percent, 2); });
                            },
                            nullptr};
const field children_kernel_ns{"children_kernel_ns", "", align::right, 0, true,
                               [](const task_record& r, field_value& v) {
                                   with_run(r, v, [&](const run_values& x) { v.set_integer(x.children_kernel.count()); });
                               },
                               nullptr};
const field children_user_ns{"children_user_ns", "", align::right, 0, true,
                             [](const task_record& r, field_value& v) {
                                 with_run(r, v, [&](const run_values& x) { v.set_integer(x.children_user.count()); });
                             },
                             nullptr};
const field max_rss_kib{"max_rss_kib", "", align::right, 0, true,
                        [](const task_record& r, field_value& v) {
                            with_run(r, v, [&](const run_values& x) { v.set_integer(x.max_rss_kib); });
                        },
                        nullptr};
const field exit_code{"exit_code", "", align::right, 0, true,
                      [](const task_record& r, field_value& v) {
                          set_exit_status(r, v, &run_values::exit_code, &scope_values::exit_code);
                      },
                      nullptr};
const field exit_signal{"signal", "", align::right, 0, true,
                   [](const task_record& r, field_value& v) {
                       set_exit_status(r, v, &run_values::signal, &scope_values::signal);
                   },
                   nullptr};
const field core_dumped{"core_dumped", "", align::left, 0, false,
                        [](const task_record& r, field_value& v) {
                            with_run(r, v, [&](const run_values& x) { v.set_boolean(x.core_dumped); });
                        },
                        nullptr};
const field warnings{"warnings", "", align::left, 0, false,
                     [](const task_record& r, field_value& v) {
                         // Only when the report lacks something.
                         with_run(r, v, [&](const run_values& x) {
                             if (x.warnings.empty()) {
                                 v.set_absent();
                             } else {
                                 v.set_list(x.warnings);
                             }
                         });
                     },
                     nullptr};
const field thread_poll_interval_ns{
    "thread_poll_interval_ns", "", align::right, 0, false,
    [](const task_record& r, field_value& v) {
        with_run(r, v, [&](const run_values& x) { v.set_integer(x.thread_poll_interval.count()); });
    },
    nullptr};
const field threads_unattributed_cpu_ns{
    "threads_unattributed_cpu_ns", "", align::right, 0, false,
    [](const task_record& r, field_value& v) {
        with_run(r, v, [&](const run_values& x) { v.set_integer(x.threads_unattributed.count()); });
    },
    nullptr};

// clang-format on

}  // namespace fields

// ---- the field lists -----------------------------------------------------------

field_list record_fields(const output_options& opts) {
    using namespace fields;
    field_list l;
    l.threads = opts.threads;
    const std::initializer_list<const field*> identity = {&pid,           &tid,           &name,     &creation_filetime,
                                                          &exit_filetime, &creation_time, &exit_time};
    const std::initializer_list<const field*> exit_detail = {&exit_source, &exit_earliest_filetime, &exit_earliest_time,
                                                             &exit_resolution_ns};
    const std::initializer_list<const field*> cpu = {&kernel_ns, &user_ns, &resolution_ns, &total_resolution_ns,
                                                     &source};
    const auto add = [&](std::initializer_list<const field*> fs) {
        for (const field* f : fs) {
            l.json.push_back(f);
            l.csv.push_back(f);
        }
    };
    add(identity);
    // ps --interval lists ended tasks: what their exit_time promises follows
    // it in JSON, and comes after `basis` in CSV (columns are appended).
    const bool ps_exit_source = opts.ps && opts.interval && !opts.exit_detail;
    if (opts.exit_detail)
        for (const field* f : exit_detail) l.json.push_back(f);
    if (ps_exit_source) l.json.push_back(&exit_source);
    add(cpu);
    if (opts.exit_detail)
        for (const field* f : exit_detail) l.csv.push_back(f);
    if (opts.state) add({&state, &sampled_at_time});
    if (opts.ps) {
        add({&ppid, &uid, &user_name, &proc_state});
        if (opts.interval) add({&interval_ns, &interval_kernel_ns, &interval_user_ns, &cpu_percent, &basis});
        if (ps_exit_source) l.csv.push_back(&exit_source);
        if (opts.interval && opts.children) add({&interval_children_kernel_ns, &interval_children_user_ns});
    }

    l.columns = {&pid};
    if (opts.threads) l.columns.push_back(&tid);
    if (opts.ps) {
        // PID [TID] [PPID] OWNER S [CREATED | CPU%] KERNEL USER RES NAME: the
        // name last (its width varies most); KERNEL and USER of the interval.
        if (!opts.interval) l.columns.push_back(&ppid);
        l.columns.insert(l.columns.end(), {&user_name, &proc_state});
        if (opts.interval) {
            l.columns.insert(l.columns.end(), {&cpu_percent, &interval_kernel_ns, &interval_user_ns});
            if (opts.children) l.columns.push_back(&children_cell);
        } else {
            l.columns.insert(l.columns.end(), {&creation_time, &kernel_ns, &user_ns});
        }
        l.columns.insert(l.columns.end(), {&resolution_ns, &name});
    } else {
        l.columns.insert(l.columns.end(), {&name, &creation_time, &exit_time, &kernel_ns, &user_ns, &resolution_ns});
        if (opts.state) l.columns.push_back(&state);
    }
    return l;
}

field_list run_fields(const output_options& opts) {
    using namespace fields;
    field_list l = record_fields(opts);
    l.json.insert(l.json.end(), {&command, &elapsed_ns, &wall_ns, &run_cpu_percent, &children_kernel_ns,
                                 &children_user_ns, &max_rss_kib, &exit_code, &exit_signal, &core_dumped, &warnings});
    if (opts.threads) l.json.insert(l.json.end(), {&thread_poll_interval_ns, &threads_unattributed_cpu_ns});
    for (const field* f : l.json)
        if (f->csv && std::find(l.csv.begin(), l.csv.end(), f) == l.csv.end()) l.csv.push_back(f);
    return l;
}

field_list watch_fields(const output_options& opts) {
    using namespace fields;
    field_list l = record_fields(opts);
    l.columns = {&pid, &name, &exit_time, &kernel_ns, &user_ns, &resolution_ns, &state_detail};
    return l;
}

std::span<const field* const> all_fields() {
    using namespace fields;
    static const std::array list{&pid,
                                 &tid,
                                 &name,
                                 &creation_filetime,
                                 &exit_filetime,
                                 &creation_time,
                                 &exit_time,
                                 &exit_source,
                                 &exit_earliest_filetime,
                                 &exit_earliest_time,
                                 &exit_resolution_ns,
                                 &kernel_ns,
                                 &user_ns,
                                 &resolution_ns,
                                 &total_resolution_ns,
                                 &source,
                                 &state,
                                 &sampled_at_time,
                                 &state_detail,
                                 &ppid,
                                 &uid,
                                 &user_name,
                                 &proc_state,
                                 &interval_ns,
                                 &interval_kernel_ns,
                                 &interval_user_ns,
                                 &cpu_percent,
                                 &basis,
                                 &interval_children_kernel_ns,
                                 &interval_children_user_ns,
                                 &children_cell,
                                 &command,
                                 &elapsed_ns,
                                 &wall_ns,
                                 &run_cpu_percent,
                                 &children_kernel_ns,
                                 &children_user_ns,
                                 &max_rss_kib,
                                 &exit_code,
                                 &exit_signal,
                                 &core_dumped,
                                 &warnings,
                                 &thread_poll_interval_ns,
                                 &threads_unattributed_cpu_ns};
    // Then those of `watch` over a scope (watch_fields.cpp).
    static const std::vector<const field*> with_watch = [] {
        std::vector<const field*> l(list.begin(), list.end());
        const auto more = watch_scope_registered_fields();
        l.insert(l.end(), more.begin(), more.end());
        return l;
    }();
    return with_watch;
}

}  // namespace proctimes::cli
