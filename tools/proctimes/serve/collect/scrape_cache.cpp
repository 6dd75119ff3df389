// SPDX-License-Identifier: MIT
#include "serve/collect/scrape_cache.hpp"

namespace proctimes::cli::serve {

bool scrape_cache::serves(clock::time_point now) const noexcept {
    return account_.collections > 0 && now - last_collect_ < shared_for;
}

void scrape_cache::collected(clock::time_point now) {
    last_collect_ = now;
    for (auto& t : text_) t.clear();
}

const std::string& scrape_cache::exposition(format f, const std::function<std::string(format)>& render) {
    std::string& text = text_[f == format::openmetrics_100 ? 1 : 0];
    // The same collection, in whichever format is asked for now.
    if (text.empty()) text = render(f);
    return text;
}

}  // namespace proctimes::cli::serve
