// SPDX-License-Identifier: MIT
// The windows backend's exit settings (exit.hpp, proctimes/linux.hpp). There
// is no exit monitor to switch: an open handle keeps an ended process or
// thread readable, with its exit time, so nothing is lost while nobody
// watches. The switches keep what a program sets, so that it reads it back;
// exit records (taskstats, eBPF) are Linux's: not_supported.
#include <atomic>

#include "proctimes/exit.hpp"
#include "proctimes/linux.hpp"

namespace proctimes {

namespace {
std::atomic<bool> g_monitor{true};
std::atomic<int> g_records{-1};  // -1: not set, then the default decides
std::atomic<bool> g_records_default{false};
}  // namespace

void set_exit_monitor_enabled(bool on) noexcept { g_monitor.store(on, std::memory_order_relaxed); }
bool exit_monitor_enabled() noexcept { return g_monitor.load(std::memory_order_relaxed); }
void set_exit_records_enabled(bool on) noexcept { g_records.store(on ? 1 : 0, std::memory_order_relaxed); }
bool exit_records_enabled() noexcept {
    const int v = g_records.load(std::memory_order_relaxed);
    return v >= 0 ? v == 1 : g_records_default.load(std::memory_order_relaxed);
}
void set_exit_records_default(bool on) noexcept { g_records_default.store(on, std::memory_order_relaxed); }
std::error_code exit_records_status() noexcept { return make_error_code(errc::not_supported); }
void set_exit_records_bpf(bool) noexcept {}
bool exit_records_use_bpf() noexcept { return false; }

}  // namespace proctimes
