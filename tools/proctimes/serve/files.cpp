// SPDX-License-Identifier: MIT
#include "serve/files.hpp"

#include <cerrno>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace proctimes::cli::serve {
namespace {

std::error_code error_of(int err) {
    if (err == EACCES || err == EPERM) return make_error_code(errc::access_denied);
    return {err, std::system_category()};
}

class owned_fd {
public:
    explicit owned_fd(int fd) : fd_(fd) {}
    ~owned_fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    owned_fd(const owned_fd&) = delete;
    owned_fd& operator=(const owned_fd&) = delete;
    [[nodiscard]] int get() const { return fd_; }

private:
    int fd_;
};

}  // namespace

result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes, past_limit beyond) {
    const owned_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (fd.get() < 0) return error_of(errno);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return error_of(errno);
    if (!S_ISREG(st.st_mode)) return make_error_code(errc::not_a_regular_file);
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return error_of(errno);
        if (n == 0) return out;
        const auto got = static_cast<std::size_t>(n);
        if (out.size() + got > max_bytes) {
            if (beyond == past_limit::refuse) return std::make_error_code(std::errc::file_too_large);
            out.append(buf, max_bytes - out.size());
            return out;
        }
        out.append(buf, got);
    }
}

}  // namespace proctimes::cli::serve
