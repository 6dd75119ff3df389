// SPDX-License-Identifier: MIT
// Reading a scrape in the text format, for the serve tests: one series'
// value, and the name this test process is grouped under.
#pragma once

#include <fstream>
#include <string>

namespace serve_testing {

/// The value of one series (name and labels, exactly as written) in a scrape,
/// or -1 when it is absent.
inline double value_of(const std::string& text, const std::string& series) {
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + 1 + series.size() + 1));
}

/// This process's name (comm): its group under --group-by name.
inline std::string own_comm() {
    std::ifstream in("/proc/self/comm");
    std::string s;
    std::getline(in, s);
    return s;
}

}  // namespace serve_testing
