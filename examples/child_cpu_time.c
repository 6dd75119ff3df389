// SPDX-License-Identifier: MIT
/* Measures the CPU time of a child process and prints it as SYSTEMTIME.
 *
 * This is the classic Windows snippet, unchanged except for the include:
 * on Windows it reads #include <windows.h>. Build it on Linux with
 *     cc child_cpu_time.c $(pkg-config --cflags --libs proctimes)
 * and run it with the command line of the child as one argument:
 *     ./child_cpu_time "sh -c \"i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done\""
 */
#include <proctimes/windows.h>

#include <stdio.h>

static void PrintDuration(const char* label, FILETIME ft) {
    SYSTEMTIME st;

    /* A duration below one day reads as a time of day on 1601-01-01. */
    FileTimeToSystemTime(&ft, &st);
    printf("%s %02d:%02d:%02d.%03d\n", label, st.wHour, st.wMinute, st.wSecond, st.wMilliseconds);
}

static void PrintLocalTime(const char* label, FILETIME ft) {
    FILETIME local;
    SYSTEMTIME st;

    FileTimeToLocalFileTime(&ft, &local);
    FileTimeToSystemTime(&local, &st);
    printf("%s %04d-%02d-%02d %02d:%02d:%02d.%03d\n", label, st.wYear, st.wMonth, st.wDay, st.wHour, st.wMinute,
           st.wSecond, st.wMilliseconds);
}

int main(int argc, char* argv[]) {
    STARTUPINFO si;
    PROCESS_INFORMATION pi;
    FILETIME creationTime, exitTime, kernelTime, userTime;
    ULARGE_INTEGER start, end;
    FILETIME elapsed;
    DWORD exitCode;

    if (argc != 2) {
        printf("Usage: %s \"command line\"\n", argv[0]);
        return 1;
    }

    ZeroMemory(&si, sizeof(si));
    si.cb = sizeof(si);
    ZeroMemory(&pi, sizeof(pi));

    if (!CreateProcess(NULL, argv[1], NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
        printf("CreateProcess failed (%d).\n", GetLastError());
        return 1;
    }

    WaitForSingleObject(pi.hProcess, INFINITE);

    if (!GetProcessTimes(pi.hProcess, &creationTime, &exitTime, &kernelTime, &userTime)) {
        printf("GetProcessTimes failed (%d).\n", GetLastError());
        CloseHandle(pi.hProcess);
        CloseHandle(pi.hThread);
        return 1;
    }
    GetExitCodeProcess(pi.hProcess, &exitCode);

    start.LowPart = creationTime.dwLowDateTime;
    start.HighPart = creationTime.dwHighDateTime;
    end.LowPart = exitTime.dwLowDateTime;
    end.HighPart = exitTime.dwHighDateTime;
    end.QuadPart -= start.QuadPart;
    elapsed.dwLowDateTime = end.LowPart;
    elapsed.dwHighDateTime = end.HighPart;

    printf("Exit code:    %d\n", exitCode);
    PrintLocalTime("Started:     ", creationTime);
    PrintLocalTime("Ended:       ", exitTime);
    PrintDuration("Elapsed:     ", elapsed);
    PrintDuration("Kernel time: ", kernelTime);
    PrintDuration("User time:   ", userTime);

    CloseHandle(pi.hProcess);
    CloseHandle(pi.hThread);
    return 0;
}
