// SPDX-License-Identifier: MIT
// The windows backend's children (spawn.hpp): CreateProcessW, suspended,
// placed in a job object of its own, then resumed, so that every descendant
// it starts is in the job too and the job's accounting
// (JobObjectBasicAccountingInformation) holds their CPU time. The child's
// own times are its process handle's; the descendants' are the job's totals
// minus the child's own. Both are in clock-interrupt ticks (win::cpu_tick()).
//
// spawn_options on Windows: argv (quoted by the CommandLineToArgvW rules),
// program (lpApplicationName, used as given), environment, working
// directory, stdin/stdout/stderr (C runtime descriptors, passed as the
// child's standard handles; only those three are inherited), and
// new_process_group (CREATE_NEW_PROCESS_GROUP). The POSIX-only options
// (default_signals, run_scripts_with_sh, open_files_soft_limit) have no
// Windows meaning and are ignored. argv[0] is searched as CreateProcessW
// searches (the program's directory, the current one, the system
// directories, then PATH; ".exe" appended), not as execvp does.
#include <io.h>
#include <windows.h>
// After windows.h, which it needs:
#include <psapi.h>

#include <algorithm>
#include <cwctype>

#include "proctimes/spawn.hpp"
#include "windows/cmdline.hpp"
#include "windows/waits.hpp"

namespace proctimes::inline v1 {

namespace {

using detail::win::unique_handle;

std::error_code create_error(DWORD code) noexcept {
    switch (code) {
        case ERROR_FILE_NOT_FOUND:
        case ERROR_PATH_NOT_FOUND:
            return std::make_error_code(std::errc::no_such_file_or_directory);
        case ERROR_ACCESS_DENIED:
            return std::make_error_code(std::errc::permission_denied);
        case ERROR_BAD_EXE_FORMAT:
        case ERROR_EXE_MACHINE_TYPE_MISMATCH:
            return std::make_error_code(std::errc::executable_format_error);
        default:
            return detail::win::error(code);
    }
}

// "name=value\0...\0\0", sorted by name without regard to case, as
// CreateProcessW's environment block must be.
result<std::wstring> environment_block(const std::vector<std::string>& env) {
    std::vector<std::wstring> vars;
    for (const auto& e : env) {
        auto w = detail::win::wide(e);
        if (!w) return w.error();
        vars.push_back(std::move(*w));
    }
    auto name_less = [](const std::wstring& a, const std::wstring& b) {
        const auto an = a.substr(0, a.find(L'=', 1)), bn = b.substr(0, b.find(L'=', 1));
        return std::lexicographical_compare(an.begin(), an.end(), bn.begin(), bn.end(), [](wchar_t x, wchar_t y) {
            return std::towupper(static_cast<wint_t>(x)) < std::towupper(static_cast<wint_t>(y));
        });
    };
    std::stable_sort(vars.begin(), vars.end(), name_less);
    std::wstring block;
    for (const auto& v : vars) {
        block += v;
        block += L'\0';
    }
    block += L'\0';
    if (vars.empty()) block += L'\0';
    return block;
}

// An inheritable duplicate of C runtime descriptor `fd`, or of this
// process's own standard handle `which` when fd is -1.
result<unique_handle> std_handle(int fd, DWORD which) noexcept {
    HANDLE src = nullptr;
    if (fd >= 0) {
        const intptr_t os = ::_get_osfhandle(fd);
        if (os == -1 || os == -2) return make_error_code(std::errc::bad_file_descriptor);
        src = reinterpret_cast<HANDLE>(os);  // NOLINT(performance-no-int-to-ptr)
    } else {
        src = ::GetStdHandle(which);
        if (src == nullptr || src == INVALID_HANDLE_VALUE) return unique_handle{};
    }
    HANDLE dup = nullptr;
    if (!::DuplicateHandle(::GetCurrentProcess(), src, ::GetCurrentProcess(), &dup, 0, TRUE, DUPLICATE_SAME_ACCESS))
        return fd >= 0 ? detail::win::last_error() : result<unique_handle>(unique_handle{});
    return unique_handle(dup);
}

}  // namespace

void child::release() noexcept { detail::handle_access::release_child(process_); }

result<child> child::spawn(const spawn_options& o) noexcept {
    if (o.argv.empty() || o.argv[0].empty()) return errc::invalid_argument;
    try {
        std::vector<std::wstring> wargv;
        for (const auto& a : o.argv) {
            auto w = detail::win::wide(a);
            if (!w) return w.error();
            wargv.push_back(std::move(*w));
        }
        auto cmd = detail::win::command_line(wargv);
        if (!cmd) return cmd.error();
        auto app = detail::win::wide(o.program);
        auto dir = detail::win::wide(o.working_directory);
        if (!app || !dir) return errc::invalid_argument;
        std::wstring env;
        if (o.environment) {
            auto b = environment_block(*o.environment);
            if (!b) return b.error();
            env = std::move(*b);
        }

        // Only the three standard handles are inherited (an attribute list
        // names them): never another handle this process has open.
        STARTUPINFOEXW si{};
        si.StartupInfo.cb = sizeof si;
        si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
        unique_handle in, out, err;
        std::vector<HANDLE> inherit;
        const int fds[3] = {o.stdin_fd, o.stdout_fd, o.stderr_fd};
        const DWORD which[3] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
        unique_handle* slots[3] = {&in, &out, &err};
        for (int i = 0; i < 3; ++i) {
            auto h = std_handle(fds[i], which[i]);
            if (!h) return h.error();
            *slots[i] = std::move(*h);
            if (*slots[i] && std::find(inherit.begin(), inherit.end(), slots[i]->get()) == inherit.end())
                inherit.push_back(slots[i]->get());
        }
        si.StartupInfo.hStdInput = in.get();
        si.StartupInfo.hStdOutput = out.get();
        si.StartupInfo.hStdError = err.get();
        std::vector<char> attrs;
        if (!inherit.empty()) {
            SIZE_T size = 0;
            ::InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
            attrs.resize(size);
            si.lpAttributeList = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attrs.data());  // NOLINT
            if (!::InitializeProcThreadAttributeList(si.lpAttributeList, 1, 0, &size)) return detail::win::last_error();
            if (!::UpdateProcThreadAttribute(si.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit.data(),
                                             inherit.size() * sizeof(HANDLE), nullptr, nullptr)) {
                const auto ec = detail::win::last_error();
                ::DeleteProcThreadAttributeList(si.lpAttributeList);
                return ec;
            }
        }
        DWORD flags = CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
        if (o.new_process_group) flags |= CREATE_NEW_PROCESS_GROUP;

        child c;
        PROCESS_INFORMATION pi{};
        c.clone_before_ = detail::realtime_now();
        const BOOL ok = ::CreateProcessW(app->empty() ? nullptr : app->c_str(), cmd->data(), nullptr, nullptr,
                                         inherit.empty() ? FALSE : TRUE, flags, o.environment ? env.data() : nullptr,
                                         dir->empty() ? nullptr : dir->c_str(), &si.StartupInfo, &pi);
        const DWORD create_error_code = ok ? 0 : ::GetLastError();
        c.clone_after_ = detail::realtime_now();
        if (si.lpAttributeList) ::DeleteProcThreadAttributeList(si.lpAttributeList);
        if (!ok) return create_error(create_error_code);
        unique_handle process(pi.hProcess), thread(pi.hThread);

        // The job: created and joined while the child is suspended, so that
        // nothing it starts escapes it. Where a job cannot be made (a parent
        // job that forbids nesting), the child runs without one and its
        // descendants' CPU time is not known (child_exit says 0).
        unique_handle job(::CreateJobObjectW(nullptr, nullptr));
        if (job && !::AssignProcessToJobObject(job.get(), process.get())) job.reset();
        if (::ResumeThread(thread.get()) == static_cast<DWORD>(-1)) {
            const auto ec = detail::win::last_error();
            ::TerminateProcess(process.get(), 1);
            return ec;
        }
        c.pid_ = static_cast<pid_t>(pi.dwProcessId);
        auto core = detail::win::make_core(std::move(process), false, c.pid_, c.pid_);
        if (!core) {
            c.handle_error_ = core.error();  // cannot happen with a full-access handle
            return c;
        }
        (*core)->job = std::move(job);
        auto handle = detail::handle_access::make_process(std::move(core));
        if (!handle) {
            c.handle_error_ = handle.error();
            return c;
        }
        c.process_ = std::move(*handle);
        return c;
    } catch (...) {
        return make_error_code(std::errc::not_enough_memory);
    }
}

result<std::optional<child_exit>> child::wait_without_handle(std::chrono::nanoseconds) noexcept {
    return handle_error_ ? handle_error_ : make_error_code(errc::invalid_handle);
}

result<std::optional<child_exit>> child::wait_for(std::chrono::nanoseconds timeout) noexcept {
    if (result_) return std::optional<child_exit>(*result_);
    auto* core = detail::handle_access::core(process_);
    if (!core) return wait_without_handle(timeout);
    auto ended = detail::win::wait_one(*core, timeout);
    if (!ended) return ended.error();
    if (!*ended) return std::optional<child_exit>();
    child_exit e;
    DWORD code = 0;
    if (::GetExitCodeProcess(core->handle.get(), &code)) {
        e.status = exit_status{static_cast<int>(code), 0, false};
        core->life.child_reaped(*e.status);
    }
    auto own = process_.times();
    if (!own) return own.error();
    e.times = *own;
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION acct{};
    if (core->job && ::QueryInformationJobObject(core->job.get(), JobObjectBasicAccountingInformation, &acct,
                                                 sizeof acct, nullptr)) {
        const auto job_kernel = std::chrono::nanoseconds{acct.TotalKernelTime.QuadPart * 100};
        const auto job_user = std::chrono::nanoseconds{acct.TotalUserTime.QuadPart * 100};
        e.children_kernel = std::max(job_kernel - e.times.kernel, std::chrono::nanoseconds{0});
        e.children_user = std::max(job_user - e.times.user, std::chrono::nanoseconds{0});
    }
    PROCESS_MEMORY_COUNTERS pmc{};
    pmc.cb = sizeof pmc;
    if (::GetProcessMemoryInfo(core->handle.get(), &pmc, sizeof pmc))
        e.max_rss_kib = static_cast<long>(pmc.PeakWorkingSetSize / 1024);
    result_ = e;
    return std::optional<child_exit>(*result_);
}

result<child_exit> child::wait() noexcept {
    auto r = wait_for(std::chrono::nanoseconds::max());
    if (!r) return r.error();
    if (!*r) return errc::not_supported;  // an infinite wait does not time out
    return **r;
}

}  // namespace proctimes::inline v1
