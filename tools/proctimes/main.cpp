// SPDX-License-Identifier: MIT
// proctimes — Windows process and thread times on Linux, from the shell.
#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"

#ifdef _WIN32
#include <windows.h>
// After windows.h, which it needs:
#include <shellapi.h>

namespace {
// The C runtime's argv is in the ANSI code page, where a character it lacks
// becomes '?'. The command reads UTF-8: its arguments come from the wide
// command line, parsed as the C runtime parses it (CommandLineToArgvW).
std::vector<std::string> utf8_arguments() {
    std::vector<std::string> out;
    int n = 0;
    LPWSTR* w = ::CommandLineToArgvW(::GetCommandLineW(), &n);
    if (!w) return out;
    for (int i = 1; i < n; ++i) {
        const int len = ::WideCharToMultiByte(CP_UTF8, 0, w[i], -1, nullptr, 0, nullptr, nullptr);
        std::string a(static_cast<std::size_t>(len > 0 ? len - 1 : 0), '\0');
        if (len > 1) ::WideCharToMultiByte(CP_UTF8, 0, w[i], -1, a.data(), len, nullptr, nullptr);
        out.push_back(std::move(a));
    }
    ::LocalFree(static_cast<HLOCAL>(w));
    return out;
}
}  // namespace

int main() {
    proctimes::cli::prepare_process();
    return proctimes::cli::run(utf8_arguments(), std::cout, std::cerr);
}
#else
int main(int argc, char** argv) {
    proctimes::cli::prepare_process();
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    return proctimes::cli::run(args, std::cout, std::cerr);
}
#endif
