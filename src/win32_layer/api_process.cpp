// SPDX-License-Identifier: MIT
// Win32 layer: last error, handles, processes and threads, CreateProcessA,
// WaitForSingleObject, GetExitCodeProcess. Each entry point checks its
// arguments, calls the core, converts, and sets the last error; nothing throws
// across this boundary.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/spawn.hpp"
#include "win32_layer/child.hpp"
#include "win32_layer/cmdline.hpp"
#include "win32_layer/handles.hpp"
#include "win32_layer/win32.hpp"

using namespace proctimes;
using namespace proctimes::win32;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::steady_clock;

namespace {

HANDLE as_handle(std::uintptr_t v) noexcept { return reinterpret_cast<HANDLE>(v); }

// A pid or tid from a DWORD; nullopt for 0 and for values no task can have.
std::optional<pid_t> task_id(DWORD id) noexcept {
    if (id == 0 || id > static_cast<DWORD>(detail::max_task_id())) return std::nullopt;
    return static_cast<pid_t>(id);
}

// The core's wait timeout for a Win32 one: empty for INFINITE.
std::optional<nanoseconds> wait_timeout(DWORD ms) noexcept {
    if (ms == INFINITE) return std::nullopt;
    return nanoseconds{milliseconds{ms}};
}

// WAIT_OBJECT_0 / WAIT_TIMEOUT for a core wait's answer, or WAIT_FAILED with
// the last error set.
DWORD wait_result(const result<bool>& r) noexcept {
    if (!r) return fail<DWORD>(WAIT_FAILED, error_from(r.error(), error_context::query));
    return *r ? WAIT_OBJECT_0 : WAIT_TIMEOUT;
}

// Waits by sampling, for threads on kernels without thread pidfds (< 6.9):
// the thread is gone once its kept descriptors answer ESRCH.
DWORD wait_by_polling(const thread& t, DWORD ms) noexcept {
    const auto deadline = steady_clock::now() + milliseconds{ms};
    for (;;) {
        auto r = t.times();
        if (!r && r.error() == std::errc::no_such_process) return WAIT_OBJECT_0;
        if (ms != INFINITE && steady_clock::now() >= deadline) return WAIT_TIMEOUT;
        std::this_thread::sleep_for(milliseconds{1});
    }
}

// A program written for Windows expects an exited thread's or process's
// final CPU times: exit records on by default where permitted (docs/WIN32.md;
// PROCTIMES_EXIT_RECORDS=0 or an explicit set_exit_records_enabled wins).
// Before a handle opens: the listener registers with the first one watched.
void use_win32_defaults() noexcept { set_exit_records_default(true); }

// The exit code Windows code expects: the exit status, or 128 + the signal
// that ended the process (the shell's convention).
DWORD exit_code_of(const exit_status& e) noexcept { return static_cast<DWORD>(e.shell_code()); }

}  // namespace

extern "C" {

// ---- last error --------------------------------------------------------------------

DWORD proctimes_GetLastError(void) { return last_error(); }
void proctimes_SetLastError(DWORD dwErrCode) { last_error() = dwErrCode; }

// ---- the calling process and thread ----------------------------------------------

HANDLE proctimes_GetCurrentProcess(void) { return as_handle(current_process_handle); }
HANDLE proctimes_GetCurrentThread(void) { return as_handle(current_thread_handle); }
DWORD proctimes_GetCurrentProcessId(void) { return static_cast<DWORD>(::getpid()); }
DWORD proctimes_GetCurrentThreadId(void) { return static_cast<DWORD>(this_thread::id()); }

// ---- opening and closing --------------------------------------------------------------

HANDLE proctimes_OpenProcess(DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD dwProcessId) {
    (void)bInheritHandle;  // handles are never inherited: see docs/WIN32.md
    try {
        const auto pid = task_id(dwProcessId);
        if (!pid) return fail<HANDLE>(nullptr, ERROR_INVALID_PARAMETER);
        use_win32_defaults();
        auto obj = std::make_shared<process_object>();
        // A child of CreateProcess is the same object, with its exit record:
        // while it has not exited it cannot have been reaped (only this
        // library reaps it); once it has, the pid may name a newer process.
        auto child = created_process::find(*pid);
        if (child && !child->reaped()) {
            obj->child = std::move(child);
        } else {
            auto p = process::open(*pid);
            if (p) {
                obj->other = std::move(*p);
            } else if (child && p.error() == std::errc::no_such_process) {
                obj->child = std::move(child);  // exited, but its object is still held open
            } else {
                return fail<HANDLE>(nullptr, error_from(p.error(), error_context::open));
            }
        }
        handle_entry e;
        e.kind = object_kind::process;
        e.access = normalize_process_access(dwDesiredAccess);
        e.process = std::move(obj);
        return as_handle(handle_table::instance().insert(std::move(e)));
    } catch (...) {
        return fail<HANDLE>(nullptr, error_from_current_exception());
    }
}

HANDLE proctimes_OpenThread(DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD dwThreadId) {
    (void)bInheritHandle;
    try {
        const auto tid = task_id(dwThreadId);
        if (!tid) return fail<HANDLE>(nullptr, ERROR_INVALID_PARAMETER);
        use_win32_defaults();
        auto obj = std::make_shared<thread_object>();
        auto child = created_process::find(*tid);  // the main thread of a child has its pid
        if (child && !child->reaped()) {
            obj->child = std::move(child);
        } else {
            auto t = thread::open(*tid);
            if (t) {
                obj->other = std::move(*t);
            } else if (child && t.error() == std::errc::no_such_process) {
                obj->child = std::move(child);
            } else {
                return fail<HANDLE>(nullptr, error_from(t.error(), error_context::open));
            }
        }
        handle_entry e;
        e.kind = object_kind::thread;
        e.access = normalize_thread_access(dwDesiredAccess);
        e.thread = std::move(obj);
        return as_handle(handle_table::instance().insert(std::move(e)));
    } catch (...) {
        return fail<HANDLE>(nullptr, error_from_current_exception());
    }
}

BOOL proctimes_CloseHandle(HANDLE hObject) {
    const auto v = reinterpret_cast<std::uintptr_t>(hObject);
    // Closing a pseudo-handle is a successful no-op on Windows.
    if (v == current_process_handle || v == current_thread_handle) return TRUE;
    if (!handle_table::instance().erase(v)) return fail<BOOL>(FALSE, ERROR_INVALID_HANDLE);
    return TRUE;
}

DWORD proctimes_GetProcessId(HANDLE Process) {
    process_ref p;
    if (DWORD err = resolve_process(Process, PROCESS_QUERY_LIMITED_INFORMATION, p)) return fail<DWORD>(0, err);
    return static_cast<DWORD>(p.self ? ::getpid() : p.object->id());
}

DWORD proctimes_GetThreadId(HANDLE Thread) {
    thread_ref t;
    if (DWORD err = resolve_thread(Thread, THREAD_QUERY_LIMITED_INFORMATION, t)) return fail<DWORD>(0, err);
    return static_cast<DWORD>(t.self ? this_thread::id() : t.object->id());
}

// ---- creating and waiting ---------------------------------------------------------------

BOOL proctimes_CreateProcessA(LPCSTR lpApplicationName, LPSTR lpCommandLine, LPSECURITY_ATTRIBUTES lpProcessAttributes,
                              LPSECURITY_ATTRIBUTES lpThreadAttributes, BOOL bInheritHandles, DWORD dwCreationFlags,
                              LPVOID lpEnvironment, LPCSTR lpCurrentDirectory, LPSTARTUPINFOA lpStartupInfo,
                              LPPROCESS_INFORMATION lpProcessInformation) {
    (void)lpProcessAttributes;  // security descriptors and handle inheritance do not apply
    (void)lpThreadAttributes;
    (void)bInheritHandles;
    try {
        if (!lpApplicationName && !lpCommandLine) return fail<BOOL>(FALSE, ERROR_INVALID_PARAMETER);
        // Features that would silently change what the child does are refused.
        if (dwCreationFlags &
            (CREATE_SUSPENDED | DEBUG_PROCESS | DEBUG_ONLY_THIS_PROCESS | EXTENDED_STARTUPINFO_PRESENT))
            return fail<BOOL>(FALSE, ERROR_NOT_SUPPORTED);
        if (lpEnvironment && (dwCreationFlags & CREATE_UNICODE_ENVIRONMENT))
            return fail<BOOL>(FALSE, ERROR_NOT_SUPPORTED);
        if (!lpStartupInfo || !lpProcessInformation) return fail<BOOL>(FALSE, ERROR_NOACCESS);
        if (lpStartupInfo->dwFlags & STARTF_USESTDHANDLES) return fail<BOOL>(FALSE, ERROR_NOT_SUPPORTED);

        spawn_options o;
        o.argv = split_command_line(lpCommandLine ? lpCommandLine : lpApplicationName);
        if (lpApplicationName) {
            // The module is named exactly: no search.
            o.program = lpApplicationName;
            if (o.program.empty()) return fail<BOOL>(FALSE, ERROR_FILE_NOT_FOUND);
            if (o.argv.empty()) o.argv.push_back(o.program);
        } else {
            if (o.argv.empty() || o.argv[0].empty()) return fail<BOOL>(FALSE, ERROR_FILE_NOT_FOUND);
        }
        if (lpEnvironment) {
            auto env = parse_environment_block(static_cast<const char*>(lpEnvironment));
            if (!env) return fail<BOOL>(FALSE, ERROR_BAD_ENVIRONMENT);
            o.environment = std::move(*env);
        }
        if (lpCurrentDirectory) {
            struct stat st {};
            if (::stat(lpCurrentDirectory, &st) != 0 || !S_ISDIR(st.st_mode)) return fail<BOOL>(FALSE, ERROR_DIRECTORY);
            o.working_directory = lpCurrentDirectory;
        }
        o.new_process_group = (dwCreationFlags & CREATE_NEW_PROCESS_GROUP) != 0;
        o.default_signals = true;  // a new Windows process inherits no signal state
        // Windows runs no file of an unknown format (ERROR_BAD_EXE_FORMAT),
        // where execvp(3) would hand it to /bin/sh.
        o.run_scripts_with_sh = false;

        use_win32_defaults();
        auto child = created_process::create(o);
        if (!child) return fail<BOOL>(FALSE, error_from(child.error(), error_context::spawn));

        auto pobj = std::make_shared<process_object>();
        pobj->child = *child;
        auto tobj = std::make_shared<thread_object>();
        tobj->child = *child;
        handle_entry pe;
        pe.kind = object_kind::process;
        pe.access = normalize_process_access(PROCESS_ALL_ACCESS);
        pe.process = std::move(pobj);
        handle_entry te;
        te.kind = object_kind::thread;
        te.access = normalize_thread_access(THREAD_ALL_ACCESS);
        te.thread = std::move(tobj);
        auto& table = handle_table::instance();
        const std::uintptr_t hp = table.insert(std::move(pe));
        std::uintptr_t ht = 0;
        try {
            ht = table.insert(std::move(te));
        } catch (...) {
            table.erase(hp);
            throw;
        }
        lpProcessInformation->hProcess = as_handle(hp);
        lpProcessInformation->hThread = as_handle(ht);
        lpProcessInformation->dwProcessId = static_cast<DWORD>((*child)->id());
        lpProcessInformation->dwThreadId = static_cast<DWORD>((*child)->id());  // the main thread's tid is the pid
        return TRUE;
    } catch (...) {
        return fail<BOOL>(FALSE, error_from_current_exception());
    }
}

DWORD proctimes_WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds) {
    const auto v = reinterpret_cast<std::uintptr_t>(hHandle);
    if (v == current_process_handle || v == current_thread_handle) {
        // The caller waits for its own end: as on Windows, that never comes.
        if (dwMilliseconds == INFINITE)
            for (;;) std::this_thread::sleep_for(std::chrono::hours{24});
        std::this_thread::sleep_for(milliseconds{dwMilliseconds});
        return WAIT_TIMEOUT;
    }
    std::optional<handle_entry> e;
    try {
        e = handle_table::instance().find(v);
    } catch (...) {
        return fail<DWORD>(WAIT_FAILED, error_from_current_exception());
    }
    if (!e) return fail<DWORD>(WAIT_FAILED, ERROR_INVALID_HANDLE);
    if ((e->access & SYNCHRONIZE) == 0) return fail<DWORD>(WAIT_FAILED, ERROR_ACCESS_DENIED);

    if (e->kind == object_kind::process) {
        const auto& obj = *e->process;
        if (obj.child) return wait_result(obj.child->wait(wait_timeout(dwMilliseconds)));
        return wait_result(wait_for_exit(obj.other, wait_timeout(dwMilliseconds)));
    }
    const auto& obj = *e->thread;
    if (obj.child) return wait_result(obj.child->wait_main_thread(wait_timeout(dwMilliseconds)));
    auto r = wait_for_exit(obj.other, wait_timeout(dwMilliseconds));
    // A thread the platform cannot wait on (Linux < 6.9: no thread pidfds).
    if (!r && r.error() == proctimes::errc::not_supported) return wait_by_polling(obj.other, dwMilliseconds);
    return wait_result(r);
}

BOOL proctimes_GetExitCodeProcess(HANDLE hProcess, LPDWORD lpExitCode) {
    process_ref p;
    if (DWORD err = resolve_process(hProcess, PROCESS_QUERY_LIMITED_INFORMATION, p)) return fail<BOOL>(FALSE, err);
    if (!lpExitCode) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    if (p.self) {
        *lpExitCode = STILL_ACTIVE;
        return TRUE;
    }
    auto st = p.object->child ? p.object->child->status() : p.object->other.exit_status();
    if (!st) {
        // Exited, but reaped (by its parent, or by other code of this process)
        // before anyone could read its status.
        if (st.error() == std::errc::not_supported) return fail<BOOL>(FALSE, ERROR_NOT_SUPPORTED);
        return fail<BOOL>(FALSE, error_from(st.error(), error_context::query));
    }
    *lpExitCode = *st ? exit_code_of(**st) : STILL_ACTIVE;
    return TRUE;
}

// ---- ending processes, duplicating handles --------------------------------------------

BOOL proctimes_TerminateProcess(HANDLE hProcess, UINT uExitCode) {
    process_ref p;
    if (DWORD err = resolve_process(hProcess, PROCESS_TERMINATE, p)) return fail<BOOL>(FALSE, err);
    // The caller ends itself at once, without exit handlers (as Windows runs no
    // DLL detach code); its parent sees the low 8 bits of the code.
    if (names_caller(p)) ::_exit(static_cast<int>(uExitCode));
    if (p.object->child) {
        auto r = p.object->child->terminate(static_cast<int>(uExitCode));
        if (!r) return fail<BOOL>(FALSE, error_from(r.error(), error_context::query));
        // Windows: a process that has already ended cannot be terminated.
        if (!*r) return fail<BOOL>(FALSE, ERROR_ACCESS_DENIED);
        return TRUE;
    }
    // Any other process: ended through the handle (Linux: SIGKILL through its
    // pidfd, never by pid: the pid may name a newer process). Its exit code
    // is then 128 + 9.
    auto st = p.object->other.exit_status();
    if (!st || *st) return fail<BOOL>(FALSE, ERROR_ACCESS_DENIED);  // ended (or reaped unread)
    if (const auto ec = detail::terminate_process(p.object->other))
        return fail<BOOL>(
            FALSE, ec == std::errc::no_such_process ? ERROR_ACCESS_DENIED : error_from(ec, error_context::query));
    return TRUE;
}

BOOL proctimes_DuplicateHandle(HANDLE hSourceProcessHandle, HANDLE hSourceHandle, HANDLE hTargetProcessHandle,
                               LPHANDLE lpTargetHandle, DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD dwOptions) {
    (void)bInheritHandle;  // handles are never inherited
    try {
        // Handles are values of one process's table: both process handles must
        // name the calling process, with the right Windows asks for.
        process_ref source_process, target_process;
        DWORD err = resolve_process(hSourceProcessHandle, PROCESS_DUP_HANDLE, source_process);
        if (!err && !names_caller(source_process)) err = ERROR_NOT_SUPPORTED;
        if (err) return fail<BOOL>(FALSE, err);
        // From here on, DUPLICATE_CLOSE_SOURCE closes the source whatever happens (as Windows).
        const auto finish = [&](BOOL r, DWORD e) {
            if (dwOptions & DUPLICATE_CLOSE_SOURCE) (void)proctimes_CloseHandle(hSourceHandle);
            return r ? r : fail<BOOL>(FALSE, e);
        };
        err = resolve_process(hTargetProcessHandle, PROCESS_DUP_HANDLE, target_process);
        if (!err && !names_caller(target_process)) err = ERROR_NOT_SUPPORTED;
        if (err) return finish(FALSE, err);

        const bool same_access = (dwOptions & DUPLICATE_SAME_ACCESS) != 0;
        const auto v = reinterpret_cast<std::uintptr_t>(hSourceHandle);
        handle_entry e;
        if (v == current_process_handle) {
            // A pseudo-handle duplicated is a real handle to the caller.
            use_win32_defaults();
            auto self = process::open(::getpid());
            if (!self) return finish(FALSE, error_from(self.error(), error_context::open));
            e.kind = object_kind::process;
            e.process = std::make_shared<process_object>();
            e.process->other = std::move(*self);
            e.access = normalize_process_access(same_access ? PROCESS_ALL_ACCESS : dwDesiredAccess);
        } else if (v == current_thread_handle) {
            use_win32_defaults();
            auto self = thread::open(::getpid(), this_thread::id());
            if (!self) return finish(FALSE, error_from(self.error(), error_context::open));
            e.kind = object_kind::thread;
            e.thread = std::make_shared<thread_object>();
            e.thread->other = std::move(*self);
            e.access = normalize_thread_access(same_access ? THREAD_ALL_ACCESS : dwDesiredAccess);
        } else {
            auto found = handle_table::instance().find(v);
            if (!found) return finish(FALSE, ERROR_INVALID_HANDLE);
            e = std::move(*found);  // the same object: one process or thread, one exit record
            if (!same_access)
                e.access = e.kind == object_kind::process ? normalize_process_access(dwDesiredAccess)
                                                          : normalize_thread_access(dwDesiredAccess);
        }
        // Without a place to put it, Windows makes a handle nobody can use.
        if (lpTargetHandle) *lpTargetHandle = as_handle(handle_table::instance().insert(std::move(e)));
        return finish(TRUE, 0);
    } catch (...) {
        return fail<BOOL>(FALSE, error_from_current_exception());
    }
}

}  // extern "C"
