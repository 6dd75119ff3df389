// SPDX-License-Identifier: MIT
// Win32 layer: the kernel-style calls a driver uses to tell processes apart
// (PsLookupProcessByProcessId + PsGetProcessCreateTimeQuadPart), the process
// object's reference count, and KeQuerySystemTime.
//
// A PEPROCESS here is a small reference-counted record of one process: its
// pid and its creation FILETIME, fixed when it was looked up (the creation
// time of a process never changes, and every lookup of the same process on
// this boot yields the same bits). Pointers the library did not hand out are
// recognised and ignored, never dereferenced.
#include <atomic>
#include <mutex>
#include <new>
#include <unordered_set>

#include <unistd.h>

#include "backend/backend.hpp"
#include "proctimes/civil.hpp"
#include "proctimes/filetime.hpp"
#include "proctimes/process.hpp"
#include "win32_layer/child.hpp"
#include "win32_layer/win32.hpp"

using namespace proctimes;
using namespace proctimes::win32;

struct proctimes_eprocess {
    std::atomic<long> references{1};
    bool permanent = false;  // PsGetCurrentProcess's record: not counted
    pid_t pid = 0;
    LONGLONG create_time = 0;
};

namespace {

std::mutex live_mutex;
std::unordered_set<const proctimes_eprocess*>& live() {
    static auto* s = new std::unordered_set<const proctimes_eprocess*>;  // never destroyed
    return *s;
}

bool is_live(const void* p) {
    std::lock_guard lock(live_mutex);
    return live().count(static_cast<const proctimes_eprocess*>(p)) != 0;
}

// The creation FILETIME of an instant, as a LONGLONG.
LONGLONG quad(instant t) noexcept {
    const auto ft = filetime_from_time(t);
    return ft ? static_cast<LONGLONG>(ft->ticks) : 0;
}

}  // namespace

extern "C" {

PEPROCESS proctimes_PsGetCurrentProcess(void) {
    static std::mutex m;
    static proctimes_eprocess* current = nullptr;
    try {
        std::lock_guard lock(m);
        if (current && current->pid == ::getpid()) return current;
        // First use, or first use in a forked child (a new process).
        auto t = this_process::times();
        if (!t) return fail<PEPROCESS>(nullptr, error_from(t.error(), error_context::query));
        auto* p = new proctimes_eprocess;
        p->permanent = true;
        p->pid = ::getpid();
        p->create_time = quad(t->creation);
        {
            std::lock_guard l(live_mutex);
            live().insert(p);
        }
        current = p;
        return p;
    } catch (...) {
        return fail<PEPROCESS>(nullptr, error_from_current_exception());
    }
}

NTSTATUS proctimes_PsLookupProcessByProcessId(HANDLE ProcessId, PEPROCESS* Process) {
    if (!Process) return STATUS_ACCESS_VIOLATION;
    const auto id = reinterpret_cast<std::uintptr_t>(ProcessId);
    if (id == 0 || id > static_cast<std::uintptr_t>(detail::max_task_id())) return STATUS_INVALID_PARAMETER;
    const auto pid = static_cast<pid_t>(id);
    try {
        LONGLONG created = 0;
        auto child = created_process::find(pid);
        if (child && !child->creation()) child.reset();  // its creation is unknown: ask /proc as for any process
        if (child && !child->reaped()) {
            created = quad(*child->creation());
        } else {
            auto p = process::open(pid);
            if (!p) {
                // As the kernel: an id that names no process object is an invalid parameter.
                if (child && p.error() == std::errc::no_such_process)
                    created = quad(*child->creation());  // exited, still referenced
                else
                    return STATUS_INVALID_PARAMETER;
            } else {
                created = quad(p->creation());
            }
        }
        auto* obj = new proctimes_eprocess;
        obj->pid = pid;
        obj->create_time = created;
        try {
            std::lock_guard lock(live_mutex);
            live().insert(obj);
        } catch (...) {
            delete obj;
            throw;
        }
        *Process = obj;
        return STATUS_SUCCESS;
    } catch (const std::bad_alloc&) {
        return STATUS_NO_MEMORY;
    } catch (...) {
        return STATUS_UNSUCCESSFUL;
    }
}

LONG_PTR proctimes_ObReferenceObject(PVOID Object) {
    std::lock_guard lock(live_mutex);
    auto* p = static_cast<proctimes_eprocess*>(Object);
    if (!live().count(p)) return 0;
    return p->permanent ? 1 : ++p->references;
}

LONG_PTR proctimes_ObDereferenceObject(PVOID Object) {
    proctimes_eprocess* victim = nullptr;
    long left = 0;
    {
        std::lock_guard lock(live_mutex);
        auto* p = static_cast<proctimes_eprocess*>(Object);
        if (!live().count(p)) return 0;  // not ours, or already released: ignored
        if (p->permanent) return 1;
        left = --p->references;
        if (left == 0) {
            live().erase(p);
            victim = p;
        }
    }
    delete victim;
    return left;
}

HANDLE proctimes_PsGetProcessId(PEPROCESS Process) {
    if (!Process || !is_live(Process)) return nullptr;
    return reinterpret_cast<HANDLE>(static_cast<std::uintptr_t>(Process->pid));
}

LONGLONG proctimes_PsGetProcessCreateTimeQuadPart(PEPROCESS Process) {
    if (!Process || !is_live(Process)) return 0;
    return Process->create_time;
}

void proctimes_KeQuerySystemTime(PLARGE_INTEGER CurrentTime) {
    if (!CurrentTime) {
        last_error() = ERROR_NOACCESS;
        return;
    }
    CurrentTime->QuadPart = static_cast<LONGLONG>(system_time_now().ticks);
}

}  // extern "C"
