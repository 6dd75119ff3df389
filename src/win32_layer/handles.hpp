// SPDX-License-Identifier: MIT
// The objects behind Win32 HANDLEs, the process-wide handle table, and access
// masks.
//
// A HANDLE value is a key into one table per process (not a file descriptor).
// Values are multiples of 4 from 0x10000 up, handed out once and never reused
// (a 64-bit counter), so a closed handle reliably fails with
// ERROR_INVALID_HANDLE instead of silently naming a newer object. 0, -1 and
// -2 are never handed out: NULL is invalid, -1 and -2 are the pseudo-handles
// of the calling process and thread.
//
// Entries own shared objects: closing a handle while another thread queries
// through it is safe (the query keeps the object alive until it returns).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include <sys/types.h>

#include "proctimes/cycles.hpp"
#include "proctimes/process.hpp"
#include "win32_layer/child.hpp"
#include "win32_layer/win32.hpp"

namespace proctimes::inline v1::win32 {

inline constexpr std::uintptr_t current_process_handle = ~std::uintptr_t{0};     // (HANDLE)-1
inline constexpr std::uintptr_t current_thread_handle = ~std::uintptr_t{0} - 1;  // (HANDLE)-2

/// A process behind a handle: a child started by CreateProcess (whose exit
/// status and final times are recorded), or any other process.
struct process_object {
    std::shared_ptr<created_process> child;
    process other;  // when !child
    cycle_meter cycles;

    [[nodiscard]] pid_t id() const noexcept { return child ? child->id() : other.id(); }
    /// Empty for a child whose handle could not be opened (created_process::creation).
    [[nodiscard]] std::optional<instant> creation() const noexcept {
        return child ? child->creation() : std::optional<instant>(other.creation());
    }
    [[nodiscard]] result<process_times> times() const noexcept { return child ? child->times() : other.times(); }
};

/// A thread behind a handle: the main thread of a CreateProcess child, or any
/// other thread.
struct thread_object {
    std::shared_ptr<created_process> child;
    thread other;  // when !child
    cycle_meter cycles;

    [[nodiscard]] pid_t id() const noexcept { return child ? child->id() : other.id(); }
    [[nodiscard]] pid_t process_id() const noexcept { return child ? child->id() : other.process_id(); }
    [[nodiscard]] result<thread_times> times() const noexcept {
        return child ? child->main_thread_times() : other.times();
    }
};

enum class object_kind : std::uint8_t { process, thread };

struct handle_entry {
    object_kind kind = object_kind::process;
    DWORD access = 0;  ///< granted rights, normalized (see normalize_*_access)
    std::shared_ptr<process_object> process;
    std::shared_ptr<thread_object> thread;
};

/// The rights a handle opened with `desired` holds: generic rights and
/// MAXIMUM_ALLOWED mapped to specific ones as Windows maps them for process
/// objects, and each full query/set right implying its limited counterpart.
DWORD normalize_process_access(DWORD desired) noexcept;
/// The same for thread objects.
DWORD normalize_thread_access(DWORD desired) noexcept;

/// Does a normalized mask allow querying times, ids, cycles or exit codes?
constexpr bool can_query_process(DWORD access) noexcept { return (access & PROCESS_QUERY_LIMITED_INFORMATION) != 0; }
constexpr bool can_query_thread(DWORD access) noexcept { return (access & THREAD_QUERY_LIMITED_INFORMATION) != 0; }

class handle_table {
public:
    /// The table of this process.
    static handle_table& instance() noexcept;

    /// Stores an entry and returns its new handle value. Throws std::bad_alloc.
    std::uintptr_t insert(handle_entry e);
    /// A copy of the entry (sharing its object), or nullopt for an unknown,
    /// closed, NULL or pseudo handle value.
    [[nodiscard]] std::optional<handle_entry> find(std::uintptr_t h) const;
    /// Removes an entry; false if there was none.
    bool erase(std::uintptr_t h) noexcept;
    [[nodiscard]] std::size_t size() const noexcept;

    handle_table() = default;
    handle_table(const handle_table&) = delete;
    handle_table& operator=(const handle_table&) = delete;

    static constexpr std::uintptr_t first_value = 0x10000;
    static constexpr std::uintptr_t step = 4;

private:
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::uintptr_t, handle_entry> entries_;
    std::uintptr_t next_ = first_value;
};

/// A process named by a HANDLE: the calling process (pseudo-handle) or an object.
struct process_ref {
    bool self = false;
    std::shared_ptr<process_object> object;
};
struct thread_ref {
    bool self = false;
    std::shared_ptr<thread_object> object;
};

/// Resolves `h` for a call on a process that needs `right` (0 for none).
/// Returns ERROR_SUCCESS, ERROR_INVALID_HANDLE (NULL, unknown, closed, the
/// thread pseudo-handle, or a thread handle) or ERROR_ACCESS_DENIED (the
/// handle lacks `right`). The process pseudo-handle holds every right.
DWORD resolve_process(HANDLE h, DWORD right, process_ref& out) noexcept;
/// The same for a call on a thread.
DWORD resolve_thread(HANDLE h, DWORD right, thread_ref& out) noexcept;

/// Does the reference name the calling process (thread)? The pseudo-handle,
/// or a handle whose object is the caller by identity (detail::core_is_self):
/// such a handle answers as the pseudo-handle does, Windows' one object.
bool names_caller(const process_ref& p) noexcept;
bool names_caller(const thread_ref& t) noexcept;

}  // namespace proctimes::inline v1::win32
