// SPDX-License-Identifier: MIT
// The exporter's listening socket and its port file.
#pragma once

#include <cstdint>
#include <string>

namespace proctimes::cli::serve {

struct listener {
    int fd = -1;             ///< listening, non-blocking, close-on-exec; -1 on failure
    std::uint16_t port = 0;  ///< the port bound (port 0 asked: the one the kernel chose)
    std::string error;       ///< why not: the resolver's reason (gai_strerror) or the socket's (strerror)
};

/// Resolves `host` (getaddrinfo, AI_PASSIVE) and listens on the first address
/// that binds. SO_REUSEADDR, never SO_REUSEPORT: a port another process
/// listens on fails with "Address already in use".
listener open_listener(const std::string& host, std::uint16_t port);

/// Writes "PORT\n" to `path` through a new temporary file in the same
/// directory (mkostemp) renamed over it. Returns an error message, or "".
std::string write_port_file(const std::string& path, std::uint16_t port);

}  // namespace proctimes::cli::serve
