// SPDX-License-Identifier: MIT
// The exit switches of proctimes/exit.hpp: portable policy. Each switch is
// its setter's choice, else its variable's (settings.hpp), else its default;
// a backend only says whether its exit-record listener is registered and
// which it is (backend/backend.hpp: exit_backend::records_source), and reads
// the switches through the public getters and exit_records_bpf_wanted().
#include "settings.hpp"
#include "backend/backend.hpp"
#include "exit/failures.hpp"
#include "proctimes/exit.hpp"

namespace proctimes::inline v1 {
namespace detail {
namespace {

constinit switch_setting g_monitor{"PROCTIMES_EXIT_MONITOR", true};
constinit switch_setting g_records{"PROCTIMES_EXIT_RECORDS", false};
// Off unless asked for (for now): loading costs tens of ms and ~10
// descriptors, and callers that tuned for taskstats keep what they had.
constinit switch_setting g_records_bpf{"PROCTIMES_EXIT_RECORDS_BPF", false};

}  // namespace

bool exit_records_bpf_wanted() noexcept { return g_records_bpf.on(); }

}  // namespace detail

void set_exit_monitor_enabled(bool on) noexcept { detail::g_monitor.set(on); }
bool exit_monitor_enabled() noexcept { return detail::g_monitor.on(); }

void set_exit_records_enabled(bool on) noexcept { detail::g_records.set(on); }
bool exit_records_enabled() noexcept { return detail::g_records.on(); }
void set_exit_records_default(bool on) noexcept { detail::g_records.set_default(on); }
void set_exit_records_bpf(bool on) noexcept { detail::g_records_bpf.set(on); }

std::error_code exit_records_status() noexcept {
    const bool records = exit_records_enabled();
    // Off because the variable's value was refused: say so.
    if (!records && detail::g_records.invalid_value_ignored()) return make_error_code(errc::invalid_argument);
    if (!records || !exit_monitor_enabled()) return make_error_code(errc::not_supported);
    const auto source = detail::platform_exit_backend().records_source();
    return source ? std::error_code{} : source.error();
}

std::error_code exit_records_status(exit_failures& failures) noexcept {
    const std::error_code why = exit_records_status();
    failures = detail::exit_failure_counts();  // after: a failure of the status query itself is in
    return why;
}

bool exit_records_use_bpf() noexcept {
    if (!exit_monitor_enabled() || !exit_records_enabled()) return false;
    const auto source = detail::platform_exit_backend().records_source();
    return source && *source == exit_stream_source::bpf;
}

}  // namespace proctimes::inline v1
