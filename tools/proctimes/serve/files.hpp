// SPDX-License-Identifier: MIT
// How `proctimes serve` reads a whole file it is given: a config, a web
// config, a certificate or key, or a file of a --proc-root tree.
#pragma once

#include <cstddef>
#include <string>

#include "proctimes/result.hpp"

namespace proctimes::cli::serve {

/// What to do with a file longer than the limit.
enum class past_limit {
    refuse,  ///< an error (std::errc::file_too_large): a config is read whole or not at all
    cut,     ///< the first `max_bytes` only
};

/// Reads the regular file `path`, opened without blocking (O_NONBLOCK,
/// O_NOCTTY, close-on-exec) and checked with fstat: a FIFO, socket, device
/// or directory is never read (errc::not_a_regular_file), so that one put
/// where a file was expected cannot make the command wait or read forever.
/// Errors: errc::not_a_regular_file, errc::access_denied (EACCES, EPERM),
/// std::errc::file_too_large (with past_limit::refuse), or the errno of
/// open(2) or read(2).
result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes,
                                      past_limit beyond = past_limit::refuse);

}  // namespace proctimes::cli::serve
