// SPDX-License-Identifier: MIT
// Writing the files of `run --tree` whole: a temporary file in the same
// directory, renamed over the target.
#include "files.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "output/output.hpp"

namespace proctimes::cli::tree {

namespace {

// An error when `path` exists as anything but a regular file.
std::string refuse_special(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return {};
        return fmt::format("'{}': {}", escape_for_table(path), std::strerror(errno));
    }
    if (S_ISREG(st.st_mode)) return {};
    const char* what = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISLNK(st.st_mode)  ? "a symbolic link"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a device";
    return fmt::format("'{}' is {}, not a regular file: not replaced", escape_for_table(path), what);
}

// A new empty file beside `path`; its descriptor (or -1 and `error`).
int temporary_beside(const std::string& path, std::string& tmp, std::string& error) {
    tmp = path + ".XXXXXX";
    const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0)
        error = fmt::format("cannot create a file beside '{}': {}", escape_for_table(path), std::strerror(errno));
    return fd;
}

// `path` with its directory resolved (realpath): the name it will have.
std::string resolved_name(const std::string& path) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    char real[PATH_MAX];
    if (::realpath(dir.c_str(), real) == nullptr) return path;
    return fmt::format("{}/{}", real, name);
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
    if (a == b) return true;
    struct stat sa {};
    struct stat sb {};
    const bool a_exists = ::stat(a.c_str(), &sa) == 0;
    const bool b_exists = ::stat(b.c_str(), &sb) == 0;
    if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return resolved_name(a) == resolved_name(b);
}

std::string check_output_file(const std::string& path) {
    if (path.empty()) return "an empty file name";
    if (auto e = refuse_special(path); !e.empty()) return e;
    std::string tmp, error;
    const int fd = temporary_beside(path, tmp, error);
    if (fd < 0) return error;
    ::close(fd);
    ::unlink(tmp.c_str());
    return {};
}

std::string write_file_atomically(const std::string& path, std::string_view contents) {
    std::string tmp, error;
    const int fd = temporary_beside(path, tmp, error);
    if (fd < 0) return error;
    (void)::fchmod(fd, 0644);
    std::size_t done = 0;
    int werr = 0;
    while (done < contents.size()) {
        const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            werr = n < 0 ? errno : EIO;
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    if (werr == 0 && ::fsync(fd) != 0 && errno != EINVAL) werr = errno;
    if (::close(fd) != 0 && werr == 0) werr = errno;
    if (werr != 0) {
        ::unlink(tmp.c_str());
        return fmt::format("cannot write '{}': {}", escape_for_table(path), std::strerror(werr));
    }
    if (auto e = refuse_special(path); !e.empty()) {
        ::unlink(tmp.c_str());
        return e;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        return fmt::format("cannot write '{}': {}", escape_for_table(path), std::strerror(e));
    }
    return {};
}

}  // namespace proctimes::cli::tree
