// SPDX-License-Identifier: MIT
// A whole file's text, for the tests that read /proc: empty when it cannot
// be read.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace testing_helpers {

inline std::string file_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace testing_helpers
