// SPDX-License-Identifier: MIT
// Helpers of the windows backend's tests (one executable, run under Wine by
// the cross build): the wall clock, CPU burns measured by the thread's own
// clock, Wine detection, and the child modes of the test executable itself
// (it starts copies of itself as the children the tests need).
#pragma once

#include <windows.h>

#include <chrono>
#include <string>
#include <vector>

#include "proctimes/filetime.hpp"

namespace wintest {

/// Whether the tests run under Wine (its ntdll exports wine_get_version):
/// where Wine is known to differ from Windows, the tests assert Wine's answer.
inline bool under_wine() {
    HMODULE ntdll = ::GetModuleHandleW(L"ntdll.dll");
    return ntdll != nullptr && ::GetProcAddress(ntdll, "wine_get_version") != nullptr;
}

inline std::uint64_t ticks(const FILETIME& f) {
    return (static_cast<std::uint64_t>(f.dwHighDateTime) << 32) | f.dwLowDateTime;
}

/// The wall clock, as the backend reads it (GetSystemTimePreciseAsFileTime).
inline proctimes::instant now() {
    FILETIME f{};
    ::GetSystemTimePreciseAsFileTime(&f);
    return *proctimes::time_from_filetime(proctimes::filetime{ticks(f)});
}

/// The calling thread's CPU time by its own clock (GetThreadTimes).
inline std::chrono::nanoseconds thread_cpu() {
    FILETIME c{}, e{}, k{}, u{};
    ::GetThreadTimes(::GetCurrentThread(), &c, &e, &k, &u);
    return std::chrono::nanoseconds{static_cast<std::int64_t>(ticks(k) + ticks(u)) * 100};
}

/// Burns CPU until the thread's own clock has advanced by at least `d`;
/// returns how much it advanced.
inline std::chrono::nanoseconds burn(std::chrono::nanoseconds d) {
    const auto start = thread_cpu();
    volatile std::uint64_t sink = 0;
    for (;;) {
        for (int i = 0; i < 100000; ++i) sink = sink + static_cast<std::uint64_t>(i);
        const auto used = thread_cpu() - start;
        if (used >= d) return used;
    }
}

/// This executable's path (UTF-8), to start copies of it as children.
std::string self_path();

/// The arguments the "args" child mode expects, quoting's hard cases.
const std::vector<std::string>& tricky_arguments();

/// Runs a child mode (argv[1] == "child"); returns its exit code.
int child_main(int argc, char** argv);

}  // namespace wintest
