// SPDX-License-Identifier: MIT
// Core errors → Win32 error codes, and the per-thread last error.
#include "win32_layer/win32.hpp"

#include <cerrno>
#include <new>
#include <system_error>

#include "proctimes/error.hpp"

namespace proctimes::inline v1::win32 {

DWORD& last_error() noexcept {
    thread_local DWORD value = 0;
    return value;
}

DWORD error_from(std::error_code ec, error_context context) noexcept {
    if (!ec) return ERROR_SUCCESS;
    if (ec.category() == proctimes::error_category()) {
        switch (static_cast<proctimes::errc>(ec.value())) {
            case errc::no_such_process:
            case errc::no_such_thread:
                // Opening: the id does not name a live task (Windows: 87).
                // Querying: the task behind a valid handle has exited and
                // been reaped, and its final values were not captured: the
                // one case Windows never fails; see docs/WIN32.md.
                return context == error_context::query ? ERROR_NOT_SUPPORTED : ERROR_INVALID_PARAMETER;
            case errc::not_a_process:
            case errc::invalid_argument:
            case errc::out_of_range:
                return ERROR_INVALID_PARAMETER;
            case errc::access_denied:
                return ERROR_ACCESS_DENIED;
            case errc::process_table_unavailable:
            case errc::foreign_namespace:
            case errc::boot_identity_unavailable:
            case errc::not_supported:
                return ERROR_NOT_SUPPORTED;
            case errc::not_a_regular_file:
            case errc::malformed_data:
                return ERROR_INVALID_DATA;
            case errc::invalid_handle:
                return ERROR_INVALID_HANDLE;
        }
        return ERROR_GEN_FAILURE;
    }
    if (ec.category() != std::system_category() && ec.category() != std::generic_category()) return ERROR_GEN_FAILURE;
    switch (ec.value()) {
        case ENOENT:
            return context == error_context::spawn   ? ERROR_FILE_NOT_FOUND
                   : context == error_context::query ? ERROR_NOT_SUPPORTED
                                                     : ERROR_INVALID_PARAMETER;
        case ESRCH:
            return context == error_context::query ? ERROR_NOT_SUPPORTED : ERROR_INVALID_PARAMETER;
        case ENOTDIR:
        case ELOOP:
            return context == error_context::spawn ? ERROR_PATH_NOT_FOUND : ERROR_INVALID_PARAMETER;
        case EACCES:
        case EPERM:
        case ETXTBSY:
            return ERROR_ACCESS_DENIED;
        case ENOEXEC:
            return ERROR_BAD_EXE_FORMAT;
        case ENAMETOOLONG:
            return ERROR_FILENAME_EXCED_RANGE;
        case E2BIG:
        case EINVAL:
            return ERROR_INVALID_PARAMETER;
        case ENOMEM:
        case EAGAIN:
            return ERROR_NOT_ENOUGH_MEMORY;
        case EMFILE:
        case ENFILE:
            return ERROR_TOO_MANY_OPEN_FILES;
        case ENOSYS:
        case EOPNOTSUPP:
            return ERROR_NOT_SUPPORTED;
        default:
            return ERROR_GEN_FAILURE;
    }
}

DWORD error_from_current_exception() noexcept {
    try {
        throw;
    } catch (const std::bad_alloc&) {
        return ERROR_NOT_ENOUGH_MEMORY;
    } catch (const std::system_error& e) {
        return error_from(e.code(), error_context::query);
    } catch (...) {
        return ERROR_INTERNAL_ERROR;
    }
}

}  // namespace proctimes::inline v1::win32
