// SPDX-License-Identifier: MIT
// The fields of `watch` over a scope (fields.hpp: watch_scope_fields,
// watch_totals_fields): the record of each process that ended, and the totals
// written when the watch stops. The fields shared with other commands come
// from the registry by name; the ones only this output has are here, spelled
// once, and listed in docs/CLI.md's "Field reference" like every other.
#include <array>
#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "output/fields.hpp"
#include "system.hpp"

namespace proctimes::cli {

namespace {

const scope_totals& totals_of(const task_record& r) {
    static const scope_totals none{};
    return r.totals ? *r.totals : none;
}

// A registered field, by its JSON name and table title.
const field* registered(std::string_view name, std::string_view title = {}) {
    for (const field* f : all_fields())
        if (f->name == name && f->title == title) return f;
    return nullptr;
}

void set_ns(field_value& v, std::chrono::nanoseconds d) { v.set_integer(d.count()); }
void set_optional_ns(field_value& v, const std::optional<std::chrono::nanoseconds>& d) {
    if (d) return v.set_integer(d->count());
    v.set_null();
}

// Time of day of the exit to the millisecond, "13:04:05.123": the date and
// zone are in JSON and CSV, and a line stays within 80 columns.
std::string time_of_day(const task_record& r, const output_options& o) {
    if (!r.exit) return "-";
    const auto ms = std::chrono::floor<std::chrono::milliseconds>(*r.exit);
    const std::time_t secs = std::chrono::system_clock::to_time_t(std::chrono::floor<std::chrono::seconds>(ms));
    std::tm tm{};
    long offset = 0;
    if (!sys::civil_fields(secs, o.utc, tm, offset)) return "?";
    const auto frac = (ms.time_since_epoch() % std::chrono::seconds{1}).count();
    return fmt::format("{:02}:{:02}:{:02}.{:03}", tm.tm_hour, tm.tm_min, tm.tm_sec, frac < 0 ? frac + 1000 : frac);
}

}  // namespace

namespace watch_scope_fields_registry {

// clang-format off

const field record{"record", "", align::left, 0, true,
                   [](const task_record& r, field_value& v) { v.set_text(r.totals ? "totals" : "exit"); }, nullptr};
const field end_source{"end_source", "", align::left, 0, true,
                       [](const task_record& r, field_value& v) {
                           if (r.scope) return v.set_text(to_string(r.scope->end_source));
                           if (r.totals) return v.set_text(to_string(r.totals->source));
                           v.set_absent();
                       },
                       nullptr};
// Table-only cells, narrower than the other commands' so that a line fits 80 columns.
const field owner{"", "OWNER", align::left, 8, true, nullptr,
                  [](const task_record& r, const output_options&) {
                      return r.ps ? escape_for_table(r.ps->user_name) : std::string("?");
                  }};
const field ended_at{"", "ENDED", align::left, 12, true, nullptr, time_of_day};
const field kernel{"", "KERNEL", align::right, 9, true, nullptr,
                   [](const task_record& r, const output_options&) { return human_duration(r.kernel); }};
const field user{"", "USER", align::right, 9, true, nullptr,
                 [](const task_record& r, const output_options&) { return human_duration(r.user); }};
// "final": the kernel's final values; "partial": exited_partial, the last
// values seen alive (lower bounds).
const field final_or_partial{"", "VALUES", align::left, 0, true, nullptr,
                             [](const task_record& r, const output_options&) {
                                 return std::string(r.state == task_state::exited ? "final" : "partial");
                             }};

// The totals.
const field watched_ns{"watched_ns", "", align::right, 0, true,
                       [](const task_record& r, field_value& v) { set_ns(v, totals_of(r).interval); }, nullptr};
const field ended_count{"ended", "", align::right, 0, true,
                  [](const task_record& r, field_value& v) { v.set_unsigned(totals_of(r).ended); }, nullptr};
const field ended_partial{"ended_partial", "", align::right, 0, true,
                          [](const task_record& r, field_value& v) { v.set_unsigned(totals_of(r).ended_partial); },
                          nullptr};
const field ended_kernel_ns{"ended_kernel_ns", "", align::right, 0, true,
                            [](const task_record& r, field_value& v) { set_ns(v, totals_of(r).ended_kernel); },
                            nullptr};
const field ended_user_ns{"ended_user_ns", "", align::right, 0, true,
                          [](const task_record& r, field_value& v) { set_ns(v, totals_of(r).ended_user); }, nullptr};
const field ended_during_ns{"ended_during_ns", "", align::right, 0, true,
                            [](const task_record& r, field_value& v) { set_ns(v, totals_of(r).ended_during); },
                            nullptr};
const field alive{"alive", "", align::right, 0, true,
                  [](const task_record& r, field_value& v) { v.set_unsigned(totals_of(r).alive); }, nullptr};
const field alive_kernel_ns{"alive_kernel_ns", "", align::right, 0, true,
                            [](const task_record& r, field_value& v) { set_ns(v, totals_of(r).alive_kernel); },
                            nullptr};
const field alive_user_ns{"alive_user_ns", "", align::right, 0, true,
                          [](const task_record& r, field_value& v) { set_ns(v, totals_of(r).alive_user); }, nullptr};
const field cgroup_cpu_ns{"cgroup_cpu_ns", "", align::right, 0, true,
                          [](const task_record& r, field_value& v) { set_optional_ns(v, totals_of(r).cgroup_cpu); },
                          nullptr};
const field unattributed_cpu_ns{
    "unattributed_cpu_ns", "", align::right, 0, true,
    [](const task_record& r, field_value& v) { set_optional_ns(v, totals_of(r).unattributed); }, nullptr};
const field lost_reports{"lost_reports", "", align::right, 0, true,
                         [](const task_record& r, field_value& v) { v.set_unsigned(totals_of(r).lost_reports); },
                         nullptr};

// clang-format on

}  // namespace watch_scope_fields_registry

std::span<const field* const> watch_scope_registered_fields() {
    using namespace watch_scope_fields_registry;
    static const std::array list{
        &record,           &end_source, &owner,           &ended_at,      &kernel,          &user,
        &final_or_partial, &watched_ns, &ended_count,     &ended_partial, &ended_kernel_ns, &ended_user_ns,
        &ended_during_ns,  &alive,      &alive_kernel_ns, &alive_user_ns, &cgroup_cpu_ns,   &unattributed_cpu_ns,
        &lost_reports};
    return list;
}

field_list watch_scope_fields(const output_options& opts) {
    using namespace watch_scope_fields_registry;
    output_options o = opts;
    o.state = true;
    o.exit_detail = true;
    o.threads = false;
    field_list l = record_fields(o);
    // record first; then the shared fields; then who, how the end was seen, and how it ended.
    l.json.insert(l.json.begin(), &record);
    l.csv.insert(l.csv.begin(), &record);
    for (const auto* f : {registered("ppid", "PPID"), registered("uid"), registered("user_name", "OWNER"),
                          static_cast<const field*>(&end_source), registered("exit_code"), registered("signal")}) {
        if (!f) continue;
        l.json.push_back(f);
        l.csv.push_back(f);
    }
    l.columns = {registered("pid", "PID"), registered("name", "NAME"), &owner, &ended_at, &kernel, &user,
                 &final_or_partial};
    std::erase(l.columns, nullptr);
    return l;
}

field_list watch_totals_fields() {
    using namespace watch_scope_fields_registry;
    field_list l;
    l.json = {&record,          &end_source,    &watched_ns,          &ended_count, &ended_partial,
              &ended_kernel_ns, &ended_user_ns, &ended_during_ns,     &alive,       &alive_kernel_ns,
              &alive_user_ns,   &cgroup_cpu_ns, &unattributed_cpu_ns, &lost_reports};
    l.csv = l.json;
    return l;
}

}  // namespace proctimes::cli
