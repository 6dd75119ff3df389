// SPDX-License-Identifier: MIT
// The stub backend's exit records (src/backend/backend.hpp: exit_backend):
// it watches no task's exit, has no exit records and no listener for task
// ends.
#include <type_traits>

#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {
namespace {

class stub_exit_backend final : public exit_backend {
public:
    constexpr stub_exit_backend() noexcept = default;
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
static_assert(std::is_trivially_destructible_v<stub_exit_backend>);
constinit stub_exit_backend g_exit_backend;

}  // namespace

exit_backend& platform_exit_backend() noexcept { return g_exit_backend; }

}  // namespace proctimes::inline v1::detail
