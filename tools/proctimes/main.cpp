// SPDX-License-Identifier: MIT
// proctimes — Windows process and thread times on Linux, from the shell.
#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"

int main(int argc, char** argv) {
    proctimes::cli::prepare_process();
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    return proctimes::cli::run(args, std::cout, std::cerr);
}
