// SPDX-License-Identifier: MIT
// The HTTP side of `proctimes serve`, on GNU libmicrohttpd. The library
// enforces the limits itself: a fixed pool of event-loop threads (epoll), so
// an idle or slow peer holds a descriptor and a little memory, never a
// thread; a memory limit per connection that bounds the request head; an
// inactivity timeout; a total and a per-address connection limit. The
// listening socket is opened here (listen.cpp), without SO_REUSEPORT.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>

#include <microhttpd.h>
#include <unistd.h>
#include <zlib.h>

#include "serve/collector.hpp"
#include "serve/listen.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli {
namespace {

/// Memory per connection (the library's pool): the request head, its parsed
/// headers and the response head are kept in it. A head that does not fit is
/// answered 431 (or 414 for the request line) and the connection closed.
constexpr std::size_t connection_memory = std::size_t{16} * 1024;

// The page at "/": a link to the exposition (`path` is checked by the
// option parser: '/' and [A-Za-z0-9._~/-] only, nothing to escape).
std::string index_html(const std::string& path) {
    return "<!DOCTYPE html>\n<html><head><title>proctimes serve</title></head><body>\n"
           "<h1>proctimes serve</h1>\n<p>Process CPU and start times for Prometheus: "
           "<a href=\"" +
           path + "\">" + path + "</a></p>\n</body></html>\n";
}

using body_ptr = std::shared_ptr<const std::string>;

std::string gzip(const std::string& in) {
    z_stream zs{};
    if (::deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
    std::string out(::deflateBound(&zs, static_cast<uLong>(in.size())), '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(in.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    const int rc = ::deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    ::deflateEnd(&zs);
    return rc == Z_STREAM_END ? out : std::string();
}

// The exposition and its gzip form, shared by every response that sends the
// same bytes: 2,000 concurrent scrapes of one collection hold one copy (each
// response keeps a reference until its connection has sent it).
class bodies {
public:
    struct pair {
        body_ptr plain, gz;
    };
    pair get(serve::collector& col, serve::format f, bool want_gz) {
        std::string text = col.scrape(f);
        std::lock_guard lk(mu_);
        pair& c = cache_[f == serve::format::openmetrics_100 ? 1 : 0];
        if (!c.plain || *c.plain != text) c = {std::make_shared<const std::string>(std::move(text)), nullptr};
        if (want_gz && !c.gz) c.gz = std::make_shared<const std::string>(gzip(*c.plain));
        return c;
    }

private:
    std::mutex mu_;
    pair cache_[2];
};

struct server_state {
    serve::collector& col;
    bodies cache;
    std::string metrics_path;  ///< --web.telemetry-path, default /metrics
    std::string index;         ///< the page at "/"
};

MHD_Response* shared_response(const body_ptr& body) {
    auto* keep = new body_ptr(body);
    MHD_Response* r = ::MHD_create_response_from_buffer_with_free_callback_cls(
        body->size(), const_cast<char*>(body->data()), [](void* p) { delete static_cast<body_ptr*>(p); }, keep);
    if (!r) delete keep;
    return r;
}

MHD_Result reply(MHD_Connection* c, unsigned status, MHD_Response* r, const char* type) {
    if (!r) return MHD_NO;  // out of memory: the library closes the connection
    ::MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    const MHD_Result ok = ::MHD_queue_response(c, status, r);
    ::MHD_destroy_response(r);
    return ok;
}

MHD_Result reply_static(MHD_Connection* c, unsigned status, const char* text, const char* type) {
    return reply(c, status,
                 ::MHD_create_response_from_buffer(std::strlen(text), const_cast<char*>(text), MHD_RESPMEM_PERSISTENT),
                 type);
}

MHD_Result answer(void* cls, MHD_Connection* c, const char* url, const char* method, const char* /*version*/,
                  const char* /*upload_data*/, std::size_t* upload_data_size, void** req_cls) {
    auto& st = *static_cast<server_state*>(cls);
    // A request without a body is answered once the library has seen all of
    // it (first call: the head; second: the end), so the connection may be
    // kept alive. A request with a body is answered at its head: the body is
    // never read into memory, and the library closes the connection after
    // the answer.
    static int head_seen;
    if (*upload_data_size != 0) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*req_cls == nullptr &&
        ::MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH) == nullptr &&
        ::MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) == nullptr) {
        *req_cls = &head_seen;
        return MHD_YES;
    }
    const bool get = std::strcmp(method, MHD_HTTP_METHOD_GET) == 0 || std::strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    if (!get) {
        MHD_Response* r =
            ::MHD_create_response_from_buffer(19, const_cast<char*>("method not allowed\n"), MHD_RESPMEM_PERSISTENT);
        if (r) ::MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, r, "text/plain");
    }
    if (std::strcmp(url, "/") == 0) return reply_static(c, MHD_HTTP_OK, st.index.c_str(), "text/html; charset=utf-8");
    if (url != st.metrics_path) return reply_static(c, MHD_HTTP_NOT_FOUND, "not found\n", "text/plain");

    const char* accept = ::MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    const char* enc = ::MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    const auto f = serve::negotiate(accept ? accept : "");
    const bool want_gz = enc && serve::accept_q(enc, "gzip", true) > 0;
    bodies::pair b;
    try {
        b = st.cache.get(st.col, f, want_gz);
    } catch (...) {  // nothing may unwind into the library's C code
        return reply_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "collection failed\n", "text/plain");
    }
    const bool gz = want_gz && b.gz && !b.gz->empty();
    MHD_Response* r = shared_response(gz ? b.gz : b.plain);
    if (r) {
        ::MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
        if (gz) ::MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    }
    return reply(c, MHD_HTTP_OK, r, std::string(serve::content_type(f)).c_str());
}

std::string shown_host(const std::string& host) {
    return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

}  // namespace

int serve_http(serve::collector& col, const serve_options& opts, std::ostream& out, std::ostream& err) {
    auto l = serve::open_listener(opts.host, opts.port);
    if (l.fd < 0) {
        err << "proctimes: serve: cannot listen on " << shown_host(opts.host) << ":" << opts.port << ": " << l.error
            << "\n";
        return 1;
    }
    if (!opts.port_file.empty()) {
        if (auto e = serve::write_port_file(opts.port_file, l.port); !e.empty()) {
            ::close(l.fd);
            err << "proctimes: serve: --port-file: " << e << "\n";
            return 1;
        }
    }

    // SIGINT/SIGTERM: blocked here (and so in every thread the library
    // starts) and taken by this thread with sigwaitinfo, which stops the server.
    sigset_t stop_set, old;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &stop_set, &old);

    server_state st{col, {}, opts.metrics_path, index_html(opts.metrics_path)};
    const unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
    MHD_Daemon* d =
        ::MHD_start_daemon(flags, 0, nullptr, nullptr, &answer, &st,                                                //
                           MHD_OPTION_LISTEN_SOCKET, l.fd,                                                          //
                           MHD_OPTION_THREAD_POOL_SIZE, static_cast<unsigned>(std::max(1u, opts.http_threads)),     //
                           MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory,                                   //
                           MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(opts.connection_deadline),          //
                           MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(opts.max_connections),                //
                           MHD_OPTION_PER_IP_CONNECTION_LIMIT, static_cast<unsigned>(opts.max_connections_per_ip),  //
                           MHD_OPTION_END);
    if (!d) {
        // Not closed here: whether the library already did is not documented.
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        err << "proctimes: serve: cannot start the HTTP server on " << shown_host(opts.host) << ":" << l.port << "\n";
        return 1;
    }
    out << "proctimes serve: listening on http://" << shown_host(opts.host) << ":" << l.port << opts.metrics_path
        << " (exit records: " << col.exit_source() << ")" << std::endl;

    siginfo_t si{};
    while (::sigwaitinfo(&stop_set, &si) < 0 && errno == EINTR) {
    }
    ::MHD_stop_daemon(d);  // joins its threads, closes every connection and the listening socket
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    out << "proctimes serve: stopped" << std::endl;
    return 0;
}

}  // namespace proctimes::cli
