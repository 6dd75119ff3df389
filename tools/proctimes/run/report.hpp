// SPDX-License-Identifier: MIT
// Where `proctimes run`'s report goes, for the plain run and for --tree:
// standard error, or the -o FILE, which is opened (and truncated) before the
// command starts so that a path that cannot be written is refused before
// anything runs; and the one check, at the end, that all of it was written.
#pragma once

#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>

#include "proctimes/exit.hpp"

namespace proctimes::cli {

// A stream buffer that passes everything to another one and keeps the errno
// of the first write that failed: the reason is lost otherwise, as the file's
// buffer may go out (and fail) long before the last flush.
class errno_keeping_buf : public std::streambuf {
public:
    explicit errno_keeping_buf(std::streambuf* to) : to_(to) {}
    [[nodiscard]] int error() const { return error_; }

protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

private:
    void keep_errno();
    std::streambuf* to_;
    int error_ = 0;
};

class run_report_sink {
public:
    // Opens PATH when it is not empty. On failure, says why on ERR and
    // returns nothing (the caller exits with exit_run_report_failed).
    static std::optional<run_report_sink> open(const std::string& path, std::ostream& err);

    std::ostream& stream() { return out_ ? *out_ : *err_; }

    // Flushes (and closes the file: a full disk can show only when its last
    // buffer goes out). Returns an empty string, or what went wrong:
    // "error writing the report[ to 'FILE']: REASON".
    std::string finish();

private:
    run_report_sink(std::ostream& err, std::string path) : err_(&err), path_(std::move(path)) {}
    std::ostream* err_;
    std::string path_;
    std::unique_ptr<std::ofstream> file_;  // by pointer: buf_ holds its buffer's address
    std::unique_ptr<errno_keeping_buf> buf_;
    std::unique_ptr<std::ostream> out_;
};

// "it exited with status N", or that the status is unknown: the note on
// every failure to report, so a script still learns how the command ended.
std::string status_note(const std::optional<exit_status>& st);

}  // namespace proctimes::cli
