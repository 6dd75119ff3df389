// SPDX-License-Identifier: MIT
// Writing the files of `run --tree` whole: a temporary file in the same
// directory, renamed over the target.
#include "files.hpp"

#include <cerrno>
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

}  // namespace

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
