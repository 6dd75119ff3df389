// SPDX-License-Identifier: MIT
// Writing the files of `run --tree` whole on Windows: a new file beside the
// target (CREATE_NEW: never one planted there), flushed, then moved over the
// target with MoveFileExW(MOVEFILE_REPLACE_EXISTING). Paths are UTF-8.
#include "files.hpp"

#include <atomic>

#include <windows.h>

#include <fmt/format.h>

#include "output/output.hpp"

namespace proctimes::cli::tree {

namespace {

std::wstring wide(const std::string& s) {
    if (s.empty()) return {};
    const int n =
        ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), nullptr, 0);
    if (n <= 0) return {};
    std::wstring w(static_cast<std::size_t>(n), L'\0');
    ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
}

std::string why(DWORD code) {
    char buf[256] = {};
    const DWORD n = ::FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0, buf,
                                     sizeof buf, nullptr);
    std::string s(buf, n);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '.')) s.pop_back();
    return s.empty() ? fmt::format("error {}", code) : s;
}

// An error when `path` exists as anything but a regular file.
std::string refuse_special(const std::string& path, const std::wstring& w) {
    const DWORD attrs = ::GetFileAttributesW(w.c_str());
    if (attrs == INVALID_FILE_ATTRIBUTES) {
        const DWORD e = ::GetLastError();
        if (e == ERROR_FILE_NOT_FOUND) return {};
        return fmt::format("'{}': {}", escape_for_table(path), why(e));
    }
    const char* what = (attrs & FILE_ATTRIBUTE_REPARSE_POINT) ? "a symbolic link or junction"
                       : (attrs & FILE_ATTRIBUTE_DIRECTORY)   ? "a directory"
                       : (attrs & FILE_ATTRIBUTE_DEVICE)      ? "a device"
                                                              : nullptr;
    if (!what) return {};
    return fmt::format("'{}' is {}, not a regular file: not replaced", escape_for_table(path), what);
}

std::atomic<unsigned> g_serial{0};

// A new empty file beside `path`: its handle (INVALID_HANDLE_VALUE and `error`).
HANDLE temporary_beside(const std::string& path, std::wstring& tmp, std::string& error) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        tmp = wide(fmt::format("{}.{}-{}-{}", path, ::GetCurrentProcessId(), ::GetTickCount64(), g_serial++));
        const HANDLE h =
            ::CreateFileW(tmp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr);
        if (h != INVALID_HANDLE_VALUE) return h;
        if (::GetLastError() != ERROR_FILE_EXISTS) break;
    }
    error = fmt::format("cannot create a file beside '{}': {}", escape_for_table(path), why(::GetLastError()));
    return INVALID_HANDLE_VALUE;
}

// The full path of `w` (GetFullPathNameW), or `w` when it cannot be made.
std::wstring full_path(const std::wstring& w) {
    const DWORD n = ::GetFullPathNameW(w.c_str(), 0, nullptr, nullptr);
    if (n == 0) return w;
    std::wstring out(n, L'\0');
    const DWORD got = ::GetFullPathNameW(w.c_str(), n, out.data(), nullptr);
    if (got == 0 || got >= n) return w;
    out.resize(got);
    return out;
}

// The volume and file index of an existing file.
bool file_identity(const std::wstring& w, BY_HANDLE_FILE_INFORMATION& info) {
    const HANDLE h = ::CreateFileW(w.c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                   OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
    if (h == INVALID_HANDLE_VALUE) return false;
    const bool ok = ::GetFileInformationByHandle(h, &info) != 0;
    ::CloseHandle(h);
    return ok;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
    if (a == b) return true;
    const std::wstring wa = full_path(wide(a));
    const std::wstring wb = full_path(wide(b));
    BY_HANDLE_FILE_INFORMATION ia{};
    BY_HANDLE_FILE_INFORMATION ib{};
    if (file_identity(wa, ia) && file_identity(wb, ib))
        return ia.dwVolumeSerialNumber == ib.dwVolumeSerialNumber && ia.nFileIndexHigh == ib.nFileIndexHigh &&
               ia.nFileIndexLow == ib.nFileIndexLow;
    return ::CompareStringOrdinal(wa.c_str(), static_cast<int>(wa.size()), wb.c_str(), static_cast<int>(wb.size()),
                                  TRUE) == CSTR_EQUAL;
}

std::string check_output_file(const std::string& path) {
    if (path.empty()) return "an empty file name";
    const std::wstring w = wide(path);
    if (w.empty()) return fmt::format("'{}' is not valid UTF-8", escape_for_table(path));
    if (auto e = refuse_special(path, w); !e.empty()) return e;
    std::wstring tmp;
    std::string error;
    const HANDLE h = temporary_beside(path, tmp, error);
    if (h == INVALID_HANDLE_VALUE) return error;
    ::CloseHandle(h);
    ::DeleteFileW(tmp.c_str());
    return {};
}

std::string write_file_atomically(const std::string& path, std::string_view contents) {
    const std::wstring w = wide(path);
    if (w.empty()) return fmt::format("'{}' is not valid UTF-8", escape_for_table(path));
    std::wstring tmp;
    std::string error;
    const HANDLE h = temporary_beside(path, tmp, error);
    if (h == INVALID_HANDLE_VALUE) return error;
    std::size_t done = 0;
    DWORD werr = 0;
    while (done < contents.size() && werr == 0) {
        const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(contents.size() - done, 1U << 30));
        DWORD n = 0;
        if (!::WriteFile(h, contents.data() + done, chunk, &n, nullptr) || n == 0)
            werr = n == 0 && ::GetLastError() == 0 ? ERROR_WRITE_FAULT : ::GetLastError();
        done += n;
    }
    if (werr == 0 && !::FlushFileBuffers(h)) werr = ::GetLastError();
    if (!::CloseHandle(h) && werr == 0) werr = ::GetLastError();
    if (werr != 0) {
        ::DeleteFileW(tmp.c_str());
        return fmt::format("cannot write '{}': {}", escape_for_table(path), why(werr));
    }
    if (auto e = refuse_special(path, w); !e.empty()) {
        ::DeleteFileW(tmp.c_str());
        return e;
    }
    if (!::MoveFileExW(tmp.c_str(), w.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
        const DWORD e = ::GetLastError();
        ::DeleteFileW(tmp.c_str());
        return fmt::format("cannot write '{}': {}", escape_for_table(path), why(e));
    }
    return {};
}

}  // namespace proctimes::cli::tree
