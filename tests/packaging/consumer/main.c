// SPDX-License-Identifier: MIT
/* A C11 program using the installed Win32 layer, built with nothing but
 * "cc main.c $(pkg-config --cflags --libs proctimes)". */
#include <proctimes/windows.h>

#include <stdio.h>

int main(void) {
    FILETIME creation, exit_time, kernel, user, ft;
    SYSTEMTIME st;
    if (!GetProcessTimes(GetCurrentProcess(), &creation, &exit_time, &kernel, &user)) return 1;
    if (creation.dwHighDateTime == 0 || exit_time.dwLowDateTime != 0 || exit_time.dwHighDateTime != 0) return 2;
    st.wYear = 2002;
    st.wMonth = 7;
    st.wDayOfWeek = 0;
    st.wDay = 26;
    st.wHour = 11;
    st.wMinute = 55;
    st.wSecond = 32;
    st.wMilliseconds = 123;
    if (!SystemTimeToFileTime(&st, &ft) || ft.dwHighDateTime != 0x01C2349B || ft.dwLowDateTime != 0x580716B0) return 3;
    SetLastError(0);
    if (GetProcessTimes(NULL, &creation, &exit_time, &kernel, &user) || GetLastError() != ERROR_INVALID_HANDLE)
        return 4;
    printf("proctimes C consumer: created at FILETIME %08x%08x\n", (unsigned)creation.dwHighDateTime,
           (unsigned)creation.dwLowDateTime);
    return 0;
}
