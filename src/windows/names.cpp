// SPDX-License-Identifier: MIT
// The windows backend's names and kin (backend/backend.hpp: core_name,
// core_parent_id, core_thread_ids): the image's file name
// (QueryFullProcessImageNameW) or the thread's description
// (GetThreadDescription, Windows 10 1607+), the parent's id
// (NtQueryInformationProcess, ProcessBasicInformation), and the process's
// threads (a Toolhelp32 thread snapshot).
#include <windows.h>
// After windows.h, which it needs:
#include <tlhelp32.h>

#include <algorithm>
#include <string>
#include <vector>

#include "windows/ntdll.hpp"
#include "windows/task.hpp"

namespace proctimes::inline v1::detail {

namespace win {

namespace {
FARPROC ntdll_function(const char* name) noexcept {
    HMODULE ntdll = ::GetModuleHandleW(L"ntdll.dll");
    return ntdll ? ::GetProcAddress(ntdll, name) : nullptr;
}
}  // namespace

// GetProcAddress returns a FARPROC that is cast to the function's own type.
nt_query_system_information_fn nt_query_system_information() noexcept {
    static const auto fn = reinterpret_cast<nt_query_system_information_fn>(  // NOLINT
        reinterpret_cast<void*>(ntdll_function("NtQuerySystemInformation")));
    return fn;
}

nt_query_information_process_fn nt_query_information_process() noexcept {
    static const auto fn = reinterpret_cast<nt_query_information_process_fn>(  // NOLINT
        reinterpret_cast<void*>(ntdll_function("NtQueryInformationProcess")));
    return fn;
}

/// UTF-16 → UTF-8 (invalid sequences become U+FFFD).
std::string utf8(const wchar_t* s, int n) {
    if (n <= 0) return {};
    const int len = ::WideCharToMultiByte(CP_UTF8, 0, s, n, nullptr, 0, nullptr, nullptr);
    std::string out(static_cast<std::size_t>(std::max(len, 0)), '\0');
    if (len > 0) ::WideCharToMultiByte(CP_UTF8, 0, s, n, out.data(), len, nullptr, nullptr);
    return out;
}

}  // namespace win

namespace {

using get_thread_description_fn = HRESULT(WINAPI*)(HANDLE, PWSTR*);

result<std::string> thread_name(HANDLE h) {
    HMODULE k32 = ::GetModuleHandleW(L"kernel32.dll");
    const auto fn = reinterpret_cast<get_thread_description_fn>(  // NOLINT
        reinterpret_cast<void*>(k32 ? ::GetProcAddress(k32, "GetThreadDescription") : nullptr));
    if (!fn) return make_error_code(errc::not_supported);
    PWSTR desc = nullptr;
    const HRESULT hr = fn(h, &desc);
    if (FAILED(hr)) return win::error(static_cast<DWORD>(hr & 0xFFFF));
    std::string s = win::utf8(desc, static_cast<int>(::wcslen(desc)));
    ::LocalFree(desc);
    return s;
}

// The layout of PROCESS_BASIC_INFORMATION (winternl.h), as documented.
struct basic_information {
    LONG exit_status;
    PVOID peb;
    ULONG_PTR affinity;
    LONG base_priority;
    ULONG_PTR unique_process_id;
    ULONG_PTR inherited_from;
};

}  // namespace

result<std::string> core_name(const task_core& c) {
    if (c.is_thread) return thread_name(c.handle.get());
    std::wstring path(32768, L'\0');
    DWORD n = static_cast<DWORD>(path.size());
    if (!::QueryFullProcessImageNameW(c.handle.get(), 0, path.data(), &n)) return win::last_error();
    path.resize(n);
    const auto slash = path.find_last_of(L"\\/");
    const std::wstring base = slash == std::wstring::npos ? path : path.substr(slash + 1);
    return win::utf8(base.data(), static_cast<int>(base.size()));
}

result<pid_t> core_parent_id(const task_core& c) noexcept {
    const auto query = win::nt_query_information_process();
    if (!query) return make_error_code(errc::not_supported);
    if (c.is_thread) return make_error_code(errc::invalid_argument);
    basic_information bi{};
    ULONG len = 0;
    const win::nt_status st = query(c.handle.get(), 0 /* ProcessBasicInformation */, &bi, sizeof bi, &len);
    if (st < 0) return make_error_code(errc::access_denied);
    return static_cast<pid_t>(bi.inherited_from);
}

result<std::vector<pid_t>> core_thread_ids(const task_core& c) {
    win::unique_handle snap(::CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0));
    if (!snap) return win::last_error();
    std::vector<pid_t> ids;
    THREADENTRY32 e{};
    e.dwSize = sizeof e;
    for (BOOL ok = ::Thread32First(snap.get(), &e); ok; ok = ::Thread32Next(snap.get(), &e)) {
        if (static_cast<pid_t>(e.th32OwnerProcessID) == c.pid) ids.push_back(static_cast<pid_t>(e.th32ThreadID));
        e.dwSize = sizeof e;
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace proctimes::inline v1::detail
