// SPDX-License-Identifier: MIT
// The scrape cache, what one collection leaves for the scrapes after it: a
// scrape that comes within 100 ms of the end of the last collection is served that
// collection's exposition (rendered once per format, when first asked for)
// rather than collecting again; and the account of the collections made
// (how many, how many failed, the last one's duration and size), which the
// proctimes_scrape_* families report. Not thread-safe: the collector
// serialises scrapes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "serve/collect/exposition.hpp"

namespace proctimes::cli::serve {

/// The collections made so far.
struct collection_account {
    std::uint64_t collections = 0;  ///< collections that read a snapshot
    std::uint64_t failures = 0;     ///< collections that could not read one
    double last_duration = 0;       ///< wall time of the last one that read a snapshot, seconds
    std::size_t tasks_read = 0;     ///< processes that snapshot listed
    std::size_t threads_read = 0;   ///< threads it listed
};

class scrape_cache {
public:
    using clock = std::chrono::steady_clock;
    /// Scrapes closer than this to the last collection share it.
    static constexpr std::chrono::milliseconds shared_for{100};

    /// Whether a scrape at `now` is served from the last collection: one
    /// has read a snapshot, and the last collection ended less than
    /// shared_for before `now`.
    [[nodiscard]] bool serves(clock::time_point now) const noexcept;
    /// A collection ended at `now`: the expositions of the one before are dropped.
    void collected(clock::time_point now);
    /// The last collection's exposition in format `f`; `render(f)` makes it
    /// the first time it is asked for.
    const std::string& exposition(format f, const std::function<std::string(format)>& render);

    [[nodiscard]] collection_account& account() noexcept { return account_; }
    [[nodiscard]] const collection_account& account() const noexcept { return account_; }

private:
    clock::time_point last_collect_{};
    collection_account account_;
    std::string text_[2];  ///< by format: the 0.0.4 text format, OpenMetrics
};

}  // namespace proctimes::cli::serve
