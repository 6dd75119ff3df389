// SPDX-License-Identifier: MIT
// tools/proctimes/output/buffered_writer.hpp — what the streaming writers (JSON
// and CSV) share: records are formatted into one string that goes to the
// stream in blocks of about 64 KiB: the stream sees a few large writes, and
// memory stays flat however many records come.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "writers.hpp"

namespace proctimes::cli {

class buffered_writer : public record_writer {
public:
    /// Hands what is buffered to the stream and flushes it (layout::stream).
    void flush() override {
        drain();
        out_.flush();
    }

protected:
    /// The size at which the buffer goes out.
    static constexpr std::size_t block = std::size_t{64} * 1024;

    explicit buffered_writer(std::ostream& out) : out_(out) { buf_.reserve(block + 4096); }

    /// Hands the whole buffer to the stream (no flush).
    void drain() {
        out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        buf_.clear();
    }

    /// drain() once the buffer holds a block: call it between records, and
    /// between the thread records of one process (it can have thousands).
    void drain_if_full() {
        if (buf_.size() >= block) drain();
    }

    std::string buf_;  // formatted, not yet handed to the stream

private:
    std::ostream& out_;
};

}  // namespace proctimes::cli
