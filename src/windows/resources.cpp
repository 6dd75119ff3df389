// SPDX-License-Identifier: MIT
// The windows backend's per-process resources (backend/backend.hpp;
// proctimes/resources.hpp): what the Win32 API gives of another process with
// PROCESS_QUERY_LIMITED_INFORMATION. Memory: GetProcessMemoryInfo (working
// set; commit charge as the virtual size; no swap figure). I/O:
// GetProcessIoCounters (every read and write, not only storage). Files:
// GetProcessHandleCount (every handle; no limit). Context switches,
// proportional memory, wait channels and threads are not given: `missing`.
#include "windows/win.hpp"  // <windows.h>, before <psapi.h>

#include <psapi.h>

#include "backend/backend.hpp"
#include "proctimes/filetime.hpp"

namespace proctimes::inline v1::detail {

result<process_resources> read_resources(pid_t pid, const resource_options& o) noexcept {
    if (pid > max_task_id()) return errc::invalid_argument;
    win::unique_handle h(::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid)));
    if (!h) {
        const DWORD code = ::GetLastError();
        return code == ERROR_INVALID_PARAMETER ? make_error_code(errc::no_such_process) : win::error(code);
    }
    if (::GetProcessId(h.get()) != static_cast<DWORD>(pid)) return errc::no_such_process;
    FILETIME c{}, e{}, k{}, u{};
    if (!::GetProcessTimes(h.get(), &c, &e, &k, &u)) return win::last_error();
    try {
        process_resources r;
        r.id = pid;
        const std::uint64_t creation = win::ticks(c);
        r.start_ticks = creation > filetime_unix_epoch ? creation - filetime_unix_epoch : 0;
        if (o.start_ticks && *o.start_ticks != r.start_ticks) return errc::no_such_process;
        // CPU in clock ticks of 100 ns (the FILETIME unit), not USER_HZ.
        r.user_ticks = win::ticks(u);
        r.system_ticks = win::ticks(k);
        const resource_family fam = o.families;
        if (has(fam, resource_family::memory)) {
            PROCESS_MEMORY_COUNTERS pmc{};
            // (Its PageFaultCount mixes soft and hard faults: neither count is given.)
            if (::GetProcessMemoryInfo(h.get(), &pmc, sizeof pmc))
                r.memory = resource_memory{pmc.WorkingSetSize, pmc.PagefileUsage, 0};
            else
                r.missing |= resource_family::memory;
        }
        if (has(fam, resource_family::io)) {
            IO_COUNTERS io{};
            if (::GetProcessIoCounters(h.get(), &io))
                r.io = resource_io{io.ReadTransferCount, io.WriteTransferCount, std::nullopt,
                                   std::nullopt,         io.ReadOperationCount, io.WriteOperationCount};
            else
                r.missing |= resource_family::io;
        }
        if (has(fam, resource_family::files)) {
            DWORD n = 0;
            if (::GetProcessHandleCount(h.get(), &n)) r.open_files = n;
            r.missing |= resource_family::files;  // no limit, at least
        }
        for (const resource_family f :
             {resource_family::switches, resource_family::proportional, resource_family::wait_channel,
              resource_family::threads, resource_family::command_line, resource_family::executable,
              resource_family::cgroups, resource_family::owner})
            if (has(fam, f)) r.missing |= f;
        return r;
    } catch (const std::bad_alloc&) {
        return make_error_code(std::errc::not_enough_memory);
    }
}

// Windows keeps no boot second of its own beside the boot anchor's.
result<std::int64_t> boot_time_seconds(const std::string&) noexcept { return make_error_code(errc::not_supported); }

}  // namespace proctimes::inline v1::detail
