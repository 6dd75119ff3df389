// SPDX-License-Identifier: MIT
/* proctimes/windows.h — the Win32 process/thread timing API on Linux.
 *
 * Code written against <windows.h> for the functions below builds on Linux by
 * replacing that include with this one, and gets Windows' results, error codes
 * and edge cases. Usable from C11 and C++. docs/WIN32.md lists every function
 * with its differences from Windows.
 *
 * Names. The library exports only prefixed symbols (proctimes_GetProcessTimes,
 * ...), so it never clashes with another Win32 emulation linked into the same
 * program; this header maps the Windows names onto them with macros. Define
 * PROCTIMES_NO_WIN32_NAMES before including it to get the prefixed names only.
 *
 * Conventions shared by every function (as on Windows):
 *  - failure is FALSE / NULL / 0 / WAIT_FAILED, with the reason in
 *    GetLastError(); success leaves the last error untouched;
 *  - the last error is per thread;
 *  - nothing throws, nothing aborts.
 * NULL pointers. The outputs of GetProcessTimes and GetThreadTimes are
 * optional (only those given are filled: what Windows callers rely on).
 * Where Windows would fault on a NULL pointer argument, the function fails
 * instead with ERROR_NOACCESS (998), the code Windows returns when its kernel
 * finds an invalid buffer (functions with no way to report failure just set
 * the last error and return). docs/WIN32.md gives each function's rule. Checks happen in Windows'
 * order: the handle, then the values, then the pointers; e.g.
 * FileTimeToDosDateTime(&ft_1601, NULL, NULL) fails with
 * ERROR_INVALID_PARAMETER, exactly as on Windows.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef PROCTIMES_WINDOWS_H
#define PROCTIMES_WINDOWS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h> /* ZeroMemory */

#include "proctimes/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- basic types, with their Windows (LLP64) sizes ------------------------------- */

#ifndef VOID
#define VOID void
#endif
#ifndef CONST
#define CONST const
#endif
#ifndef WINAPI
#define WINAPI
#endif
#ifndef APIENTRY
#define APIENTRY
#endif
#ifndef NTAPI
#define NTAPI
#endif
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef OPTIONAL
#define OPTIONAL
#endif
/* The most common SAL annotations, so that annotated Windows code compiles. */
/* NOLINTBEGIN(bugprone-reserved-identifier): the SAL names are Windows' own (sal.h). */
#ifndef _In_
#define _In_
#endif
#ifndef _In_opt_
#define _In_opt_
#endif
#ifndef _Out_
#define _Out_
#endif
#ifndef _Out_opt_
#define _Out_opt_
#endif
#ifndef _Inout_
#define _Inout_
#endif
#ifndef _Inout_opt_
#define _Inout_opt_
#endif
/* NOLINTEND(bugprone-reserved-identifier) */

typedef int BOOL;
typedef BOOL* PBOOL;
typedef BOOL* LPBOOL;
typedef unsigned char BYTE;
typedef BYTE* PBYTE;
typedef BYTE* LPBYTE;
typedef unsigned short WORD;
typedef WORD* PWORD;
typedef WORD* LPWORD;
typedef uint32_t DWORD; /* 32 bits, as on Windows (unsigned long there, unsigned int here) */
typedef DWORD* PDWORD;
typedef DWORD* LPDWORD;
typedef int32_t LONG;
typedef LONG* PLONG;
typedef uint32_t ULONG;
typedef ULONG* PULONG;
typedef unsigned int UINT;
typedef int INT;
typedef char CHAR;
typedef CHAR* LPSTR;
typedef const CHAR* LPCSTR;
typedef CHAR TCHAR; /* ANSI only: see CreateProcess */
typedef LPSTR LPTSTR;
typedef LPCSTR LPCTSTR;
typedef int64_t LONGLONG;
typedef uint64_t ULONGLONG;
typedef LONGLONG* PLONGLONG;
typedef ULONGLONG* PULONGLONG;
typedef int64_t LONG64;
typedef uint64_t ULONG64;
typedef LONG64* PLONG64;
typedef ULONG64* PULONG64;
typedef uint64_t DWORD64;
typedef DWORD64* PDWORD64;
typedef intptr_t INT_PTR;
typedef uintptr_t UINT_PTR;
typedef intptr_t LONG_PTR;
typedef uintptr_t ULONG_PTR;
typedef ULONG_PTR DWORD_PTR;
typedef ULONG_PTR SIZE_T;
typedef void* PVOID;
typedef void* LPVOID;
typedef const void* LPCVOID;
typedef void* HANDLE;
typedef HANDLE* PHANDLE;
typedef HANDLE* LPHANDLE;
typedef LONG NTSTATUS;
typedef DWORD ACCESS_MASK;
/* The rest of the basic types of <windows.h> (Boost.WinAPI and the like take
 * them from there), with their Windows definitions. */
typedef BYTE BOOLEAN;
typedef BOOLEAN* PBOOLEAN;
typedef unsigned char UCHAR;
typedef UCHAR* PUCHAR;
typedef short SHORT;
typedef SHORT* PSHORT;
typedef unsigned short USHORT;
typedef USHORT* PUSHORT;
typedef INT* PINT;
typedef INT* LPINT;
typedef UINT* PUINT;
typedef LONG* LPLONG;
typedef DWORD_PTR* PDWORD_PTR;
typedef SIZE_T* PSIZE_T;
typedef LONG_PTR SSIZE_T;
typedef SSIZE_T* PSSIZE_T;
/* WCHAR is wchar_t, as Windows' headers define it in C++ (and in C, where
 * it is unsigned short there): so that L"..." literals and the C library's
 * wide functions work. It is 4 bytes on Linux, not Windows' 2: code that
 * needs UTF-16 units uses char16_t. No function of this layer takes one. */
typedef wchar_t WCHAR;
typedef WCHAR* PWCHAR;
typedef WCHAR* LPWSTR;
typedef WCHAR* PWSTR;
typedef const WCHAR* LPCWSTR;
typedef const WCHAR* PCWSTR;

#ifndef TEXT
#define TEXT(s) s
#endif
#ifndef ZeroMemory
#define ZeroMemory(p, n) ((void)memset((p), 0, (n)))
#endif

/* ---- time structures ----------------------------------------------------------------- */
/* The struct tags (_FILETIME, ...) are Windows' own: code written for
 * <windows.h> names them (struct _FILETIME), so they are part of the contract.
 * NOLINTBEGIN(bugprone-reserved-identifier) */

/* 100 ns ticks: an instant since 1601-01-01 00:00 UTC, or a duration.
 * Low word first, 4-byte aligned, 8 bytes (never cast it to a 64-bit pointer:
 * copy the two halves, or use ULARGE_INTEGER). */
typedef struct _FILETIME {
    DWORD dwLowDateTime;
    DWORD dwHighDateTime;
} FILETIME, *PFILETIME, *LPFILETIME;

typedef struct _SYSTEMTIME {
    WORD wYear;
    WORD wMonth;     /* 1 = January */
    WORD wDayOfWeek; /* 0 = Sunday */
    WORD wDay;
    WORD wHour;
    WORD wMinute;
    WORD wSecond;
    WORD wMilliseconds;
} SYSTEMTIME, *PSYSTEMTIME, *LPSYSTEMTIME;

#if defined(__GNUC__)
#define PROCTIMES_ANON_STRUCT __extension__
#else
#define PROCTIMES_ANON_STRUCT
#endif

typedef union _LARGE_INTEGER {
    PROCTIMES_ANON_STRUCT struct {
        DWORD LowPart;
        LONG HighPart;
    };
    struct {
        DWORD LowPart;
        LONG HighPart;
    } u;
    LONGLONG QuadPart;
} LARGE_INTEGER, *PLARGE_INTEGER;

typedef union _ULARGE_INTEGER {
    PROCTIMES_ANON_STRUCT struct {
        DWORD LowPart;
        DWORD HighPart;
    };
    struct {
        DWORD LowPart;
        DWORD HighPart;
    } u;
    ULONGLONG QuadPart;
} ULARGE_INTEGER, *PULARGE_INTEGER;

/* ---- process creation structures (CreateProcessA) ---------------------------------- */

typedef struct _SECURITY_ATTRIBUTES {
    DWORD nLength;
    LPVOID lpSecurityDescriptor;
    BOOL bInheritHandle;
} SECURITY_ATTRIBUTES, *PSECURITY_ATTRIBUTES, *LPSECURITY_ATTRIBUTES;

typedef struct _STARTUPINFOA {
    DWORD cb;
    LPSTR lpReserved;
    LPSTR lpDesktop;
    LPSTR lpTitle;
    DWORD dwX;
    DWORD dwY;
    DWORD dwXSize;
    DWORD dwYSize;
    DWORD dwXCountChars;
    DWORD dwYCountChars;
    DWORD dwFillAttribute;
    DWORD dwFlags;
    WORD wShowWindow;
    WORD cbReserved2;
    LPBYTE lpReserved2;
    HANDLE hStdInput;
    HANDLE hStdOutput;
    HANDLE hStdError;
} STARTUPINFOA, *LPSTARTUPINFOA;
typedef STARTUPINFOA STARTUPINFO;
typedef LPSTARTUPINFOA LPSTARTUPINFO;

typedef struct _PROCESS_INFORMATION {
    HANDLE hProcess;
    HANDLE hThread;
    DWORD dwProcessId;
    DWORD dwThreadId;
} PROCESS_INFORMATION, *PPROCESS_INFORMATION, *LPPROCESS_INFORMATION;
/* NOLINTEND(bugprone-reserved-identifier) */

/* The kernel's process object, as drivers see it: opaque. */
typedef struct proctimes_eprocess* PEPROCESS;

/* ---- layout checks --------------------------------------------------------------------- */

#ifdef __cplusplus
#define PROCTIMES_STATIC_ASSERT(c, m) static_assert(c, m)
#define PROCTIMES_ALIGNOF(t) alignof(t)
#else
#define PROCTIMES_STATIC_ASSERT(c, m) _Static_assert(c, m)
#define PROCTIMES_ALIGNOF(t) _Alignof(t)
#endif
PROCTIMES_STATIC_ASSERT(sizeof(BOOL) == 4, "BOOL is 32 bits");
PROCTIMES_STATIC_ASSERT(sizeof(WORD) == 2 && sizeof(DWORD) == 4 && sizeof(LONG) == 4, "WORD/DWORD/LONG sizes");
PROCTIMES_STATIC_ASSERT(sizeof(LONGLONG) == 8 && sizeof(ULONG64) == 8, "64-bit integers");
PROCTIMES_STATIC_ASSERT(sizeof(HANDLE) == sizeof(void*), "HANDLE is a pointer");
PROCTIMES_STATIC_ASSERT(sizeof(BOOLEAN) == 1 && sizeof(UCHAR) == 1, "BOOLEAN, UCHAR: 1 byte");
PROCTIMES_STATIC_ASSERT(sizeof(SHORT) == 2 && sizeof(USHORT) == 2, "SHORT, USHORT: 2 bytes");
PROCTIMES_STATIC_ASSERT(sizeof(SSIZE_T) == sizeof(void*) && sizeof(SIZE_T) == sizeof(void*), "SIZE_T, SSIZE_T");
PROCTIMES_STATIC_ASSERT(sizeof(FILETIME) == 8 && PROCTIMES_ALIGNOF(FILETIME) == 4, "FILETIME: 8 bytes, 4-aligned");
PROCTIMES_STATIC_ASSERT(offsetof(FILETIME, dwLowDateTime) == 0 && offsetof(FILETIME, dwHighDateTime) == 4,
                        "FILETIME: low word first");
PROCTIMES_STATIC_ASSERT(sizeof(SYSTEMTIME) == 16, "SYSTEMTIME: 8 WORDs");
PROCTIMES_STATIC_ASSERT(offsetof(SYSTEMTIME, wDayOfWeek) == 4 && offsetof(SYSTEMTIME, wMilliseconds) == 14,
                        "SYSTEMTIME field order");
PROCTIMES_STATIC_ASSERT(sizeof(LARGE_INTEGER) == 8 && PROCTIMES_ALIGNOF(LARGE_INTEGER) == 8, "LARGE_INTEGER");
PROCTIMES_STATIC_ASSERT(offsetof(LARGE_INTEGER, u.HighPart) == 4, "LARGE_INTEGER: low part first");
PROCTIMES_STATIC_ASSERT(sizeof(ULARGE_INTEGER) == 8, "ULARGE_INTEGER");
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
PROCTIMES_STATIC_ASSERT(sizeof(STARTUPINFOA) == 104, "STARTUPINFOA as on Win64");
PROCTIMES_STATIC_ASSERT(sizeof(PROCESS_INFORMATION) == 24, "PROCESS_INFORMATION as on Win64");
PROCTIMES_STATIC_ASSERT(sizeof(SECURITY_ATTRIBUTES) == 24, "SECURITY_ATTRIBUTES as on Win64");
#endif
#undef PROCTIMES_STATIC_ASSERT
#undef PROCTIMES_ALIGNOF

/* ---- constants ------------------------------------------------------------------------- */

#define INVALID_HANDLE_VALUE ((HANDLE)(LONG_PTR)-1)

/* Access rights. The full query right implies the limited one; the limited
 * one alone suffices for every timing call. */
#define DELETE 0x00010000u
#define READ_CONTROL 0x00020000u
#define WRITE_DAC 0x00040000u
#define WRITE_OWNER 0x00080000u
#define SYNCHRONIZE 0x00100000u
#define STANDARD_RIGHTS_REQUIRED 0x000F0000u
#define STANDARD_RIGHTS_READ READ_CONTROL
#define STANDARD_RIGHTS_WRITE READ_CONTROL
#define STANDARD_RIGHTS_EXECUTE READ_CONTROL
#define STANDARD_RIGHTS_ALL 0x001F0000u
#define MAXIMUM_ALLOWED 0x02000000u
#define GENERIC_READ 0x80000000u
#define GENERIC_WRITE 0x40000000u
#define GENERIC_EXECUTE 0x20000000u
#define GENERIC_ALL 0x10000000u

#define PROCESS_TERMINATE 0x0001u
#define PROCESS_CREATE_THREAD 0x0002u
#define PROCESS_SET_SESSIONID 0x0004u
#define PROCESS_VM_OPERATION 0x0008u
#define PROCESS_VM_READ 0x0010u
#define PROCESS_VM_WRITE 0x0020u
#define PROCESS_DUP_HANDLE 0x0040u
#define PROCESS_CREATE_PROCESS 0x0080u
#define PROCESS_SET_QUOTA 0x0100u
#define PROCESS_SET_INFORMATION 0x0200u
#define PROCESS_QUERY_INFORMATION 0x0400u
#define PROCESS_SUSPEND_RESUME 0x0800u
#define PROCESS_QUERY_LIMITED_INFORMATION 0x1000u
#define PROCESS_SET_LIMITED_INFORMATION 0x2000u
#define PROCESS_ALL_ACCESS (STANDARD_RIGHTS_REQUIRED | SYNCHRONIZE | 0xFFFFu)

#define THREAD_TERMINATE 0x0001u
#define THREAD_SUSPEND_RESUME 0x0002u
#define THREAD_GET_CONTEXT 0x0008u
#define THREAD_SET_CONTEXT 0x0010u
#define THREAD_SET_INFORMATION 0x0020u
#define THREAD_QUERY_INFORMATION 0x0040u
#define THREAD_SET_THREAD_TOKEN 0x0080u
#define THREAD_IMPERSONATE 0x0100u
#define THREAD_DIRECT_IMPERSONATION 0x0200u
#define THREAD_SET_LIMITED_INFORMATION 0x0400u
#define THREAD_QUERY_LIMITED_INFORMATION 0x0800u
#define THREAD_RESUME 0x1000u
#define THREAD_ALL_ACCESS (STANDARD_RIGHTS_REQUIRED | SYNCHRONIZE | 0xFFFFu)

/* GetLastError() values this API produces. */
#define ERROR_SUCCESS 0L
#define NO_ERROR 0L
#define ERROR_FILE_NOT_FOUND 2L
#define ERROR_PATH_NOT_FOUND 3L
#define ERROR_TOO_MANY_OPEN_FILES 4L
#define ERROR_ACCESS_DENIED 5L
#define ERROR_INVALID_HANDLE 6L
#define ERROR_NOT_ENOUGH_MEMORY 8L
#define ERROR_BAD_ENVIRONMENT 10L
#define ERROR_INVALID_DATA 13L
#define ERROR_OUTOFMEMORY 14L
#define ERROR_GEN_FAILURE 31L
#define ERROR_NOT_SUPPORTED 50L
#define ERROR_INVALID_PARAMETER 87L
#define ERROR_BAD_EXE_FORMAT 193L
#define ERROR_FILENAME_EXCED_RANGE 206L
#define ERROR_DIRECTORY 267L
#define ERROR_NOACCESS 998L
#define ERROR_INTERNAL_ERROR 1359L

/* DuplicateHandle options */
#define DUPLICATE_CLOSE_SOURCE 0x00000001u
#define DUPLICATE_SAME_ACCESS 0x00000002u

/* WaitForSingleObject */
#define INFINITE 0xFFFFFFFFu
#define WAIT_OBJECT_0 0x00000000u
#define WAIT_ABANDONED 0x00000080u
#define WAIT_TIMEOUT 0x00000102u
#define WAIT_FAILED 0xFFFFFFFFu
/* GetExitCodeProcess while the process runs */
#define STILL_ACTIVE 259u

/* CreateProcess flags: see docs/WIN32.md for which ones are honoured. */
#define DEBUG_PROCESS 0x00000001u
#define DEBUG_ONLY_THIS_PROCESS 0x00000002u
#define CREATE_SUSPENDED 0x00000004u
#define DETACHED_PROCESS 0x00000008u
#define CREATE_NEW_CONSOLE 0x00000010u
#define NORMAL_PRIORITY_CLASS 0x00000020u
#define IDLE_PRIORITY_CLASS 0x00000040u
#define HIGH_PRIORITY_CLASS 0x00000080u
#define REALTIME_PRIORITY_CLASS 0x00000100u
#define CREATE_NEW_PROCESS_GROUP 0x00000200u
#define CREATE_UNICODE_ENVIRONMENT 0x00000400u
#define CREATE_SEPARATE_WOW_VDM 0x00000800u
#define CREATE_SHARED_WOW_VDM 0x00001000u
#define BELOW_NORMAL_PRIORITY_CLASS 0x00004000u
#define ABOVE_NORMAL_PRIORITY_CLASS 0x00008000u
#define INHERIT_PARENT_AFFINITY 0x00010000u
#define CREATE_PROTECTED_PROCESS 0x00040000u
#define EXTENDED_STARTUPINFO_PRESENT 0x00080000u
#define CREATE_BREAKAWAY_FROM_JOB 0x01000000u
#define CREATE_PRESERVE_CODE_AUTHZ_LEVEL 0x02000000u
#define CREATE_DEFAULT_ERROR_MODE 0x04000000u
#define CREATE_NO_WINDOW 0x08000000u
#define STARTF_USESHOWWINDOW 0x00000001u
#define STARTF_USESIZE 0x00000002u
#define STARTF_USEPOSITION 0x00000004u
#define STARTF_USECOUNTCHARS 0x00000008u
#define STARTF_USEFILLATTRIBUTE 0x00000010u
#define STARTF_FORCEONFEEDBACK 0x00000040u
#define STARTF_FORCEOFFFEEDBACK 0x00000080u
#define STARTF_USESTDHANDLES 0x00000100u
#define SW_HIDE 0
#define SW_SHOWNORMAL 1
#define SW_SHOW 5

/* NTSTATUS (kernel-style calls) */
#define STATUS_SUCCESS ((NTSTATUS)0x00000000L)
#define STATUS_ACCESS_VIOLATION ((NTSTATUS)0xC0000005L)
#define STATUS_INVALID_PARAMETER ((NTSTATUS)0xC000000DL)
#define STATUS_NO_MEMORY ((NTSTATUS)0xC0000017L)
#define STATUS_UNSUCCESSFUL ((NTSTATUS)0xC0000001L)
#ifndef NT_SUCCESS
#define NT_SUCCESS(s) (((NTSTATUS)(s)) >= 0)
#endif

/* ---- the exported, prefixed functions ----------------------------------------------- */

/* Errors */
PROCTIMES_API DWORD proctimes_GetLastError(void);
PROCTIMES_API void proctimes_SetLastError(DWORD dwErrCode);

/* Processes and threads. Handles are process-local values (never file
 * descriptors); GetCurrentProcess() is (HANDLE)-1, GetCurrentThread() (HANDLE)-2. */
PROCTIMES_API HANDLE proctimes_GetCurrentProcess(void);
PROCTIMES_API HANDLE proctimes_GetCurrentThread(void);
PROCTIMES_API DWORD proctimes_GetCurrentProcessId(void);
PROCTIMES_API DWORD proctimes_GetCurrentThreadId(void);
PROCTIMES_API HANDLE proctimes_OpenProcess(DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD dwProcessId);
PROCTIMES_API HANDLE proctimes_OpenThread(DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD dwThreadId);
PROCTIMES_API BOOL proctimes_CloseHandle(HANDLE hObject);
PROCTIMES_API DWORD proctimes_GetProcessId(HANDLE Process);
PROCTIMES_API DWORD proctimes_GetThreadId(HANDLE Thread);
PROCTIMES_API BOOL proctimes_CreateProcessA(LPCSTR lpApplicationName, LPSTR lpCommandLine,
                                            LPSECURITY_ATTRIBUTES lpProcessAttributes,
                                            LPSECURITY_ATTRIBUTES lpThreadAttributes, BOOL bInheritHandles,
                                            DWORD dwCreationFlags, LPVOID lpEnvironment, LPCSTR lpCurrentDirectory,
                                            LPSTARTUPINFOA lpStartupInfo, LPPROCESS_INFORMATION lpProcessInformation);
PROCTIMES_API DWORD proctimes_WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds);
PROCTIMES_API BOOL proctimes_GetExitCodeProcess(HANDLE hProcess, LPDWORD lpExitCode);
PROCTIMES_API BOOL proctimes_TerminateProcess(HANDLE hProcess, UINT uExitCode);
/* Within the calling process only: both process handles must name it. */
PROCTIMES_API BOOL proctimes_DuplicateHandle(HANDLE hSourceProcessHandle, HANDLE hSourceHandle,
                                             HANDLE hTargetProcessHandle, LPHANDLE lpTargetHandle,
                                             DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD dwOptions);

/* Timing */
PROCTIMES_API BOOL proctimes_GetProcessTimes(HANDLE hProcess, LPFILETIME lpCreationTime, LPFILETIME lpExitTime,
                                             LPFILETIME lpKernelTime, LPFILETIME lpUserTime);
PROCTIMES_API BOOL proctimes_GetThreadTimes(HANDLE hThread, LPFILETIME lpCreationTime, LPFILETIME lpExitTime,
                                            LPFILETIME lpKernelTime, LPFILETIME lpUserTime);
PROCTIMES_API BOOL proctimes_QueryProcessCycleTime(HANDLE ProcessHandle, PULONG64 CycleTime);
PROCTIMES_API BOOL proctimes_QueryThreadCycleTime(HANDLE ThreadHandle, PULONG64 CycleTime);

/* FILETIME helpers */
PROCTIMES_API void proctimes_GetSystemTimeAsFileTime(LPFILETIME lpSystemTimeAsFileTime);
PROCTIMES_API void proctimes_GetSystemTime(LPSYSTEMTIME lpSystemTime);
PROCTIMES_API BOOL proctimes_FileTimeToSystemTime(const FILETIME* lpFileTime, LPSYSTEMTIME lpSystemTime);
PROCTIMES_API BOOL proctimes_SystemTimeToFileTime(const SYSTEMTIME* lpSystemTime, LPFILETIME lpFileTime);
PROCTIMES_API BOOL proctimes_FileTimeToLocalFileTime(const FILETIME* lpFileTime, LPFILETIME lpLocalFileTime);
PROCTIMES_API BOOL proctimes_LocalFileTimeToFileTime(const FILETIME* lpLocalFileTime, LPFILETIME lpFileTime);
PROCTIMES_API BOOL proctimes_FileTimeToDosDateTime(const FILETIME* lpFileTime, LPWORD lpFatDate, LPWORD lpFatTime);
PROCTIMES_API BOOL proctimes_DosDateTimeToFileTime(WORD wFatDate, WORD wFatTime, LPFILETIME lpFileTime);
PROCTIMES_API LONG proctimes_CompareFileTime(const FILETIME* lpFileTime1, const FILETIME* lpFileTime2);

/* Kernel-style calls (as a driver would use them, here in user mode) */
PROCTIMES_API PEPROCESS proctimes_PsGetCurrentProcess(void);
PROCTIMES_API NTSTATUS proctimes_PsLookupProcessByProcessId(HANDLE ProcessId, PEPROCESS* Process);
PROCTIMES_API LONG_PTR proctimes_ObReferenceObject(PVOID Object);
PROCTIMES_API LONG_PTR proctimes_ObDereferenceObject(PVOID Object);
PROCTIMES_API HANDLE proctimes_PsGetProcessId(PEPROCESS Process);
PROCTIMES_API LONGLONG proctimes_PsGetProcessCreateTimeQuadPart(PEPROCESS Process);
PROCTIMES_API void proctimes_KeQuerySystemTime(PLARGE_INTEGER CurrentTime);

/* proctimes extension, no Windows counterpart: what the exit time that
 * GetProcessTimes / GetThreadTimes report for this handle promises. Linux keeps
 * no exit instant; see docs/WIN32.md and docs/EXIT.md.
 *   PROCTIMES_EXIT_TIME_NONE      running: the exit time is 0; *lpEarliestExitTime = 0
 *   PROCTIMES_EXIT_TIME_OBSERVED  stamped when the end was seen: the process or thread ended NO LATER
 *                                 than the exit time and no earlier than *lpEarliestExitTime
 *   PROCTIMES_EXIT_TIME_RECORDED  from the kernel's exit record: creation + elapsed time (1 us),
 *                                 floored to the creation's 10 ms tick; *lpEarliestExitTime = exit time
 * Any process or thread handle with a query right, or a pseudo-handle (always NONE).
 * Errors as GetProcessTimes: 6 invalid handle, 5 no query right, 998 NULL pointer. */
#define PROCTIMES_EXIT_TIME_NONE 0u
#define PROCTIMES_EXIT_TIME_OBSERVED 1u
#define PROCTIMES_EXIT_TIME_RECORDED 2u
PROCTIMES_API BOOL proctimes_GetExitTimeInfo(HANDLE hObject, LPDWORD lpSource, LPFILETIME lpEarliestExitTime);

/* ---- the Windows names ------------------------------------------------------------------ */

#ifndef PROCTIMES_NO_WIN32_NAMES
#define GetLastError proctimes_GetLastError
#define SetLastError proctimes_SetLastError
#define GetCurrentProcess proctimes_GetCurrentProcess
#define GetCurrentThread proctimes_GetCurrentThread
#define GetCurrentProcessId proctimes_GetCurrentProcessId
#define GetCurrentThreadId proctimes_GetCurrentThreadId
#define OpenProcess proctimes_OpenProcess
#define OpenThread proctimes_OpenThread
#define CloseHandle proctimes_CloseHandle
#define GetProcessId proctimes_GetProcessId
#define GetThreadId proctimes_GetThreadId
#define CreateProcessA proctimes_CreateProcessA
#define CreateProcess proctimes_CreateProcessA
#define WaitForSingleObject proctimes_WaitForSingleObject
#define GetExitCodeProcess proctimes_GetExitCodeProcess
#define TerminateProcess proctimes_TerminateProcess
#define DuplicateHandle proctimes_DuplicateHandle
#define GetProcessTimes proctimes_GetProcessTimes
#define GetThreadTimes proctimes_GetThreadTimes
#define QueryProcessCycleTime proctimes_QueryProcessCycleTime
#define QueryThreadCycleTime proctimes_QueryThreadCycleTime
#define GetSystemTimeAsFileTime proctimes_GetSystemTimeAsFileTime
#define GetSystemTime proctimes_GetSystemTime
#define FileTimeToSystemTime proctimes_FileTimeToSystemTime
#define SystemTimeToFileTime proctimes_SystemTimeToFileTime
#define FileTimeToLocalFileTime proctimes_FileTimeToLocalFileTime
#define LocalFileTimeToFileTime proctimes_LocalFileTimeToFileTime
#define FileTimeToDosDateTime proctimes_FileTimeToDosDateTime
#define DosDateTimeToFileTime proctimes_DosDateTimeToFileTime
#define CompareFileTime proctimes_CompareFileTime
#define PsGetCurrentProcess proctimes_PsGetCurrentProcess
#define PsLookupProcessByProcessId proctimes_PsLookupProcessByProcessId
#define ObReferenceObject proctimes_ObReferenceObject
#define ObDereferenceObject proctimes_ObDereferenceObject
#define PsGetProcessId proctimes_PsGetProcessId
#define PsGetProcessCreateTimeQuadPart proctimes_PsGetProcessCreateTimeQuadPart
#define KeQuerySystemTime proctimes_KeQuerySystemTime
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PROCTIMES_WINDOWS_H */
