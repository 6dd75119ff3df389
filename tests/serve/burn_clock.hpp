// SPDX-License-Identifier: MIT
// The CPU burner's own clock (serve_load burn: a line "realtime_s cpu_s" every
// 100 ms), and what it says an exporter's counter may honestly have grown by
// between two scrapes. A sample's timestamp is its scrape's start; the
// exporter read the CPU at some instant of that scrape, up to its
// scrape_duration_seconds later (long under a sanitizer on a busy machine).
// Between the two reads the burner used no less than it had by the second
// scrape's start minus what it had by the first scrape's end, and no more
// than by the second's end minus by the first's start.
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"

namespace serve_test {

class burn_clock {
public:
    explicit burn_clock(const std::string& log) {
        std::istringstream in(read_text(log));
        for (double a = 0, b = 0; in >> a >> b;) lines_.emplace_back(a, b);
    }
    [[nodiscard]] std::size_t size() const { return lines_.size(); }
    [[nodiscard]] double first_time() const { return lines_.empty() ? 0 : lines_.front().first; }

    /// CPU used by wall-clock instant `when`: at least what the last line
    /// before it says.
    [[nodiscard]] double at_least(double when) const {
        double c = 0;
        for (const auto& [t, cpu] : lines_) {
            if (t > when) break;
            c = cpu;
        }
        return c;
    }
    /// At most what the first line after it says; past the last line, that
    /// line's plus the wall time since (one thread uses no more).
    [[nodiscard]] double at_most(double when) const {
        for (const auto& [t, cpu] : lines_)
            if (t >= when) return cpu;
        return lines_.empty() ? 0 : lines_.back().second + (when - lines_.back().first);
    }
    /// What a counter read during the scrape that began at `a` (and took
    /// `da` s) and again during the one that began at `b` (`db` s) can
    /// have grown by: [lo, hi]. `lag` covers the scheduling between a
    /// scrape's timestamp and its request.
    [[nodiscard]] std::pair<double, double> growth(double a, double da, double b, double db, double lag = 0.05) const {
        return {at_least(b) - at_most(a + da + lag), at_most(b + db + lag) - at_least(a)};
    }

private:
    std::vector<std::pair<double, double>> lines_;
};

}  // namespace serve_test
