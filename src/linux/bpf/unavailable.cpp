// SPDX-License-Identifier: MIT
// The eBPF source when it is not built (PROCTIMES_BPF=OFF, or the build
// machine lacked clang, bpftool or libbpf): every request for it falls back to
// /proc, and bpf_snapshot_status() says why.
#include "linux/bpf/snapshot_source.hpp"

namespace proctimes::inline v1 {
namespace detail {

struct bpf_task_iter {};
struct bpf_snapshot_source::buffers {};

bpf_snapshot_source::bpf_snapshot_source() noexcept = default;
bpf_snapshot_source::bpf_snapshot_source(bpf_snapshot_source&&) noexcept = default;
bpf_snapshot_source& bpf_snapshot_source::operator=(bpf_snapshot_source&&) noexcept = default;
bpf_snapshot_source::~bpf_snapshot_source() = default;

result<bpf_snapshot_source> bpf_snapshot_source::open(const snapshot_options&, bool) noexcept {
    return bpf_snapshot_source{};
}

result<void> bpf_snapshot_source::take(snapshot&, const snapshot_options&) noexcept {
    return make_error_code(errc::not_supported);
}

std::size_t bpf_snapshot_source::walk_ring_bytes() const noexcept { return 0; }

}  // namespace detail

bpf_source_status bpf_snapshot_status() noexcept {
    bpf_source_status st;
    st.reason = "not built (configured with PROCTIMES_BPF=OFF, or clang, bpftool or libbpf was missing)";
    return st;
}

}  // namespace proctimes::inline v1

#include "linux/bpf/exit_ring_reader.hpp"

namespace proctimes::inline v1::detail {

struct bpf_exit_stream::impl {};

// The callback is taken by value as linux/bpf/exit_ring_reader.hpp declares it.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
result<std::unique_ptr<bpf_exit_stream>> bpf_exit_stream::start(callback, lost_callback, bool, bool) noexcept {
    return make_error_code(errc::not_supported);
}
void bpf_exit_stream::take_waiting() noexcept {}
bpf_exit_stream::~bpf_exit_stream() = default;
std::uint64_t bpf_exit_stream::dropped() const noexcept { return 0; }
std::uint64_t bpf_exit_stream::unnamed_lost() const noexcept { return 0; }
std::uint64_t bpf_exit_stream::unstamped() const noexcept { return 0; }
bool bpf_exit_stream::settle(std::chrono::nanoseconds, std::chrono::nanoseconds,
                             std::chrono::steady_clock::time_point) const {
    return true;
}
bpf_exit_stream::counters bpf_exit_stream::count() const noexcept { return {}; }

}  // namespace proctimes::inline v1::detail

#include "linux/bpf/tree_source.hpp"

namespace proctimes::inline v1::detail {

struct bpf_tree_recorder::impl {};

std::unique_ptr<bpf_tree_recorder> bpf_tree_recorder::open(std::string& why) {
    why = "bpf: not built (configured with PROCTIMES_BPF=OFF, or without clang, bpftool or libbpf)";
    return nullptr;
}
bpf_tree_recorder::bpf_tree_recorder() = default;
bpf_tree_recorder::~bpf_tree_recorder() = default;
bool bpf_tree_recorder::track(pid_t) noexcept { return false; }
void bpf_tree_recorder::run(child&, result<child_exit>&, process_tree&, const tree_options&) {}
std::chrono::nanoseconds bpf_tree_recorder::orphans_rusage() const noexcept { return {}; }

}  // namespace proctimes::inline v1::detail
