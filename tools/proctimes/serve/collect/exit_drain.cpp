// SPDX-License-Identifier: MIT
#include "serve/collect/exit_drain.hpp"

#include <algorithm>

namespace proctimes::cli::serve {
namespace {

// Records with no snapshot after them are kept at most this many: a bound on
// memory if scrapes stop while tasks keep ending.
constexpr std::size_t max_pending = 1 << 20;

}  // namespace

exit_drain::exit_drain(exit_stream_source from) {
    // A collection takes the records itself (take_until): no wake-up of the
    // stream's thread per end.
    auto es = exit_stream::open(from, exit_stream_delivery::on_read);
    if (!es) {
        why_ = es.error().message();
        return;
    }
    stream_ = std::move(*es);
    // The eBPF stream's own thread keeps what it receives in memory (bounded,
    // overflow counted), so a collection takes its records there itself. The
    // taskstats socket needs a thread of its own to be read before the
    // kernel's buffer fills.
    if (stream_->source() != exit_stream_source::bpf) thread_ = std::thread([this] { loop(); });
}

exit_drain::~exit_drain() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void exit_drain::loop() {
    std::vector<ended_task> got;
    while (!stop_.load()) {
        auto w = stream_->wait(std::chrono::milliseconds(200));
        if (!w || !*w) continue;
        std::lock_guard lk(mu_);
        pull(got);
    }
}

void exit_drain::pull(std::vector<ended_task>& got) {
    got.clear();
    auto r = stream_->read(got);
    if (!r || !*r) ++lost_;
    for (auto& e : got) {
        if (pending_.size() >= max_pending) {
            ++dropped_;
            continue;
        }
        pending_.push_back(std::move(e));
    }
}

std::vector<ended_task> exit_drain::take_until(std::chrono::nanoseconds since_boot) {
    std::vector<ended_task> out;
    std::lock_guard lk(mu_);
    if (stream_ && !thread_.joinable()) pull(out);  // no thread: what the stream holds now
    auto split = std::stable_partition(pending_.begin(), pending_.end(), [since_boot](const ended_task& e) {
        return e.received_since_boot <= since_boot;
    });
    out.assign(pending_.begin(), split);
    pending_.erase(pending_.begin(), split);
    return out;
}

std::uint64_t exit_drain::lost() const {
    std::lock_guard lk(mu_);
    // eBPF: each end lost, exactly; taskstats says only that some were.
    if (stream_)
        if (const auto n = stream_->lost()) return *n + dropped_;
    return lost_ + dropped_;
}

}  // namespace proctimes::cli::serve
