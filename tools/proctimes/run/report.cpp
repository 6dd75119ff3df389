// SPDX-License-Identifier: MIT
#include "run/report.hpp"

#include <cerrno>
#include <cstring>
#ifdef _WIN32
#include <filesystem>
#endif

#include <fmt/format.h>

#include "output/output.hpp"

namespace proctimes::cli {

std::optional<run_report_sink> run_report_sink::open(const std::string& path, std::ostream& err) {
    run_report_sink sink(err, path);
    if (!path.empty()) {
        // Binary: lines end in LF on Windows too. There the path is UTF-8,
        // opened by its UTF-16 name (a narrow name is in the ANSI code page).
#ifdef _WIN32
        sink.file_.open(std::filesystem::path(std::u8string(path.begin(), path.end())),
                        std::ios::out | std::ios::trunc | std::ios::binary);
#else
        sink.file_.open(path, std::ios::out | std::ios::trunc | std::ios::binary);
#endif
        if (!sink.file_) {
            err << fmt::format("proctimes: run: cannot open '{}': {}\n", escape_for_table(path), std::strerror(errno));
            return std::nullopt;
        }
    }
    return sink;
}

std::string run_report_sink::finish() {
    std::ostream& out = stream();
    errno = 0;
    out.flush();
    bool lost = !out;
    int write_errno = errno;
    if (file_.is_open()) {
        file_.close();
        if (file_.fail() && !lost) {
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
