// SPDX-License-Identifier: MIT
// The CLI run in-process (proctimes::cli::run), its exit status and both
// output streams captured: shared by the CLI tests.
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"

namespace cli_testing {

struct cli_result {
    int code = -1;
    std::string out;
    std::string err;
};

inline cli_result run_cli(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    cli_result r;
    r.code = proctimes::cli::run(args, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

// The same, with the streams into the caller's strings; the exit status.
inline int run_cli(const std::vector<std::string>& args, std::string& out, std::string& err) {
    cli_result r = run_cli(args);
    out = std::move(r.out);
    err = std::move(r.err);
    return r.code;
}

}  // namespace cli_testing
