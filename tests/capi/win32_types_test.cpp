// SPDX-License-Identifier: MIT
// The basic-types check of win32_types_test.c, compiled as C++: the header's
// types must mean the same in both languages.
#include <type_traits>

#define PROCTIMES_TYPES_TEST_NO_MAIN 1
#include "win32_types_test.c"  // NOLINT(bugprone-suspicious-include): the same source, as C++

static_assert(std::is_same_v<WCHAR, wchar_t>, "WCHAR is wchar_t in C++, as in Windows' headers");
static_assert(std::is_same_v<BOOLEAN, unsigned char> && std::is_same_v<SSIZE_T, LONG_PTR>, "Windows definitions");
static_assert(std::is_signed_v<SHORT> && std::is_unsigned_v<USHORT> && std::is_unsigned_v<UCHAR>, "signedness");

int main() { return run_types_test(); }
