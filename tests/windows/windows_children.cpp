// SPDX-License-Identifier: MIT
// The child modes of windows_system_tests.exe (`windows_system_tests.exe
// child <mode> ...`): what the tests start as children.
//   burn <ms> <code>   burns <ms> of CPU by its own clock, exits with <code>
//   sleep <ms>         sleeps, exits 0
//   threads <n>        starts <n> threads that sleep, and sleeps (terminated by the test)
//   spawn-burn <ms>    spawns "burn <ms> 0" as its own child, waits, exits 0
//   args ...           exits 0 when its command line parses back to tricky_arguments()
//   argv-out <file> ...  writes the arguments after <file>, as its wide command
//                      line has them, in UTF-8, each ended by a NUL, to <file>
#include <windows.h>
// After windows.h, which it needs:
#include <shellapi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "proctimes/spawn.hpp"
#include "windows_test.hpp"

namespace wintest {

namespace {

std::string utf8(const wchar_t* s) {
    const int n = ::WideCharToMultiByte(CP_UTF8, 0, s, -1, nullptr, 0, nullptr, nullptr);
    std::string out(static_cast<std::size_t>(n > 0 ? n - 1 : 0), '\0');
    if (n > 1) ::WideCharToMultiByte(CP_UTF8, 0, s, -1, out.data(), n, nullptr, nullptr);
    return out;
}

DWORD WINAPI sleeper(LPVOID) {
    ::Sleep(INFINITE);
    return 0;
}

}  // namespace

std::string self_path() {
    std::wstring p(32768, L'\0');
    const DWORD n = ::GetModuleFileNameW(nullptr, p.data(), static_cast<DWORD>(p.size()));
    p.resize(n);
    return utf8(p.c_str());
}

const std::vector<std::string>& tricky_arguments() {
    static const std::vector<std::string> args = {
        "plain",      "two words",        "",     "tab\there", "quote\"inside", "\"quoted\"", "back\\slash",
        "trailing\\", "trailing two\\\\", "\\\"", "a\\\\\"b",  "ünïcode ✓",     "end",
    };
    return args;
}

int child_main(int argc, char** argv) {
    if (argc < 3) return 100;
    const std::string mode = argv[2];
    if (mode == "burn" && argc == 5) {
        burn(std::chrono::milliseconds{std::atoi(argv[3])});
        return std::atoi(argv[4]);
    }
    if (mode == "sleep" && argc == 4) {
        ::Sleep(static_cast<DWORD>(std::atoi(argv[3])));
        return 0;
    }
    if (mode == "threads" && argc == 4) {
        const int n = std::atoi(argv[3]);
        for (int i = 0; i < n; ++i) {
            HANDLE h = ::CreateThread(nullptr, SIZE_T{64} * 1024, sleeper, nullptr, 0, nullptr);
            if (!h) return 101;
            ::CloseHandle(h);
        }
        ::Sleep(INFINITE);
        return 0;
    }
    if (mode == "spawn-burn" && argc == 4) {
        auto c = proctimes::child::spawn({.argv = {self_path(), "child", "burn", argv[3], "0"}});
        if (!c) return 102;
        auto e = c->wait();
        return e && e->status && e->status->code == 0 ? 0 : 103;
    }
    if (mode == "args") {
        int n = 0;
        LPWSTR* w = ::CommandLineToArgvW(::GetCommandLineW(), &n);
        if (!w) return 104;
        std::vector<std::string> got;
        for (int i = 3; i < n; ++i) got.push_back(utf8(w[i]));
        ::LocalFree(w);
        return got == tricky_arguments() ? 0 : 3;
    }
    if (mode == "argv-out" && argc >= 4) {
        int n = 0;
        LPWSTR* w = ::CommandLineToArgvW(::GetCommandLineW(), &n);
        if (!w || n < 4) return 104;
        std::string bytes;
        for (int i = 4; i < n; ++i) {
            bytes += utf8(w[i]);
            bytes += '\0';
        }
        FILE* f = ::_wfopen(w[3], L"wb");
        ::LocalFree(w);
        if (!f) return 105;
        const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
        return std::fclose(f) == 0 && ok ? 0 : 106;
    }
    return 100;
}

}  // namespace wintest
