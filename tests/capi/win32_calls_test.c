// SPDX-License-Identifier: MIT
/* The calls real Windows clients need beyond the timing core, used as they
 * use them: optional outputs of GetProcessTimes/GetThreadTimes, GetSystemTime,
 * TerminateProcess and DuplicateHandle. Apart from the include, this is
 * Windows code. */
#include <proctimes/windows.h>

#include <stdio.h>
#include <string.h>

#include "win32_check.h"

static BOOL start_sleeper(PROCESS_INFORMATION* pi) {
    char cmd[] = "sleep 60";
    STARTUPINFOA si;
    ZeroMemory(&si, sizeof si);
    si.cb = sizeof si;
    ZeroMemory(pi, sizeof *pi);
    return CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, pi);
}

static void test_optional_outputs(void) {
    FILETIME c, x, k, u;
    FILETIME k2 = {0xFFFFFFFFu, 0xFFFFFFFFu};
    HANDLE t;
    CHECK(GetProcessTimes(GetCurrentProcess(), NULL, NULL, &k, &u));
    CHECK(GetProcessTimes(GetCurrentProcess(), NULL, NULL, NULL, NULL));
    CHECK(GetThreadTimes(GetCurrentThread(), NULL, NULL, &k2, &u));
    CHECK(ft64(k2) != 0xFFFFFFFFFFFFFFFFull);
    CHECK(GetThreadTimes(GetCurrentThread(), &c, &x, NULL, NULL));
    CHECK(ft64(c) != 0 && ft64(x) == 0);
    t = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentThreadId());
    CHECK(t != NULL);
    CHECK(GetThreadTimes(t, NULL, &x, NULL, &u));
    CHECK(ft64(x) == 0);
    CHECK(CloseHandle(t));
    /* The handle is still checked first; other calls keep their rule. */
    CHECK_FAILS_WITH(GetThreadTimes(NULL, NULL, NULL, NULL, NULL), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(QueryProcessCycleTime(GetCurrentProcess(), NULL), ERROR_NOACCESS);
}

static void test_get_system_time(void) {
    FILETIME before, after, ft;
    SYSTEMTIME st, back;
    int i;
    for (i = 0; i < 1000; ++i) {
        GetSystemTimeAsFileTime(&before);
        GetSystemTime(&st);
        GetSystemTimeAsFileTime(&after);
        CHECK(SystemTimeToFileTime(&st, &ft));
        /* Milliseconds truncate: within [before floored to 1 ms, after]. */
        CHECK(ft64(ft) >= ft64(before) - ft64(before) % 10000u);
        CHECK(ft64(ft) <= ft64(after));
        CHECK(FileTimeToSystemTime(&ft, &back));
        CHECK(back.wDayOfWeek == st.wDayOfWeek && back.wYear == st.wYear && back.wMilliseconds == st.wMilliseconds);
    }
    CHECK(st.wYear >= 2024 && st.wMonth >= 1 && st.wMonth <= 12 && st.wHour < 24);
    SetLastError(0);
    GetSystemTime(NULL); /* Windows would fault: here the last error says why */
    CHECK(GetLastError() == ERROR_NOACCESS);
}

static void test_terminate_process(void) {
    PROCESS_INFORMATION pi;
    DWORD code = 0;
    HANDLE q, t;
    if (!start_sleeper(&pi)) {
        CHECK(0 && "CreateProcessA(sleep 60)");
        return;
    }
    /* Without PROCESS_TERMINATE: refused, the process runs on. */
    q = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, pi.dwProcessId);
    CHECK(q != NULL);
    CHECK_FAILS_WITH(TerminateProcess(q, 7), ERROR_ACCESS_DENIED);
    CHECK(WaitForSingleObject(q, 50) == WAIT_TIMEOUT);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == STILL_ACTIVE);
    /* Wrong kinds of handle. */
    CHECK_FAILS_WITH(TerminateProcess(NULL, 7), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(TerminateProcess(GetCurrentThread(), 7), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(TerminateProcess(pi.hThread, 7), ERROR_INVALID_HANDLE);

    /* Through another handle with the right: every handle sees the code. */
    t = OpenProcess(PROCESS_TERMINATE, FALSE, pi.dwProcessId);
    CHECK(t != NULL);
    CHECK(TerminateProcess(t, 0xC0000005u));
    CHECK(WaitForSingleObject(pi.hProcess, 20000) == WAIT_OBJECT_0);
    CHECK(WaitForSingleObject(q, 0) == WAIT_OBJECT_0);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == 0xC0000005u);
    CHECK(GetExitCodeProcess(q, &code) && code == 0xC0000005u);
    /* A process that has ended cannot be terminated (Windows: 5). */
    CHECK_FAILS_WITH(TerminateProcess(pi.hProcess, 1), ERROR_ACCESS_DENIED);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == 0xC0000005u);
    CHECK(CloseHandle(t));
    CHECK(CloseHandle(q));
    CHECK(CloseHandle(pi.hThread));
    CHECK(CloseHandle(pi.hProcess));

    /* The common pattern: terminate, wait, read the code. */
    if (start_sleeper(&pi)) {
        CHECK(TerminateProcess(pi.hProcess, 3));
        CHECK(WaitForSingleObject(pi.hProcess, INFINITE) == WAIT_OBJECT_0);
        CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == 3);
        CHECK(CloseHandle(pi.hThread));
        CHECK(CloseHandle(pi.hProcess));
    }
}

static void test_duplicate_handle(void) {
    HANDLE self = GetCurrentProcess(), h = NULL, h2 = NULL, q;
    PROCESS_INFORMATION pi;
    DWORD code = 0;
    FILETIME c, x, k, u;

    /* A pseudo-handle duplicated is a real handle to the caller. */
    CHECK(DuplicateHandle(self, GetCurrentProcess(), self, &h, 0, FALSE, DUPLICATE_SAME_ACCESS));
    CHECK(h != NULL && h != GetCurrentProcess());
    CHECK(GetProcessId(h) == GetCurrentProcessId());
    CHECK(GetProcessTimes(h, &c, &x, &k, &u));
    CHECK(CloseHandle(h));
    CHECK_FAILS_WITH(CloseHandle(h), ERROR_INVALID_HANDLE); /* a real handle: closed now */
    CHECK(DuplicateHandle(self, GetCurrentThread(), self, &h, 0, FALSE, DUPLICATE_SAME_ACCESS));
    CHECK(h != NULL && h != GetCurrentThread());
    CHECK(GetThreadId(h) == GetCurrentThreadId());
    CHECK(GetThreadTimes(h, &c, &x, &k, &u));
    CHECK(CloseHandle(h));

    if (!start_sleeper(&pi)) {
        CHECK(0 && "CreateProcessA(sleep 60)");
        return;
    }
    /* Same access, then the source closed: the duplicate works on. */
    CHECK(DuplicateHandle(self, pi.hProcess, self, &h, 0, FALSE, DUPLICATE_SAME_ACCESS));
    CHECK(CloseHandle(pi.hProcess));
    CHECK(GetProcessId(h) == pi.dwProcessId);
    CHECK(GetExitCodeProcess(h, &code) && code == STILL_ACTIVE);
    /* Fewer rights: what the duplicate may do is what it was given. */
    CHECK(DuplicateHandle(self, h, self, &h2, PROCESS_QUERY_LIMITED_INFORMATION, FALSE, 0));
    CHECK(GetProcessTimes(h2, &c, &x, &k, &u));
    CHECK_FAILS_WITH(TerminateProcess(h2, 9), ERROR_ACCESS_DENIED);
    SetLastError(0);
    CHECK(WaitForSingleObject(h2, 0) == WAIT_FAILED && GetLastError() == ERROR_ACCESS_DENIED);
    /* DUPLICATE_CLOSE_SOURCE: the source is gone, the duplicate stays. */
    CHECK(DuplicateHandle(self, h, self, &q, 0, FALSE, DUPLICATE_SAME_ACCESS | DUPLICATE_CLOSE_SOURCE));
    CHECK_FAILS_WITH(CloseHandle(h), ERROR_INVALID_HANDLE);
    CHECK(TerminateProcess(q, 11));
    CHECK(WaitForSingleObject(q, 20000) == WAIT_OBJECT_0);
    CHECK(GetExitCodeProcess(q, &code) && code == 11);
    CHECK(GetExitCodeProcess(h2, &code) && code == 11);
    /* Errors. */
    CHECK_FAILS_WITH(DuplicateHandle(self, (HANDLE)(ULONG_PTR)0x7777, self, &h, 0, FALSE, 0), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(DuplicateHandle(NULL, q, self, &h, 0, FALSE, 0), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(DuplicateHandle(self, q, NULL, &h, 0, FALSE, 0), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(DuplicateHandle(self, q, GetCurrentThread(), &h, 0, FALSE, 0), ERROR_INVALID_HANDLE);
    /* Into or out of another process: handles are this process's values. */
    CHECK_FAILS_WITH(DuplicateHandle(q, q, self, &h, 0, FALSE, DUPLICATE_SAME_ACCESS), ERROR_NOT_SUPPORTED);
    CHECK_FAILS_WITH(DuplicateHandle(self, q, q, &h, 0, FALSE, DUPLICATE_SAME_ACCESS), ERROR_NOT_SUPPORTED);
    /* A real handle to this process needs PROCESS_DUP_HANDLE to be used so. */
    h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentProcessId());
    CHECK(h != NULL);
    CHECK_FAILS_WITH(DuplicateHandle(h, q, self, &h2, 0, FALSE, DUPLICATE_SAME_ACCESS), ERROR_ACCESS_DENIED);
    CHECK(CloseHandle(h));
    h = OpenProcess(PROCESS_DUP_HANDLE, FALSE, GetCurrentProcessId());
    CHECK(h != NULL);
    h2 = NULL;
    CHECK(DuplicateHandle(h, q, h, &h2, 0, FALSE, DUPLICATE_SAME_ACCESS) && h2 != NULL);
    CHECK(CloseHandle(h2));
    /* No place for the result: nothing to return, the source still closes. */
    CHECK(DuplicateHandle(h, q, h, NULL, 0, FALSE, DUPLICATE_CLOSE_SOURCE));
    CHECK_FAILS_WITH(CloseHandle(q), ERROR_INVALID_HANDLE);
    CHECK(CloseHandle(h));
    CHECK(CloseHandle(pi.hThread));
}

int main(void) {
    test_optional_outputs();
    test_get_system_time();
    test_terminate_process();
    test_duplicate_handle();
    printf("%d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
