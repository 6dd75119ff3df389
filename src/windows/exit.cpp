// SPDX-License-Identifier: MIT
// The windows backend's exit records (src/backend/backend.hpp: exit_backend).
// The switches themselves are portable (src/exit/settings.cpp); there is no
// exit monitor to switch here: an open handle keeps an ended process or
// thread readable, with its final values and exit time, so nothing is lost
// while nobody watches, and nothing needs reaping; waiters record the end.
// Exit records (taskstats, eBPF) and the system-wide exit stream are
// Linux's: not_supported.
#include <type_traits>

#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {
namespace {

class windows_exit_backend final : public exit_backend {
public:
    constexpr windows_exit_backend() noexcept = default;
    void watch(const task_core_ptr&) noexcept override {}
    void unwatch(const task_core_ptr&, bool) noexcept override {}
    void deliver() noexcept override {}
    void await(task_core&) noexcept override {}
    result<exit_stream_source> records_source() noexcept override { return make_error_code(errc::not_supported); }
    result<std::unique_ptr<exit_stream::impl>> open_stream(exit_stream_source) noexcept override {
        return make_error_code(errc::not_supported);
    }
};

// Never destroyed: usable by handles closed while the process exits.
static_assert(std::is_trivially_destructible_v<windows_exit_backend>);
constinit windows_exit_backend g_exit_backend;

}  // namespace

exit_backend& platform_exit_backend() noexcept { return g_exit_backend; }

}  // namespace proctimes::inline v1::detail
