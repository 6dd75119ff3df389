// SPDX-License-Identifier: MIT
/* The Win32 timing API as a Windows program uses it. Apart from the include
 * below (<windows.h> on Windows), this is plain Windows C code: it checks the
 * values and GetLastError() codes Windows gives, including its edge cases.
 *
 * It re-runs itself as a child ("--child ...") to have a process to create,
 * wait for and measure. Expects TZ to name a zone 5h30 east of UTC without
 * DST (set by CTest) for the local-time checks.
 *
 * Exit status: 0 when every check passed; the failures are printed. */
#include <proctimes/windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win32_check.h"

static volatile unsigned long g_sink; /* keeps the busy loop from being optimised away */

static FILETIME ft_of(ULONGLONG v) {
    FILETIME ft;
    ft.dwLowDateTime = (DWORD)v;
    ft.dwHighDateTime = (DWORD)(v >> 32);
    return ft;
}
static ULONGLONG now64(void) {
    FILETIME ft;
    GetSystemTimeAsFileTime(&ft);
    return ft64(ft);
}

#define MS (10000ULL) /* FILETIME ticks per millisecond */

/* Burns about `ms` milliseconds of user-mode CPU in the calling thread, as
 * measured by GetThreadTimes. */
static void burn_cpu(unsigned ms) {
    FILETIME c, e, k, u;
    ULONGLONG start, now;
    GetThreadTimes(GetCurrentThread(), &c, &e, &k, &u);
    start = ft64(k) + ft64(u);
    do {
        unsigned long i;
        /* About 1 ms of user-mode work between two calls: the calls' own
         * syscalls must stay a negligible part of what is burned, since the
         * kernel's tick-sampled split can charge a whole tick to one. */
        for (i = 0; i < 1000000UL; ++i) g_sink = g_sink + i;
        GetThreadTimes(GetCurrentThread(), &c, &e, &k, &u);
        now = ft64(k) + ft64(u);
    } while (now - start < ms * MS);
}

/* ---- the child -------------------------------------------------------------------------- */

static int child_main(int argc, char** argv) {
    /* --child burn <ms> <exit code> | --child env <name> <value> | --child cwd <relative file> */
    if (argc >= 5 && strcmp(argv[2], "burn") == 0) {
        burn_cpu((unsigned)atoi(argv[3]));
        return atoi(argv[4]);
    }
    if (argc >= 5 && strcmp(argv[2], "env") == 0) {
        const char* v = getenv(argv[3]);
        return v && strcmp(v, argv[4]) == 0 ? 7 : 8;
    }
    if (argc >= 4 && strcmp(argv[2], "cwd") == 0) {
        FILE* f = fopen(argv[3], "r");
        if (!f) return 8;
        fclose(f);
        return 7;
    }
    if (argc >= 3 && strcmp(argv[2], "args") == 0) {
        /* The parent passed: "a b" c\"d "" */
        return argc == 6 && strcmp(argv[3], "a b") == 0 && strcmp(argv[4], "c\"d") == 0 && argv[5][0] == 0 ? 7 : 8;
    }
    return 99;
}

/* ---- types -------------------------------------------------------------------------------- */

static void test_types(void) {
    FILETIME ft;
    LARGE_INTEGER li;
    ULARGE_INTEGER uli;
    CHECK(sizeof(BOOL) == 4 && sizeof(DWORD) == 4 && sizeof(WORD) == 2 && sizeof(LONG) == 4);
    CHECK(sizeof(LONGLONG) == 8 && sizeof(ULONG64) == 8 && sizeof(HANDLE) == sizeof(void*));
    CHECK(sizeof(FILETIME) == 8 && sizeof(SYSTEMTIME) == 16 && sizeof(LARGE_INTEGER) == 8);
    CHECK(sizeof(NTSTATUS) == 4);
    /* Low word first, as the (little-endian) 64-bit value. */
    ft.dwLowDateTime = 0x89ABCDEF;
    ft.dwHighDateTime = 0x01234567;
    memcpy(&uli, &ft, sizeof ft);
    CHECK(uli.QuadPart == 0x0123456789ABCDEFULL);
    CHECK(uli.LowPart == 0x89ABCDEF && uli.HighPart == 0x01234567 && uli.u.HighPart == 0x01234567);
    li.QuadPart = -2;
    CHECK(li.LowPart == 0xFFFFFFFE && li.HighPart == -1);
}

/* ---- last error, pseudo-handles, ids ---------------------------------------------------- */

static void test_identity(void) {
    SetLastError(1234);
    CHECK(GetLastError() == 1234);
    SetLastError(0);
    CHECK(GetLastError() == 0);

    CHECK(GetCurrentProcess() == (HANDLE)(LONG_PTR)-1);
    CHECK(GetCurrentThread() == (HANDLE)(LONG_PTR)-2);
    CHECK(GetCurrentProcess() == INVALID_HANDLE_VALUE); /* the same value, as on Windows */
    CHECK(GetCurrentProcessId() != 0 && GetCurrentThreadId() != 0);
    CHECK(GetProcessId(GetCurrentProcess()) == GetCurrentProcessId());
    CHECK(GetThreadId(GetCurrentThread()) == GetCurrentThreadId());
    /* The main thread's id is the process id on Linux. */
    CHECK(GetCurrentThreadId() == GetCurrentProcessId());
    /* Closing a pseudo-handle succeeds and changes nothing. */
    CHECK(CloseHandle(GetCurrentProcess()));
    CHECK(CloseHandle(GetCurrentThread()));
    CHECK(GetProcessId(GetCurrentProcess()) == GetCurrentProcessId());
    /* Wrong kinds and invalid values. */
    SetLastError(0);
    CHECK(GetProcessId(GetCurrentThread()) == 0 && GetLastError() == ERROR_INVALID_HANDLE);
    SetLastError(0);
    CHECK(GetThreadId(GetCurrentProcess()) == 0 && GetLastError() == ERROR_INVALID_HANDLE);
    SetLastError(0);
    CHECK(GetProcessId(NULL) == 0 && GetLastError() == ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(CloseHandle(NULL), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(CloseHandle((HANDLE)(ULONG_PTR)0x12345), ERROR_INVALID_HANDLE);
}

/* ---- GetProcessTimes / GetThreadTimes on the caller --------------------------------- */

static void test_own_times(void) {
    FILETIME pc, pe, pk, pu, tc, te, tk, tu, pc2, pe2, pk2, pu2;
    ULONGLONG before, now;

    burn_cpu(100);
    SetLastError(0xDEADBEEF);
    CHECK(GetProcessTimes(GetCurrentProcess(), &pc, &pe, &pk, &pu));
    CHECK(GetLastError() == 0xDEADBEEF); /* success leaves the last error alone */
    now = now64();
    CHECK(ft64(pe) == 0);                             /* running: no exit time */
    CHECK(ft64(pc) < now);                            /* created in the past */
    CHECK(ft64(pc) > now - 24ULL * 3600 * 1000 * MS); /* ... but not before yesterday */
    /* The total is exact. The user/kernel split is the kernel's: its tick
     * samples scaled to the exact total, never letting either part go down.
     * On a loaded virtual machine this loop was seen at 0 ms user of 111 ms,
     * so only the total is asserted. */
    CHECK(ft64(pk) + ft64(pu) >= 100 * MS);
    /* CPU time cannot exceed wall time since creation times the CPUs (at most 4096). */
    CHECK(ft64(pk) + ft64(pu) <= (now - ft64(pc) + 10 * MS) * 4096);

    SetLastError(0xDEADBEEF);
    CHECK(GetThreadTimes(GetCurrentThread(), &tc, &te, &tk, &tu));
    CHECK(GetLastError() == 0xDEADBEEF);
    CHECK(ft64(te) == 0);
    CHECK(ft64(tc) >= ft64(pc)); /* the thread started after its process */
    CHECK(ft64(tk) + ft64(tu) >= 100 * MS);
    CHECK(ft64(tk) + ft64(tu) <= ft64(pk) + ft64(pu) + 1 * MS); /* a part of the process */

    /* Values never go backwards; the creation time never changes. */
    before = ft64(pk) + ft64(pu);
    burn_cpu(20);
    CHECK(GetProcessTimes(GetCurrentProcess(), &pc2, &pe2, &pk2, &pu2));
    CHECK(ft64(pc2) == ft64(pc));
    CHECK(ft64(pk2) >= ft64(pk) && ft64(pu2) >= ft64(pu));
    CHECK(ft64(pk2) + ft64(pu2) >= before + 20 * MS);
}

/* ---- handles: rights, closing, wrong kinds, NULL pointers ---------------------------- */

static void test_handles(void) {
    FILETIME c, e, k, u, c0, e0, k0, u0;
    ULONG64 cycles;
    DWORD code;
    HANDLE h, t;
    const DWORD pid = GetCurrentProcessId(), tid = GetCurrentThreadId();

    CHECK(GetProcessTimes(GetCurrentProcess(), &c0, &e0, &k0, &u0));

    /* The limited right alone is enough for everything. */
    h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
    CHECK(h != NULL);
    CHECK(h != GetCurrentProcess() && h != GetCurrentThread());
    SetLastError(0xDEADBEEF);
    CHECK(GetProcessTimes(h, &c, &e, &k, &u));
    CHECK(GetLastError() == 0xDEADBEEF);
    CHECK(ft64(c) == ft64(c0)); /* the same creation time through every handle, bit for bit */
    CHECK(ft64(e) == 0);
    CHECK(ft64(k) + ft64(u) >= ft64(k0) + ft64(u0));
    CHECK(GetProcessId(h) == pid);
    CHECK(QueryProcessCycleTime(h, &cycles) && cycles > 0);
    CHECK(GetExitCodeProcess(h, &code) && code == STILL_ACTIVE);
    CHECK(CloseHandle(h));
    /* A closed handle is invalid, and stays invalid. */
    CHECK_FAILS_WITH(GetProcessTimes(h, &c, &e, &k, &u), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(CloseHandle(h), ERROR_INVALID_HANDLE);

    /* The full right implies the limited one. */
    h = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, pid);
    CHECK(h != NULL && GetProcessTimes(h, &c, &e, &k, &u));
    CHECK(CloseHandle(h));
    h = OpenProcess(PROCESS_ALL_ACCESS, TRUE, pid);
    CHECK(h != NULL && GetProcessTimes(h, &c, &e, &k, &u));
    CHECK(CloseHandle(h));

    /* Opened without a query right: opening works, querying is denied. */
    h = OpenProcess(PROCESS_VM_READ | SYNCHRONIZE, FALSE, pid);
    CHECK(h != NULL);
    CHECK_FAILS_WITH(GetProcessTimes(h, &c, &e, &k, &u), ERROR_ACCESS_DENIED);
    CHECK_FAILS_WITH(QueryProcessCycleTime(h, &cycles), ERROR_ACCESS_DENIED);
    CHECK_FAILS_WITH(GetExitCodeProcess(h, &code), ERROR_ACCESS_DENIED);
    SetLastError(0);
    CHECK(GetProcessId(h) == 0 && GetLastError() == ERROR_ACCESS_DENIED);
    CHECK(WaitForSingleObject(h, 0) == WAIT_TIMEOUT); /* SYNCHRONIZE was granted */
    CHECK(CloseHandle(h));
    h = OpenProcess(0, FALSE, pid);
    CHECK(h != NULL);
    CHECK_FAILS_WITH(GetProcessTimes(h, &c, &e, &k, &u), ERROR_ACCESS_DENIED);
    SetLastError(0);
    CHECK(WaitForSingleObject(h, 0) == WAIT_FAILED && GetLastError() == ERROR_ACCESS_DENIED);
    CHECK(CloseHandle(h));

    /* Ids that name no process. */
    SetLastError(0);
    CHECK(OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, 0) == NULL);
    CHECK(GetLastError() == ERROR_INVALID_PARAMETER);
    SetLastError(0);
    CHECK(OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, 0xFFFFFFFC) == NULL);
    CHECK(GetLastError() == ERROR_INVALID_PARAMETER);
    SetLastError(0);
    CHECK(OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, 0) == NULL);
    CHECK(GetLastError() == ERROR_INVALID_PARAMETER);

    /* Threads. */
    t = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, tid);
    CHECK(t != NULL);
    CHECK(GetThreadTimes(GetCurrentThread(), &c0, &e0, &k0, &u0));
    CHECK(GetThreadTimes(t, &c, &e, &k, &u));
    CHECK(ft64(c) == ft64(c0) && ft64(e) == 0);
    CHECK(ft64(k) + ft64(u) + 1 * MS >= ft64(k0) + ft64(u0)); /* µs vs ns sources */
    CHECK(GetThreadId(t) == tid);
    /* A thread handle is not a process handle, and the reverse. */
    CHECK_FAILS_WITH(GetProcessTimes(t, &c, &e, &k, &u), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(QueryProcessCycleTime(t, &cycles), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(GetProcessTimes(GetCurrentThread(), &c, &e, &k, &u), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(GetThreadTimes(GetCurrentProcess(), &c, &e, &k, &u), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(QueryThreadCycleTime(GetCurrentProcess(), &cycles), ERROR_INVALID_HANDLE);
    h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
    CHECK_FAILS_WITH(GetThreadTimes(h, &c, &e, &k, &u), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(QueryThreadCycleTime(h, &cycles), ERROR_INVALID_HANDLE);
    SetLastError(0);
    CHECK(GetThreadId(h) == 0 && GetLastError() == ERROR_INVALID_HANDLE);
    CHECK(CloseHandle(h));
    CHECK(CloseHandle(t));
    CHECK_FAILS_WITH(GetThreadTimes(t, &c, &e, &k, &u), ERROR_INVALID_HANDLE);
    t = OpenThread(THREAD_SUSPEND_RESUME, FALSE, tid);
    CHECK(t != NULL);
    CHECK_FAILS_WITH(GetThreadTimes(t, &c, &e, &k, &u), ERROR_ACCESS_DENIED);
    CHECK_FAILS_WITH(QueryThreadCycleTime(t, &cycles), ERROR_ACCESS_DENIED);
    CHECK(CloseHandle(t));

    /* NULL and garbage handles. */
    CHECK_FAILS_WITH(GetProcessTimes(NULL, &c, &e, &k, &u), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(GetThreadTimes(NULL, &c, &e, &k, &u), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(GetProcessTimes((HANDLE)(ULONG_PTR)0x7777, &c, &e, &k, &u), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(QueryProcessCycleTime(NULL, &cycles), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(QueryThreadCycleTime(NULL, &cycles), ERROR_INVALID_HANDLE);
    SetLastError(0);
    CHECK(WaitForSingleObject(NULL, 0) == WAIT_FAILED && GetLastError() == ERROR_INVALID_HANDLE);

    /* NULL output pointers: the four outputs of GetProcessTimes and
     * GetThreadTimes are optional (what Windows callers rely on: only the
     * pointers given are filled); elsewhere FALSE with ERROR_NOACCESS, never a
     * crash. The handle is checked first. */
    CHECK(GetProcessTimes(GetCurrentProcess(), NULL, &e, &k, &u));
    CHECK(GetProcessTimes(GetCurrentProcess(), &c, &e, &k, NULL));
    CHECK(GetThreadTimes(GetCurrentThread(), &c, NULL, &k, &u));
    CHECK_FAILS_WITH(GetProcessTimes(NULL, NULL, NULL, NULL, NULL), ERROR_INVALID_HANDLE);
    CHECK_FAILS_WITH(QueryThreadCycleTime(GetCurrentThread(), NULL), ERROR_NOACCESS);
    CHECK_FAILS_WITH(QueryProcessCycleTime(GetCurrentProcess(), NULL), ERROR_NOACCESS);
    CHECK_FAILS_WITH(GetExitCodeProcess(GetCurrentProcess(), NULL), ERROR_NOACCESS);
}

/* ---- cycle counts -------------------------------------------------------------------- */

static void test_cycles(void) {
    ULONG64 a, b, p1, p2, r1, r2;
    HANDLE t;
    int i, increasing = 1;

    CHECK(QueryThreadCycleTime(GetCurrentThread(), &a));
    for (i = 0; i < 10000; ++i) {
        if (!QueryThreadCycleTime(GetCurrentThread(), &b) || b <= a) increasing = 0;
        a = b;
    }
    CHECK(increasing); /* strictly increasing on the running thread */

    CHECK(QueryProcessCycleTime(GetCurrentProcess(), &p1));
    CHECK(QueryThreadCycleTime(GetCurrentThread(), &a));
    burn_cpu(50);
    CHECK(QueryThreadCycleTime(GetCurrentThread(), &b));
    CHECK(QueryProcessCycleTime(GetCurrentProcess(), &p2));
    /* 50 ms at any TSC rate of at least 100 MHz. */
    CHECK(b - a >= 5000000ULL);
    CHECK(p2 - p1 >= b - a - 1000);
    CHECK(p2 >= b); /* the process includes this thread */

    /* A real handle to the calling thread: strictly increasing as well. */
    t = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentThreadId());
    CHECK(t != NULL);
    CHECK(QueryThreadCycleTime(t, &r1));
    CHECK(QueryThreadCycleTime(t, &r2));
    CHECK(r2 > r1);
    CHECK(CloseHandle(t));
}

/* ---- CreateProcess, WaitForSingleObject, and times of an exited child ---------------- */

static char g_self[4096];

static BOOL start_child(const char* args, PROCESS_INFORMATION* pi) {
    char cmd[8192];
    STARTUPINFOA si;
    ZeroMemory(&si, sizeof si);
    si.cb = sizeof si;
    snprintf(cmd, sizeof cmd, "\"%s\" --child %s", g_self, args);
    return CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, pi);
}

static void test_child(void) {
    PROCESS_INFORMATION pi;
    FILETIME c, e, k, u, c2, e2, k2, u2, tc, te, tk, tu;
    ULONG64 cycles, cycles2;
    DWORD code = 0, pid;
    HANDLE other, nosync;
    ULONGLONG before, after;

    before = now64();
    CHECK(start_child("burn 150 42", &pi));
    CHECK(pi.hProcess != NULL && pi.hThread != NULL && pi.hProcess != pi.hThread);
    CHECK(pi.dwProcessId != 0 && pi.dwProcessId != GetCurrentProcessId());
    CHECK(GetProcessId(pi.hProcess) == pi.dwProcessId);
    CHECK(GetThreadId(pi.hThread) == pi.dwThreadId);
    pid = pi.dwProcessId;

    /* While it runs. */
    CHECK(WaitForSingleObject(pi.hProcess, 0) == WAIT_TIMEOUT);
    CHECK(WaitForSingleObject(pi.hThread, 0) == WAIT_TIMEOUT);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == STILL_ACTIVE);
    CHECK(GetProcessTimes(pi.hProcess, &c, &e, &k, &u));
    CHECK(ft64(e) == 0);
    /* The creation time is floored to the kernel's 10 ms tick. */
    CHECK(ft64(c) + 10 * MS >= before && ft64(c) <= now64());
    other = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, pid);
    CHECK(other != NULL);
    nosync = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
    CHECK(nosync != NULL);
    SetLastError(0);
    CHECK(WaitForSingleObject(nosync, 0) == WAIT_FAILED && GetLastError() == ERROR_ACCESS_DENIED);

    /* Start, wait, measure. */
    CHECK(WaitForSingleObject(pi.hProcess, INFINITE) == WAIT_OBJECT_0);
    after = now64();
    CHECK(WaitForSingleObject(pi.hProcess, 0) == WAIT_OBJECT_0);
    CHECK(WaitForSingleObject(pi.hThread, 1000) == WAIT_OBJECT_0);
    CHECK(WaitForSingleObject(other, INFINITE) == WAIT_OBJECT_0);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == 42);

    SetLastError(0xDEADBEEF);
    CHECK(GetProcessTimes(pi.hProcess, &c, &e, &k, &u));
    CHECK(GetLastError() == 0xDEADBEEF);
    CHECK(ft64(e) != 0);
    CHECK(ft64(e) >= ft64(c));
    CHECK(ft64(e) <= after);
    CHECK(ft64(e) - ft64(c) >= 140 * MS); /* it ran at least its 150 ms of CPU */
    CHECK(ft64(u) > 0);                   /* final CPU times, not 0 (the split is tick-sampled) */
    CHECK(ft64(k) + ft64(u) >= 150 * MS);
    CHECK(ft64(k) + ft64(u) <= ft64(e) - ft64(c) + 10 * MS); /* one thread: CPU <= wall */

    /* The record stays: same answer later, through any handle to it. */
    CHECK(GetProcessTimes(pi.hProcess, &c2, &e2, &k2, &u2));
    CHECK(ft64(c2) == ft64(c) && ft64(e2) == ft64(e) && ft64(k2) == ft64(k) && ft64(u2) == ft64(u));
    CHECK(GetProcessTimes(other, &c2, &e2, &k2, &u2));
    CHECK(ft64(c2) == ft64(c) && ft64(e2) == ft64(e) && ft64(k2) == ft64(k) && ft64(u2) == ft64(u));

    /* Its main thread: exited at the same instant, after its process started. */
    CHECK(GetThreadTimes(pi.hThread, &tc, &te, &tk, &tu));
    CHECK(ft64(te) <= ft64(e)); /* the main thread ends first, never later */
    CHECK(ft64(te) >= ft64(tc));
    CHECK(ft64(tc) >= ft64(c));
    CHECK(ft64(tk) + ft64(tu) >= 150 * MS); /* the total is exact; the split is tick-sampled */
    CHECK(ft64(tk) + ft64(tu) <= ft64(k) + ft64(u) + 1 * MS);

    /* Cycles: at least 140 ms at 100 MHz, and fixed once it has exited. */
    CHECK(QueryProcessCycleTime(pi.hProcess, &cycles));
    CHECK(cycles >= 14000000ULL);
    CHECK(QueryProcessCycleTime(pi.hProcess, &cycles2) && cycles2 == cycles);
    CHECK(QueryThreadCycleTime(pi.hThread, &cycles2) && cycles2 > 0 && cycles2 <= cycles + 1000000);

    CHECK(CloseHandle(other));
    CHECK(CloseHandle(nosync));
    CHECK(CloseHandle(pi.hThread));
    CHECK(CloseHandle(pi.hProcess));
    /* Every handle closed: the process object is gone, its id names nothing. */
    SetLastError(0);
    CHECK(OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid) == NULL);
    CHECK(GetLastError() == ERROR_INVALID_PARAMETER);
}

static void test_create_process_options(void) {
    PROCESS_INFORMATION pi;
    STARTUPINFOA si;
    DWORD code = 0;
    char cmd[8192];
    char env[256];
    size_t n;

    ZeroMemory(&si, sizeof si);
    si.cb = sizeof si;

    /* Quoting of arguments follows the Windows command-line rules. */
    snprintf(cmd, sizeof cmd, "\"%s\" --child args \"a b\" c\\\"d \"\"", g_self);
    CHECK(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi));
    CHECK(WaitForSingleObject(pi.hProcess, INFINITE) == WAIT_OBJECT_0);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == 7);
    CHECK(CloseHandle(pi.hProcess) && CloseHandle(pi.hThread));

    /* lpApplicationName names the program; the command line is its argv. */
    snprintf(cmd, sizeof cmd, "whatever --child burn 0 5");
    CHECK(CreateProcessA(g_self, cmd, NULL, NULL, FALSE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi));
    CHECK(WaitForSingleObject(pi.hProcess, INFINITE) == WAIT_OBJECT_0);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == 5);
    CHECK(CloseHandle(pi.hProcess) && CloseHandle(pi.hThread));

    /* An environment block replaces the environment. */
    n = (size_t)snprintf(env, sizeof env, "PROCTIMES_CHILD_VAR=yes%cOTHER=1%c", 0, 0);
    CHECK(n > 0);
    snprintf(cmd, sizeof cmd, "\"%s\" --child env PROCTIMES_CHILD_VAR yes", g_self);
    CHECK(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, env, NULL, &si, &pi));
    CHECK(WaitForSingleObject(pi.hProcess, INFINITE) == WAIT_OBJECT_0);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == 7);
    CHECK(CloseHandle(pi.hProcess) && CloseHandle(pi.hThread));

    /* The current directory of the child. */
    snprintf(cmd, sizeof cmd, "\"%s\" --child cwd proc/version", g_self);
    CHECK(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, "/", &si, &pi));
    CHECK(WaitForSingleObject(pi.hProcess, INFINITE) == WAIT_OBJECT_0);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == 7);
    CHECK(CloseHandle(pi.hProcess) && CloseHandle(pi.hThread));

    /* Failures. */
    snprintf(cmd, sizeof cmd, "proctimes-no-such-program-4711 a b");
    CHECK_FAILS_WITH(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi), ERROR_FILE_NOT_FOUND);
    CHECK_FAILS_WITH(CreateProcessA("/nonexistent/program", NULL, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi),
                     ERROR_FILE_NOT_FOUND);
    snprintf(cmd, sizeof cmd, "\"%s\" --child burn 0 0", g_self);
    CHECK_FAILS_WITH(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, "/nonexistent/dir", &si, &pi),
                     ERROR_DIRECTORY);
    CHECK_FAILS_WITH(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, NULL, &pi), ERROR_NOACCESS);
    CHECK_FAILS_WITH(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, NULL), ERROR_NOACCESS);
    CHECK_FAILS_WITH(CreateProcessA(NULL, NULL, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi), ERROR_INVALID_PARAMETER);
    CHECK_FAILS_WITH(CreateProcessA(NULL, cmd, NULL, NULL, FALSE, CREATE_SUSPENDED, NULL, NULL, &si, &pi),
                     ERROR_NOT_SUPPORTED);
}

/* ---- FILETIME helpers ----------------------------------------------------------------- */

static int st_is(const SYSTEMTIME* st, int y, int mo, int dow, int d, int h, int mi, int s, int ms) {
    return st->wYear == y && st->wMonth == mo && st->wDayOfWeek == dow && st->wDay == d && st->wHour == h &&
           st->wMinute == mi && st->wSecond == s && st->wMilliseconds == ms;
}

static SYSTEMTIME st_make(int y, int mo, int d, int h, int mi, int s, int ms) {
    SYSTEMTIME st;
    st.wYear = (WORD)y;
    st.wMonth = (WORD)mo;
    st.wDayOfWeek = 0;
    st.wDay = (WORD)d;
    st.wHour = (WORD)h;
    st.wMinute = (WORD)mi;
    st.wSecond = (WORD)s;
    st.wMilliseconds = (WORD)ms;
    return st;
}

static void test_filetime_helpers(void) {
    FILETIME ft, ft2, local;
    SYSTEMTIME st;
    WORD fat_date = 0, fat_time = 0;
    ULONGLONG t30, a, b;
    LARGE_INTEGER li;

    /* FileTimeToSystemTime: both ends of the range, and beyond. */
    ft = ft_of(0);
    CHECK(FileTimeToSystemTime(&ft, &st));
    CHECK(st_is(&st, 1601, 1, 1, 1, 0, 0, 0, 0)); /* a Monday */
    ft = ft_of(0x7FFFFFFFFFFFFFFFULL);
    CHECK(FileTimeToSystemTime(&ft, &st));
    CHECK(st_is(&st, 30828, 9, 4, 14, 2, 48, 5, 477));
    ft = ft_of(0x8000000000000000ULL);
    CHECK_FAILS_WITH(FileTimeToSystemTime(&ft, &st), ERROR_INVALID_PARAMETER);
    ft = ft_of(0xFFFFFFFFFFFFFFFFULL);
    CHECK_FAILS_WITH(FileTimeToSystemTime(&ft, &st), ERROR_INVALID_PARAMETER);
    ft = ft_of(116444736000000000ULL + 10000000ULL + 1239999ULL); /* 1970-01-01 00:00:01.1239999 */
    CHECK(FileTimeToSystemTime(&ft, &st));
    CHECK(st_is(&st, 1970, 1, 4, 1, 0, 0, 1, 123)); /* milliseconds truncate */

    /* SystemTimeToFileTime: known values, and what it rejects. */
    st = st_make(2002, 7, 26, 11, 55, 32, 123);
    st.wDayOfWeek = 6; /* ignored */
    SetLastError(0xDEADBEEF);
    CHECK(SystemTimeToFileTime(&st, &ft));
    CHECK(GetLastError() == 0xDEADBEEF);
    CHECK(ft.dwHighDateTime == 0x01C2349B && ft.dwLowDateTime == 0x580716B0);
    st = st_make(1980, 1, 1, 0, 0, 0, 0);
    CHECK(SystemTimeToFileTime(&st, &ft));
    CHECK(ft.dwHighDateTime == 0x01A8E79F && ft.dwLowDateTime == 0xE1D58000);
    st = st_make(1601, 1, 1, 0, 0, 0, 0);
    CHECK(SystemTimeToFileTime(&st, &ft) && ft64(ft) == 0);
    st = st_make(1600, 12, 31, 23, 59, 59, 999);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);
    st = st_make(1980, 0, 1, 0, 0, 0, 0);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);
    st = st_make(1980, 13, 1, 0, 0, 0, 0);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);
    st = st_make(1980, 1, 1, 24, 0, 0, 0);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);
    st = st_make(1980, 1, 1, 0, 60, 0, 0);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);
    st = st_make(1980, 1, 1, 0, 0, 60, 0);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);
    st = st_make(1980, 1, 1, 0, 0, 0, 1000);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);
    st = st_make(2001, 2, 29, 0, 0, 0, 0);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);
    st = st_make(1980, 1, 0, 0, 0, 0, 0);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);
    st = st_make(30828, 9, 14, 2, 48, 5, 477);
    CHECK(SystemTimeToFileTime(&st, &ft) && ft64(ft) == 0x7FFFFFFFFFFFFFFFULL - 5807);
    st = st_make(30828, 9, 14, 2, 48, 5, 478);
    CHECK_FAILS_WITH(SystemTimeToFileTime(&st, &ft), ERROR_INVALID_PARAMETER);

    /* DOS date and time: 2-second steps rounded up, 1980..2107, no time zone. */
    ft = ft_of(0x01A8E79FE1D58000ULL); /* 1980-01-01 00:00:00 */
    CHECK(FileTimeToDosDateTime(&ft, &fat_date, &fat_time));
    CHECK(fat_date == 0x0021 && fat_time == 0x0000);
    CHECK(DosDateTimeToFileTime(0x0021, 0x0000, &ft2) && ft64(ft2) == 0x01A8E79FE1D58000ULL);
    t30 = 0x01B4A02C9BE00100ULL; /* 1990-06-15 10:45:30 */
    ft = ft_of(t30);
    CHECK(FileTimeToDosDateTime(&ft, &fat_date, &fat_time) && fat_date == 0x14CF && fat_time == 0x55AF);
    ft = ft_of(t30 - 10000000ULL); /* :29 → :30 */
    CHECK(FileTimeToDosDateTime(&ft, &fat_date, &fat_time) && fat_time == 0x55AF);
    ft = ft_of(t30 + 10000000ULL); /* :31 → :32 */
    CHECK(FileTimeToDosDateTime(&ft, &fat_date, &fat_time) && fat_time == 0x55B0);
    CHECK(DosDateTimeToFileTime(0x14CF, 0x55AF, &ft2) && ft64(ft2) == t30);
    st = st_make(2107, 12, 31, 23, 59, 58, 0);
    CHECK(SystemTimeToFileTime(&st, &ft));
    CHECK(FileTimeToDosDateTime(&ft, &fat_date, &fat_time) && fat_date == 0xFF9F && fat_time == 0xBF7D);
    ft = ft_of(ft64(ft) + 1); /* rounds into 2108 */
    CHECK_FAILS_WITH(FileTimeToDosDateTime(&ft, &fat_date, &fat_time), ERROR_INVALID_PARAMETER);
    st = st_make(1979, 12, 31, 23, 59, 58, 0);
    CHECK(SystemTimeToFileTime(&st, &ft));
    CHECK_FAILS_WITH(FileTimeToDosDateTime(&ft, &fat_date, &fat_time), ERROR_INVALID_PARAMETER);
    ft = ft_of(0);
    CHECK_FAILS_WITH(FileTimeToDosDateTime(&ft, &fat_date, &fat_time), ERROR_INVALID_PARAMETER);
    /* As on Windows, an out-of-range time fails with 87 even with NULL outputs. */
    CHECK_FAILS_WITH(FileTimeToDosDateTime(&ft, NULL, NULL), ERROR_INVALID_PARAMETER);
    ft = ft_of(t30);
    CHECK_FAILS_WITH(FileTimeToDosDateTime(&ft, NULL, &fat_time), ERROR_NOACCESS);
    CHECK_FAILS_WITH(DosDateTimeToFileTime(0x0001, 0, &ft2), ERROR_INVALID_PARAMETER); /* month 0 */
    CHECK_FAILS_WITH(DosDateTimeToFileTime(0x01A1, 0, &ft2), ERROR_INVALID_PARAMETER); /* month 13 */
    CHECK_FAILS_WITH(DosDateTimeToFileTime(0x0020, 0, &ft2), ERROR_INVALID_PARAMETER); /* day 0 */
    CHECK_FAILS_WITH(DosDateTimeToFileTime(0x0021, 24 << 11, &ft2), ERROR_INVALID_PARAMETER);
    CHECK_FAILS_WITH(DosDateTimeToFileTime(0x0021, 60 << 5, &ft2), ERROR_INVALID_PARAMETER);
    CHECK_FAILS_WITH(DosDateTimeToFileTime(0x0021, 30, &ft2), ERROR_INVALID_PARAMETER); /* 60 seconds */
    CHECK(DosDateTimeToFileTime(0x0021, 29, &ft2) && ft64(ft2) == 0x01A8E79FE1D58000ULL + 58 * 10000000ULL);

    /* CompareFileTime: unsigned, high word first. */
    ft = ft_of(0x00000000FFFFFFFFULL);
    ft2 = ft_of(0x0000000100000000ULL);
    CHECK(CompareFileTime(&ft, &ft2) == -1);
    CHECK(CompareFileTime(&ft2, &ft) == 1);
    CHECK(CompareFileTime(&ft, &ft) == 0);
    ft = ft_of(0x8000000000000000ULL);
    ft2 = ft_of(0x7FFFFFFFFFFFFFFFULL);
    CHECK(CompareFileTime(&ft, &ft2) == 1);

    /* Local time: TZ is 5h30 east of UTC (no DST) for this test. */
    ft = ft_of(0x01C2349B580716B0ULL);
    CHECK(FileTimeToLocalFileTime(&ft, &local));
    CHECK(ft64(local) - ft64(ft) == 330ULL * 60 * 10000000ULL);
    CHECK(LocalFileTimeToFileTime(&local, &ft2) && ft64(ft2) == ft64(ft));
    /* Windows checks neither input nor result: LocalFileTimeToFileTime(0) wraps. */
    ft = ft_of(0);
    CHECK(LocalFileTimeToFileTime(&ft, &ft2));
    CHECK(ft64(ft2) == 0ULL - 330ULL * 60 * 10000000ULL);
    CHECK_FAILS_WITH(FileTimeToLocalFileTime(NULL, &local), ERROR_NOACCESS);

    /* The clock. */
    a = now64();
    KeQuerySystemTime(&li);
    b = now64();
    CHECK(a <= (ULONGLONG)li.QuadPart && (ULONGLONG)li.QuadPart <= b);
    CHECK(a > 0x01D5000000000000ULL); /* after 2019 */
    CHECK(FileTimeToSystemTime((ft = ft_of(b), &ft), &st) && st.wYear >= 2019);

    /* NULL pointers. */
    CHECK_FAILS_WITH(FileTimeToSystemTime(NULL, &st), ERROR_NOACCESS);
    ft = ft_of(0);
    CHECK_FAILS_WITH(FileTimeToSystemTime(&ft, NULL), ERROR_NOACCESS);
    CHECK_FAILS_WITH(SystemTimeToFileTime(NULL, &ft), ERROR_NOACCESS);
    CHECK_FAILS_WITH(DosDateTimeToFileTime(0x0021, 0, NULL), ERROR_NOACCESS);
    SetLastError(0);
    GetSystemTimeAsFileTime(NULL);
    CHECK(GetLastError() == ERROR_NOACCESS);
    SetLastError(0);
    CHECK(CompareFileTime(NULL, &ft) == 0 && GetLastError() == ERROR_NOACCESS);
}

/* ---- kernel-style calls ------------------------------------------------------------------ */

static void test_kernel(void) {
    PEPROCESS me, p = NULL, q = NULL, child = NULL;
    FILETIME c, e, k, u;
    PROCESS_INFORMATION pi;
    NTSTATUS s;
    LONGLONG created;

    CHECK(GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &u));
    me = PsGetCurrentProcess();
    CHECK(me != NULL);
    CHECK(PsGetCurrentProcess() == me);
    CHECK(PsGetProcessCreateTimeQuadPart(me) == (LONGLONG)ft64(c));
    CHECK(PsGetProcessId(me) == (HANDLE)(ULONG_PTR)GetCurrentProcessId());

    s = PsLookupProcessByProcessId((HANDLE)(ULONG_PTR)GetCurrentProcessId(), &p);
    CHECK(s == STATUS_SUCCESS && NT_SUCCESS(s) && p != NULL);
    created = PsGetProcessCreateTimeQuadPart(p);
    CHECK(created == (LONGLONG)ft64(c)); /* (pid, creation time) identifies the process */
    CHECK(ObReferenceObject(p) == 2);
    CHECK(ObDereferenceObject(p) == 1);
    CHECK(ObDereferenceObject(p) == 0);

    /* Two lookups of one process agree bit for bit. */
    CHECK(PsLookupProcessByProcessId((HANDLE)(ULONG_PTR)GetCurrentProcessId(), &q) == STATUS_SUCCESS);
    CHECK(PsGetProcessCreateTimeQuadPart(q) == created);
    ObDereferenceObject(q);

    /* A child: its creation time differs from ours and matches GetProcessTimes. */
    CHECK(start_child("burn 0 0", &pi));
    CHECK(PsLookupProcessByProcessId((HANDLE)(ULONG_PTR)pi.dwProcessId, &child) == STATUS_SUCCESS);
    CHECK(GetProcessTimes(pi.hProcess, &c, &e, &k, &u));
    CHECK(PsGetProcessCreateTimeQuadPart(child) == (LONGLONG)ft64(c));
    CHECK(PsGetProcessCreateTimeQuadPart(child) >= created);
    ObDereferenceObject(child);
    CHECK(WaitForSingleObject(pi.hProcess, INFINITE) == WAIT_OBJECT_0);
    CHECK(CloseHandle(pi.hThread) && CloseHandle(pi.hProcess));

    /* Ids that name no process, and bad pointers. */
    CHECK(PsLookupProcessByProcessId((HANDLE)(ULONG_PTR)pi.dwProcessId, &p) == STATUS_INVALID_PARAMETER);
    CHECK(PsLookupProcessByProcessId((HANDLE)0, &p) == STATUS_INVALID_PARAMETER);
    CHECK(PsLookupProcessByProcessId((HANDLE)(ULONG_PTR)0xFFFFFFF0u, &p) == STATUS_INVALID_PARAMETER);
    CHECK(PsLookupProcessByProcessId((HANDLE)(ULONG_PTR)GetCurrentProcessId(), NULL) == STATUS_ACCESS_VIOLATION);
    CHECK(PsGetProcessCreateTimeQuadPart(NULL) == 0);
    CHECK(ObDereferenceObject(NULL) == 0);
    KeQuerySystemTime(NULL); /* no crash */
}

int main(int argc, char** argv) {
    if (argc >= 2 && strcmp(argv[1], "--child") == 0) return child_main(argc, argv);
    snprintf(g_self, sizeof g_self, "%s", argv[0]);

    test_types();
    test_identity();
    test_own_times();
    test_handles();
    test_cycles();
    test_child();
    test_create_process_options();
    test_filetime_helpers();
    test_kernel();

    printf("%d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
