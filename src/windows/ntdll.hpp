// SPDX-License-Identifier: MIT
// The few ntdll functions the windows backend uses, resolved at run time
// with GetProcAddress (the import library is not needed, and a function a
// system lacks is errc::not_supported, not a load failure).
#pragma once

#include <windows.h>

namespace proctimes::inline v1::detail::win {

using nt_status = LONG;

/// NtQuerySystemInformation, or null.
using nt_query_system_information_fn = nt_status(WINAPI*)(ULONG, PVOID, ULONG, PULONG);
nt_query_system_information_fn nt_query_system_information() noexcept;
/// NtQueryInformationProcess, or null.
using nt_query_information_process_fn = nt_status(WINAPI*)(HANDLE, ULONG, PVOID, ULONG, PULONG);
nt_query_information_process_fn nt_query_information_process() noexcept;

constexpr nt_status status_info_length_mismatch = static_cast<nt_status>(0xC0000004L);

}  // namespace proctimes::inline v1::detail::win
