// SPDX-License-Identifier: MIT
// The windows backend's tasks (backend/backend.hpp): opening a process or thread by
// id with OpenProcess/OpenThread (the least access that reads times and
// waits), its identity (id + creation FILETIME), and the accessors.
#include "windows/task.hpp"

#include <new>

#include "proctimes/boot.hpp"

namespace proctimes::inline v1::detail {

namespace {

constexpr DWORD process_access = PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE;
constexpr DWORD thread_access = THREAD_QUERY_LIMITED_INFORMATION | SYNCHRONIZE;

// OpenProcess/OpenThread answer ERROR_INVALID_PARAMETER for an id that names
// no process (thread): that is "no such process" here.
std::error_code open_error(DWORD code, bool thread) noexcept {
    if (code == ERROR_INVALID_PARAMETER) return make_error_code(thread ? errc::no_such_thread : errc::no_such_process);
    return win::error(code);
}

unsigned processors() noexcept {
    const DWORD n = ::GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    return n > 0 ? static_cast<unsigned>(n) : 1u;
}

}  // namespace

namespace win {

task_identity identity_of(pid_t id, std::uint64_t creation) noexcept {
    task_identity t;
    if (auto a = get_boot_anchor()) t.boot = a->id;
    t.id = id;
    t.start_ticks = creation > filetime_unix_epoch ? creation - filetime_unix_epoch : 0;
    return t;
}

result<task_core_ptr> make_core(unique_handle h, bool is_thread, pid_t id, pid_t pid) noexcept {
    FILETIME c{}, e{}, k{}, u{};
    const BOOL ok = is_thread ? ::GetThreadTimes(h.get(), &c, &e, &k, &u) : ::GetProcessTimes(h.get(), &c, &e, &k, &u);
    if (!ok) return last_error();
    auto core = std::shared_ptr<task_core>(new (std::nothrow) task_core);
    if (!core) return make_error_code(std::errc::not_enough_memory);
    core->is_thread = is_thread;
    core->id = id;
    core->pid = pid;
    core->handle = std::move(h);
    core->identity = identity_of(id, ticks(c));
    core->creation = to_instant(c);
    task_facts f;
    f.is_thread = is_thread;
    f.creation = core->creation;
    f.creation_tick = cpu_tick();
    f.parallelism = is_thread ? 1u : processors();
    // Windows charges CPU a clock tick at a time, to whoever runs when it
    // comes (a task that ran 1 ms can hold 15.6 ms), and Wine answers another
    // process's times with the caller's: neither proves how long it lived.
    // The exit is the kernel's exit time, when it was observed.
    f.cpu_bounds_lifetime = false;
    core->life.set_facts(f);
    return core;
}

}  // namespace win

// Windows (and Wine) ignore the low two bits of an id: OpenProcess(33) opens
// process 32. A handle is kept only when the system says its task has the id
// asked for; else that id names no process (thread), and no handle claims it.
result<task_core_ptr> open_process_core(pid_t pid) noexcept {
    if (pid <= 0 || pid > max_task_id()) return make_error_code(errc::invalid_argument);
    win::unique_handle h(::OpenProcess(process_access, FALSE, static_cast<DWORD>(pid)));
    if (!h) return open_error(::GetLastError(), false);
    const DWORD actual = ::GetProcessId(h.get());
    if (actual == 0) return win::last_error();
    if (actual != static_cast<DWORD>(pid)) return make_error_code(errc::no_such_process);
    return win::make_core(std::move(h), false, pid, pid);
}

result<task_core_ptr> open_thread_core(pid_t tid) noexcept {
    if (tid <= 0 || tid > max_task_id()) return make_error_code(errc::invalid_argument);
    win::unique_handle h(::OpenThread(thread_access, FALSE, static_cast<DWORD>(tid)));
    if (!h) return open_error(::GetLastError(), true);
    const DWORD actual = ::GetThreadId(h.get());
    if (actual == 0) return win::last_error();
    if (actual != static_cast<DWORD>(tid)) return make_error_code(errc::no_such_thread);
    const DWORD owner = ::GetProcessIdOfThread(h.get());
    if (owner == 0) return win::last_error();
    return win::make_core(std::move(h), true, tid, static_cast<pid_t>(owner));
}

result<task_core_ptr> open_thread_core(pid_t pid, pid_t tid) noexcept {
    if (pid <= 0 || pid > max_task_id()) return make_error_code(errc::invalid_argument);
    auto c = open_thread_core(tid);
    if (!c) return c.error();
    if ((*c)->pid != pid) return make_error_code(errc::no_such_thread);
    return c;
}

// Process and thread ids are DWORDs, multiples of 4.
pid_t max_task_id() noexcept { return static_cast<pid_t>(0xFFFFFFFCu); }

pid_t core_id(const task_core& c) noexcept { return c.id; }
pid_t core_process_id(const task_core& c) noexcept { return c.pid; }
const task_identity& core_identity(const task_core& c) noexcept { return c.identity; }
instant core_creation(const task_core& c) noexcept { return c.creation; }
native_handle core_native_handle(const task_core& c) noexcept {
    return reinterpret_cast<native_handle>(c.handle.get());
}
task_lifecycle& core_lifecycle(task_core& c) noexcept { return c.life; }

bool core_is_self(const task_core& c) noexcept {
    FILETIME cr{}, e{}, k{}, u{};
    if (c.is_thread) {
        if (static_cast<DWORD>(c.id) != ::GetCurrentThreadId()) return false;
        if (!::GetThreadTimes(::GetCurrentThread(), &cr, &e, &k, &u)) return false;
    } else {
        if (static_cast<DWORD>(c.id) != ::GetCurrentProcessId()) return false;
        if (!::GetProcessTimes(::GetCurrentProcess(), &cr, &e, &k, &u)) return false;
    }
    // start_ticks count from 1970 (identity_of), a FILETIME from 1601.
    return c.identity.start_ticks == win::identity_of(c.id, win::ticks(cr)).start_ticks;
}

// No exit monitor: src/windows/exit.cpp.

}  // namespace proctimes::inline v1::detail
