// SPDX-License-Identifier: MIT
// tools/proctimes/record/replay.hpp — recorded history as a frame feed
// (top/frame.hpp), for `proctimes top --replay [--at TIME]`: the screen shows
// a recording's frames as it shows the live machine's, and steps through
// them with the keys.
//
//   auto feed = replay_feed::open(path, at);      // at: the --at instant, or the first interval
//   if (!feed) { print(feed.error().message); return 1; }
//   run_screen(**feed, ...);                      // next(): the following interval
//   (*feed)->step_back(); (*feed)->jump(t);        // the keys
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "record/store.hpp"
#include "top/frame.hpp"

namespace proctimes::cli::record {

class replay_feed final : public top::frame_feed {
public:
    /// Opens the store for reading and places the feed at the interval
    /// covering `at` (store::interval_at), or at the first interval. Errors:
    /// those of store::open_reader; not_found for an empty store.
    static outcome<std::unique_ptr<replay_feed>> open(const std::string& path, std::optional<instant> at = {});

    /// The first call gives the interval the feed was placed at; each later
    /// call the interval after the one shown last, at once (the recording is
    /// not paced by `interval`: the caller paces it). At the end of the
    /// recording, the last interval again, with a warning saying so; the
    /// intervals a recorder writes meanwhile come next. Errors: the store's,
    /// as errc::malformed_data (a corrupt store) or the native errno;
    /// last_error() says it in words.
    result<top::top_frame> next(std::chrono::nanoseconds interval) override;
    [[nodiscard]] bool live() const noexcept override { return false; }
    /// The screen's keys: step_back() / step_forward() for `by` -1 / 1 (more
    /// steps for larger values), jump() for seek().
    std::optional<result<top::top_frame>> step(int by) override;
    std::optional<result<top::top_frame>> seek(instant t) override;
    [[nodiscard]] std::string failure_text() const override { return last_error_; }

    /// The interval before (after) the one shown last; at an end, that end's
    /// interval with a warning. jump(): the interval covering `t`.
    outcome<top::top_frame> step_back();
    outcome<top::top_frame> step_forward();
    outcome<top::top_frame> jump(instant t);

    /// The message of the last failure of next().
    [[nodiscard]] const std::string& last_error() const noexcept { return last_error_; }
    [[nodiscard]] store& recording() noexcept { return store_; }

    explicit replay_feed(store s, top::top_frame first);

private:
    result<top::top_frame> as_result(outcome<top::top_frame> f);
    outcome<top::top_frame> show(outcome<top::top_frame> f, const char* at_end);

    store store_;
    std::optional<top::top_frame> pending_;  ///< the frame next() gives first
    instant shown_{};                        ///< when the interval shown last was taken
    std::string last_error_;
};

}  // namespace proctimes::cli::record
