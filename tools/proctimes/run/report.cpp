// SPDX-License-Identifier: MIT
#include "run/report.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "output/output.hpp"

namespace proctimes::cli {

std::optional<run_report_sink> run_report_sink::open(const std::string& path, std::ostream& err) {
    run_report_sink sink(err, path);
    if (!path.empty()) {
        sink.file_.open(path, std::ios::out | std::ios::trunc);
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
