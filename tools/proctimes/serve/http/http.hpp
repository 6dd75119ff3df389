// SPDX-License-Identifier: MIT
// The HTTP side of `proctimes serve` (http.cpp): the server on
// libmicrohttpd, its connection limits, TLS and basic authentication.
#pragma once

#include <iosfwd>

#include "serve/error.hpp"
#include "serve/http/webconfig.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli::serve {

class collector;

/// Listens as `opts` says (and writes --port-file), serves `col`'s scrapes
/// until SIGINT or SIGTERM, and stops. Errors: error_kind::listen when the
/// address cannot be listened on, the port file cannot be written or the
/// server cannot start. A scrape that fails is answered 500, logged once on
/// `err` and counted (the count on `err` when it stops).
status serve_http(collector& col, const serve_options& opts, const web_config& web, std::ostream& out,
                  std::ostream& err);

}  // namespace proctimes::cli::serve
