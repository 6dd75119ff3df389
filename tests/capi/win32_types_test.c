// SPDX-License-Identifier: MIT
/* Every basic type of <windows.h> that Boost.WinAPI (and code like it) takes
 * from there, used as such code uses it. Built as C11 (this file) and as C++
 * (win32_types_test.cpp includes it); it checks sizes and signedness against
 * Windows' definitions, and that each pointer type points to its type. */
#include <proctimes/windows.h>

#include <stdio.h>

static int g_failures = 0;
#define EXPECT(cond)                                                 \
    do {                                                             \
        if (!(cond)) {                                               \
            ++g_failures;                                            \
            printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        }                                                            \
    } while (0)

/* A Boost.WinAPI-style forwarding of each type, then a use of it. */
typedef BOOLEAN my_BOOLEAN;
typedef PBOOLEAN my_PBOOLEAN;
typedef UCHAR my_UCHAR;
typedef PUCHAR my_PUCHAR;
typedef SHORT my_SHORT;
typedef PSHORT my_PSHORT;
typedef USHORT my_USHORT;
typedef PUSHORT my_PUSHORT;
typedef PINT my_PINT;
typedef LPINT my_LPINT;
typedef PUINT my_PUINT;
typedef LPLONG my_LPLONG;
typedef PDWORD_PTR my_PDWORD_PTR;
typedef PSIZE_T my_PSIZE_T;
typedef SSIZE_T my_SSIZE_T;
typedef PSSIZE_T my_PSSIZE_T;
typedef WCHAR my_WCHAR;
typedef LPWSTR my_LPWSTR;
typedef LPCWSTR my_LPCWSTR;

static int run_types_test(void) { /* NOLINT(modernize-redundant-void-arg): C11 too */
    my_BOOLEAN b = TRUE;
    my_PBOOLEAN pb = &b;
    my_UCHAR uc = 255;
    my_PUCHAR puc = &uc;
    my_SHORT s = -32768;
    my_PSHORT ps = &s;
    my_USHORT us = 65535;
    my_PUSHORT pus = &us;
    INT i = -1;
    my_PINT pi = &i;
    my_LPINT lpi = &i;
    UINT ui = 4000000000u;
    my_PUINT pui = &ui;
    LONG l = -2;
    my_LPLONG lpl = &l;
    DWORD_PTR dp = (DWORD_PTR)-1;
    my_PDWORD_PTR pdp = &dp;
    SIZE_T sz = (SIZE_T)-1;
    my_PSIZE_T psz = &sz;
    my_SSIZE_T ss = -1;
    my_PSSIZE_T pss = &ss;
    my_WCHAR wide[] = L"proctimes";
    my_LPWSTR w = wide;
    my_LPCWSTR cw = L"proctimes";

    EXPECT(sizeof(BOOLEAN) == 1 && *pb == 1);
    EXPECT(sizeof(UCHAR) == 1 && *puc == 255 && (UCHAR)(*puc + 1) == 0); /* unsigned */
    EXPECT(sizeof(SHORT) == 2 && *ps == -32768);
    EXPECT(sizeof(USHORT) == 2 && *pus == 65535 && (USHORT)(*pus + 1) == 0);
    EXPECT(*pi == -1 && *lpi == -1 && sizeof(*pi) == 4);
    EXPECT(*pui == 4000000000u && sizeof(*pui) == 4);
    EXPECT(*lpl == -2 && sizeof(*lpl) == 4); /* LONG is 32 bits, as on Windows (LLP64) */
    EXPECT(sizeof(*pdp) == sizeof(void*) && *pdp > 0);
    EXPECT(sizeof(*psz) == sizeof(void*) && *psz > 0);
    EXPECT(sizeof(*pss) == sizeof(void*) && *pss < 0); /* signed */
    EXPECT(w[0] == L'p' && cw[8] == L's' && cw[9] == 0);
    EXPECT(sizeof(WCHAR) == sizeof(wchar_t));
    if (g_failures == 0) printf("types: all checks passed\n");
    return g_failures == 0 ? 0 : 1;
}

#ifndef PROCTIMES_TYPES_TEST_NO_MAIN
int main(void) { return run_types_test(); }
#endif
