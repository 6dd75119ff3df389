// SPDX-License-Identifier: MIT
#include "win32_layer/handles.hpp"

#include <new>

#include "backend/backend.hpp"

namespace proctimes::inline v1::win32 {

DWORD normalize_process_access(DWORD a) noexcept {
    if (a & (MAXIMUM_ALLOWED | GENERIC_ALL)) a |= PROCESS_ALL_ACCESS;
    if (a & GENERIC_READ) a |= STANDARD_RIGHTS_READ | PROCESS_VM_READ | PROCESS_QUERY_INFORMATION;
    if (a & GENERIC_WRITE)
        a |= STANDARD_RIGHTS_WRITE | PROCESS_CREATE_PROCESS | PROCESS_CREATE_THREAD | PROCESS_VM_OPERATION |
             PROCESS_VM_WRITE | PROCESS_DUP_HANDLE | PROCESS_TERMINATE | PROCESS_SET_QUOTA | PROCESS_SET_INFORMATION |
             PROCESS_SUSPEND_RESUME;
    if (a & GENERIC_EXECUTE)
        a |= STANDARD_RIGHTS_EXECUTE | SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_TERMINATE;
    a &= ~(MAXIMUM_ALLOWED | GENERIC_ALL | GENERIC_READ | GENERIC_WRITE | GENERIC_EXECUTE);
    // Since Windows Vista a handle granted the full right also holds the limited one.
    if (a & PROCESS_QUERY_INFORMATION) a |= PROCESS_QUERY_LIMITED_INFORMATION;
    if (a & PROCESS_SET_INFORMATION) a |= PROCESS_SET_LIMITED_INFORMATION;
    return a;
}

DWORD normalize_thread_access(DWORD a) noexcept {
    if (a & (MAXIMUM_ALLOWED | GENERIC_ALL)) a |= THREAD_ALL_ACCESS;
    if (a & GENERIC_READ) a |= STANDARD_RIGHTS_READ | THREAD_GET_CONTEXT | THREAD_QUERY_INFORMATION;
    if (a & GENERIC_WRITE)
        a |= STANDARD_RIGHTS_WRITE | THREAD_TERMINATE | THREAD_SUSPEND_RESUME | THREAD_SET_INFORMATION |
             THREAD_SET_CONTEXT;
    if (a & GENERIC_EXECUTE)
        a |= STANDARD_RIGHTS_EXECUTE | SYNCHRONIZE | THREAD_QUERY_LIMITED_INFORMATION | THREAD_RESUME;
    a &= ~(MAXIMUM_ALLOWED | GENERIC_ALL | GENERIC_READ | GENERIC_WRITE | GENERIC_EXECUTE);
    if (a & THREAD_QUERY_INFORMATION) a |= THREAD_QUERY_LIMITED_INFORMATION;
    if (a & THREAD_SET_INFORMATION) a |= THREAD_SET_LIMITED_INFORMATION;
    return a;
}

handle_table& handle_table::instance() noexcept {
    // Never destroyed: handles may be used from other threads and atexit
    // handlers while static destructors run. Built in static storage, so
    // that getting it never allocates and cannot fail.
    alignas(handle_table) static unsigned char storage[sizeof(handle_table)];
    static handle_table* const table = ::new (static_cast<void*>(storage)) handle_table;
    return *table;
}

std::uintptr_t handle_table::insert(handle_entry e) {
    std::unique_lock lock(mutex_);
    const std::uintptr_t h = next_;
    entries_.emplace(h, std::move(e));  // may throw; next_ unchanged then
    next_ += step;
    return h;
}

std::optional<handle_entry> handle_table::find(std::uintptr_t h) const {
    std::shared_lock lock(mutex_);
    const auto it = entries_.find(h);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
}

bool handle_table::erase(std::uintptr_t h) noexcept {
    // The object may be destroyed here (closing descriptors): outside the lock.
    handle_entry victim;
    {
        std::unique_lock lock(mutex_);
        const auto it = entries_.find(h);
        if (it == entries_.end()) return false;
        victim = std::move(it->second);
        entries_.erase(it);
    }
    return true;
}

std::size_t handle_table::size() const noexcept {
    std::shared_lock lock(mutex_);
    return entries_.size();
}

namespace {

// The table entry behind `v`, if it is an object of `kind` opened with
// `right` (0: any access).
DWORD find_object(std::uintptr_t v, object_kind kind, DWORD right, std::optional<handle_entry>& e) noexcept {
    try {
        e = handle_table::instance().find(v);
    } catch (...) {
        return ERROR_NOT_ENOUGH_MEMORY;
    }
    if (!e || e->kind != kind) return ERROR_INVALID_HANDLE;
    if (right != 0 && (e->access & right) == 0) return ERROR_ACCESS_DENIED;
    return ERROR_SUCCESS;
}

}  // namespace

DWORD resolve_process(HANDLE h, DWORD right, process_ref& out) noexcept {
    const auto v = reinterpret_cast<std::uintptr_t>(h);
    if (v == current_process_handle) {
        out.self = true;
        return ERROR_SUCCESS;
    }
    std::optional<handle_entry> e;
    if (const DWORD rc = find_object(v, object_kind::process, right, e); rc != ERROR_SUCCESS) return rc;
    out.object = std::move(e->process);
    return ERROR_SUCCESS;
}

DWORD resolve_thread(HANDLE h, DWORD right, thread_ref& out) noexcept {
    const auto v = reinterpret_cast<std::uintptr_t>(h);
    if (v == current_thread_handle) {
        out.self = true;
        return ERROR_SUCCESS;
    }
    std::optional<handle_entry> e;
    if (const DWORD rc = find_object(v, object_kind::thread, right, e); rc != ERROR_SUCCESS) return rc;
    out.object = std::move(e->thread);
    return ERROR_SUCCESS;
}

bool names_caller(const process_ref& p) noexcept {
    return p.self || (p.object && !p.object->child && detail::core_is_self(p.object->other));
}

bool names_caller(const thread_ref& t) noexcept {
    return t.self || (t.object && !t.object->child && detail::core_is_self(t.object->other));
}

}  // namespace proctimes::inline v1::win32
