// SPDX-License-Identifier: MIT
#include "record/replay.hpp"

#include <system_error>

namespace proctimes::cli::record {

replay_feed::replay_feed(store s, top::top_frame first)
    : store_(std::move(s)), pending_(std::move(first)), shown_(pending_->taken) {}

outcome<std::unique_ptr<replay_feed>> replay_feed::open(const std::string& path, std::optional<instant> at) {
    auto s = store::open_reader(path);
    if (!s) return s.error();
    auto span = s->span();
    if (!span) return span.error();
    if (span->intervals == 0) return error{error_kind::not_found, "the store " + path + " holds no intervals yet"};
    auto first = s->interval_at(at.value_or(span->first));
    if (!first) return first.error();
    return std::make_unique<replay_feed>(std::move(*s), std::move(*first));
}

outcome<top::top_frame> replay_feed::show(outcome<top::top_frame> f, const char* at_end) {
    if (f) {
        shown_ = f->taken;
        return f;
    }
    if (f.error().kind != error_kind::not_found) return f;
    // At an end: the interval shown last, saying so.
    auto again = store_.interval_at(shown_);
    if (!again) return again;
    again->warnings.emplace_back(at_end);
    shown_ = again->taken;
    return again;
}

result<top::top_frame> replay_feed::next(std::chrono::nanoseconds) {
    if (pending_) {
        auto f = std::move(*pending_);
        pending_.reset();
        return f;
    }
    return as_result(step_forward());
}

std::optional<result<top::top_frame>> replay_feed::step(int by) {
    if (by == 0) return as_result(store_.interval_at(shown_));
    outcome<top::top_frame> f = by < 0 ? step_back() : step_forward();
    for (int i = by < 0 ? -by : by; i > 1 && f; --i) f = by < 0 ? step_back() : step_forward();
    return as_result(std::move(f));
}

std::optional<result<top::top_frame>> replay_feed::seek(instant t) { return as_result(jump(t)); }

result<top::top_frame> replay_feed::as_result(outcome<top::top_frame> f) {
    if (f) return std::move(*f);
    last_error_ = f.error().message;
    if (f.error().kind == error_kind::corrupt) return errc::malformed_data;
    if (f.error().kind == error_kind::busy) return std::make_error_code(std::errc::device_or_resource_busy);
    return std::make_error_code(std::errc::io_error);
}

outcome<top::top_frame> replay_feed::step_back() {
    pending_.reset();
    return show(store_.previous(shown_), "the first recorded interval");
}

outcome<top::top_frame> replay_feed::step_forward() {
    pending_.reset();
    return show(store_.next(shown_), "the last recorded interval");
}

outcome<top::top_frame> replay_feed::jump(instant t) {
    pending_.reset();
    return show(store_.interval_at(t), "the last recorded interval");
}

}  // namespace proctimes::cli::record
