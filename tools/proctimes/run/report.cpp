// SPDX-License-Identifier: MIT
#include "run/report.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#ifdef _WIN32
#include <filesystem>
#endif

#include <fmt/format.h>

#include "output/output.hpp"

namespace proctimes::cli {

void errno_keeping_buf::keep_errno() {
    if (error_ == 0) error_ = errno != 0 ? errno : EIO;
}

errno_keeping_buf::int_type errno_keeping_buf::overflow(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    errno = 0;
    if (traits_type::eq_int_type(to_->sputc(traits_type::to_char_type(c)), traits_type::eof())) {
        keep_errno();
        return traits_type::eof();
    }
    return c;
}

std::streamsize errno_keeping_buf::xsputn(const char* s, std::streamsize n) {
    errno = 0;
    const std::streamsize done = to_->sputn(s, n);
    if (done < n) keep_errno();
    return done;
}

int errno_keeping_buf::sync() {
    errno = 0;
    if (to_->pubsync() != 0) {
        keep_errno();
        return -1;
    }
    return 0;
}

std::optional<run_report_sink> run_report_sink::open(const std::string& path, std::ostream& err) {
    run_report_sink sink(err, path);
    if (!path.empty()) {
        // Binary: lines end in LF on Windows too. There the path is UTF-8,
        // opened by its UTF-16 name (a narrow name is in the ANSI code page).
#ifdef _WIN32
        sink.file_ = std::make_unique<std::ofstream>(std::filesystem::path(std::u8string(path.begin(), path.end())),
                                                     std::ios::out | std::ios::trunc | std::ios::binary);
#else
        sink.file_ = std::make_unique<std::ofstream>(path, std::ios::out | std::ios::trunc | std::ios::binary);
#endif
        if (!*sink.file_) {
            err << fmt::format("proctimes: run: cannot open '{}': {}\n", escape_for_table(path), std::strerror(errno));
            return std::nullopt;
        }
        sink.buf_ = std::make_unique<errno_keeping_buf>(sink.file_->rdbuf());
        sink.out_ = std::make_unique<std::ostream>(sink.buf_.get());
    }
    return sink;
}

std::string run_report_sink::finish() {
    std::ostream& out = stream();
    errno = 0;
    out.flush();
    bool lost = !out;
    int write_errno = buf_ ? buf_->error() : errno;
    if (file_ && file_->is_open()) {
        errno = 0;
        file_->close();  // its last buffer goes out here
        if (file_->fail() && !lost) {
            lost = true;
            write_errno = errno;
        }
    }
    if (!lost) return {};
    return fmt::format("error writing the report{}: {}",
                       path_.empty() ? std::string() : fmt::format(" to '{}'", escape_for_table(path_)),
                       write_errno ? std::strerror(write_errno) : "write failed");
}

std::string status_note(const std::optional<exit_status>& st) {
    if (!st) return "its exit status is unknown";
    return fmt::format("it exited with status {}", st->shell_code());
}

}  // namespace proctimes::cli
