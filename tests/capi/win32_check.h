// SPDX-License-Identifier: MIT
/* The checks of the C tests of the Win32 layer: each program counts its checks
 * and failures, prints every failure with GetLastError(), and exits non-zero
 * when any failed. Plain Windows C: include it after <proctimes/windows.h>
 * (<windows.h> on Windows). One test program per translation unit. */
#ifndef PROCTIMES_TESTS_CAPI_WIN32_CHECK_H
#define PROCTIMES_TESTS_CAPI_WIN32_CHECK_H

#include <stdio.h>

static int g_checks = 0;
static int g_failures = 0;

#define CHECK(cond)                                                                                                \
    do {                                                                                                           \
        ++g_checks;                                                                                                \
        if (!(cond)) {                                                                                             \
            ++g_failures;                                                                                          \
            printf("FAILED %s:%d: %s (GetLastError()=%u)\n", __FILE__, __LINE__, #cond, (unsigned)GetLastError()); \
        }                                                                                                          \
    } while (0)

/* A call that must fail with a given last error. */
#define CHECK_FAILS_WITH(call, err)            \
    do {                                       \
        SetLastError(0xDEADBEEF);              \
        CHECK(!(call));                        \
        CHECK(GetLastError() == (DWORD)(err)); \
    } while (0)

/* A FILETIME as one 64-bit count of 100 ns. */
static ULONGLONG ft64(FILETIME ft) { return ((ULONGLONG)ft.dwHighDateTime << 32) | ft.dwLowDateTime; }

#endif
