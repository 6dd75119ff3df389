// SPDX-License-Identifier: MIT
// The stub backend's eBPF answers: no such source here.
#include "platform_exit_stream.hpp"
#include "proctimes/snapshot.hpp"

namespace proctimes::inline v1 {
namespace detail {

struct bpf_exit_stream::impl {};

// The callback is taken by value as platform_exit_stream.hpp declares it (the
// Linux source keeps it); this one never uses it.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
result<std::unique_ptr<bpf_exit_stream>> bpf_exit_stream::start(callback, lost_callback, bool) noexcept {
    return make_error_code(errc::not_supported);
}
bpf_exit_stream::~bpf_exit_stream() = default;
std::uint64_t bpf_exit_stream::dropped() const noexcept { return 0; }
std::uint64_t bpf_exit_stream::unnamed_lost() const noexcept { return 0; }
std::uint64_t bpf_exit_stream::unstamped() const noexcept { return 0; }
bool bpf_exit_stream::settle(std::chrono::nanoseconds, std::chrono::nanoseconds,
                             std::chrono::steady_clock::time_point) const {
    return true;
}
bpf_exit_stream::counters bpf_exit_stream::count() const noexcept { return {}; }
std::uint64_t exit_records_bpf_lost() noexcept { return 0; }

}  // namespace detail

bpf_source_status bpf_snapshot_status() noexcept {
    bpf_source_status st;
    st.reason = "no eBPF on this platform";
    return st;
}

}  // namespace proctimes::inline v1
