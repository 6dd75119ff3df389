// SPDX-License-Identifier: MIT
// The HTTP side of `proctimes serve`, on GNU libmicrohttpd. The library
// enforces the limits itself: a fixed pool of event-loop threads (epoll), so
// an idle or slow peer holds a descriptor and a little memory, never a
// thread; a memory limit per connection that bounds the request head; an
// inactivity timeout. The connection limits are kept in conn_pool.cpp: a
// connection beyond the total or its address's limit makes the oldest one
// that has no request under way be shut down, so that a flood of idle or
// half-sent connections cannot keep a scrape out. Basic authentication's bcrypt runs on a thread
// of its own while the connection is suspended (webauth.cpp). The listening socket is opened here
// (listen.cpp), without SO_REUSEPORT.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gnutls/gnutls.h>
#include <libdeflate.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve/collect/collector.hpp"
#include "serve/http/conn_pool.hpp"
#include "serve/http/http.hpp"
#include "serve/http/listen.hpp"
#include "serve/http/webconfig.hpp"
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

// libdeflate's fastest level, which compresses a whole buffer at once: on
// an exposition of 14.6 KB, 46 µs and 2,875 bytes, where zlib's fastest level
// took 98 µs for 3,082 bytes. Each thread that answers keeps its
// compressor (its tables are allocated once).
std::string gzip(const std::string& in) {
    struct compressor_deleter {
        void operator()(libdeflate_compressor* c) const noexcept { ::libdeflate_free_compressor(c); }
    };
    thread_local const std::unique_ptr<libdeflate_compressor, compressor_deleter> c(::libdeflate_alloc_compressor(1));
    if (!c) return {};
    std::string out(::libdeflate_gzip_compress_bound(c.get(), in.size()), '\0');
    const std::size_t n = ::libdeflate_gzip_compress(c.get(), in.data(), in.size(), out.data(), out.size());
    out.resize(n);  // 0: it did not fit the bound (never expected): no gzip form
    return out;
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

// The pool's entry for a new connection: its socket and its peer's address bytes.
serve::conn_entry* open_in(serve::conn_pool& pool, MHD_Connection* c) {
    int fd = -1;
    std::string addr;
    if (const MHD_ConnectionInfo* i = ::MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD))
        fd = i->connect_fd;
    if (const MHD_ConnectionInfo* i = ::MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        i != nullptr && i->client_addr != nullptr) {
        const sockaddr* sa = i->client_addr;
        if (sa->sa_family == AF_INET) {
            const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
            addr.assign(reinterpret_cast<const char*>(&in->sin_addr), sizeof in->sin_addr);
        } else if (sa->sa_family == AF_INET6) {
            const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
            addr.assign(reinterpret_cast<const char*>(&in6->sin6_addr), sizeof in6->sin6_addr);
        }
    }
    return pool.opened(fd, std::move(addr));
}

serve::conn_entry* entry_of(MHD_Connection* c) {
    const MHD_ConnectionInfo* i = ::MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i != nullptr ? static_cast<serve::conn_entry*>(i->socket_context) : nullptr;
}

/// A request whose credentials are being hashed: the connection is
/// suspended until the hashing thread stores the verdict and resumes it.
struct auth_wait {
    std::atomic<serve::basic_auth::verdict> v{serve::basic_auth::verdict::denied};
};

struct server_state {
    serve::collector& col;
    std::ostream& err;
    /// Scrapes answered 500 because the collection threw: the first is
    /// logged with its reason, the count when the server stops.
    std::atomic<std::uint64_t> failed_scrapes{0};
    bodies cache;
    std::string metrics_path;  ///< --web.telemetry-path, default /metrics
    std::string index;         ///< the page at "/"
    const serve::web_config& web;
    std::unique_ptr<serve::basic_auth> auth;  ///< null: no basic_auth_users
    serve::conn_pool pool;
    unsigned head_deadline, idle_deadline;  ///< --connection-deadline (until a head is whole), --idle-deadline
};

// The request state of a body-less request whose head has been seen (the
// handler's first call); any other non-null value is an auth_wait.
int head_seen;

MHD_Response* shared_response(const body_ptr& body) {
    auto* keep = new body_ptr(body);
    MHD_Response* r = ::MHD_create_response_from_buffer_with_free_callback_cls(
        body->size(), const_cast<char*>(body->data()), [](void* p) { delete static_cast<body_ptr*>(p); }, keep);
    if (!r) delete keep;
    return r;
}

MHD_Result reply(const server_state& st, MHD_Connection* c, unsigned status, MHD_Response* r, const char* type) {
    if (!r) return MHD_NO;  // out of memory: the library closes the connection
    ::MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    for (const auto& [name, value] : st.web.headers) ::MHD_add_response_header(r, name.c_str(), value.c_str());
    const MHD_Result ok = ::MHD_queue_response(c, status, r);
    ::MHD_destroy_response(r);
    return ok;
}

MHD_Result reply_static(const server_state& st, MHD_Connection* c, unsigned status, const char* text,
                        const char* type) {
    return reply(st, c, status,
                 ::MHD_create_response_from_buffer(std::strlen(text), const_cast<char*>(text), MHD_RESPMEM_PERSISTENT),
                 type);
}

// The client certificate a verifying client_auth_type needs. The handshake
// already refused a missing or unverified one (see on_connection); this
// checks again before any answer.
bool client_cert_ok(const serve::web_config& web, MHD_Connection* c) {
    if (web.auth != serve::client_auth::require_and_verify && web.auth != serve::client_auth::verify_if_given)
        return true;
    const MHD_ConnectionInfo* info = ::MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info == nullptr || info->tls_session == nullptr) return false;
    auto* session = static_cast<gnutls_session_t>(info->tls_session);
    unsigned n = 0;
    if (::gnutls_certificate_get_peers(session, &n) == nullptr || n == 0)
        return web.auth == serve::client_auth::verify_if_given;
    unsigned status = 0;
    return ::gnutls_certificate_verify_peers2(session, &status) == 0 && status == 0;
}

// A new connection: into the pool; with TLS, ask for (or require) a client
// certificate, and have GnuTLS verify it during the handshake, as
// client_auth_type says. A closed one: out of the pool.
void on_connection(void* cls, MHD_Connection* c, void** socket_context, MHD_ConnectionNotificationCode code) {
    auto& st = *static_cast<server_state*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        st.pool.closed(static_cast<serve::conn_entry*>(*socket_context));
        *socket_context = nullptr;
        return;
    }
    if (code != MHD_CONNECTION_NOTIFY_STARTED) return;
    *socket_context = open_in(st.pool, c);
    const auto& web = st.web;
    if (!web.tls || web.auth == serve::client_auth::none) return;
    const MHD_ConnectionInfo* info = ::MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info == nullptr || info->tls_session == nullptr) return;
    auto* session = static_cast<gnutls_session_t>(info->tls_session);
    const bool required =
        web.auth == serve::client_auth::require_any || web.auth == serve::client_auth::require_and_verify;
    ::gnutls_certificate_server_set_request(session, required ? GNUTLS_CERT_REQUIRE : GNUTLS_CERT_REQUEST);
    if (web.auth == serve::client_auth::require_and_verify || web.auth == serve::client_auth::verify_if_given)
        ::gnutls_session_set_verify_cert(session, nullptr, 0);
}

// A request line has been read: the connection moves behind those that
// have sent less; its deadline is the head's again (--connection-deadline).
void* on_request_line(void* cls, const char* /*uri*/, MHD_Connection* c) {
    auto& st = *static_cast<server_state*>(cls);
    st.pool.set(entry_of(c), serve::conn_entry::state::in_head);
    (void)::MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, st.head_deadline);
    return nullptr;
}

// A request is over (answered, or its connection closed): the connection waits for the next one,
// once answered up to --idle-deadline (a scraper keeps it), among the first shed meanwhile.
void on_completed(void* cls, MHD_Connection* c, void** req_cls, MHD_RequestTerminationCode why) {
    if (*req_cls != nullptr && *req_cls != &head_seen) delete static_cast<auth_wait*>(*req_cls);
    *req_cls = nullptr;
    static_cast<server_state*>(cls)->pool.set(entry_of(c), serve::conn_entry::state::waiting);
    if (why == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        (void)::MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
                                          static_cast<server_state*>(cls)->idle_deadline);
}

// A collection that threw (out of memory, most likely): nothing may unwind
// into the library's C code, so the scrape is answered 500; the first one is
// logged with its reason, and every one counted.
void scrape_failed(server_state& st, const char* why) {
    if (st.failed_scrapes.fetch_add(1, std::memory_order_relaxed) == 0)
        st.err << "proctimes: serve: a scrape failed (" << why
               << "); answered 500, later failures are counted and shown when the server stops" << std::endl;
}

MHD_Result refuse(const server_state& st, MHD_Connection* c, serve::basic_auth::verdict v) {
    if (v == serve::basic_auth::verdict::busy) {
        static const char busy[] = "too many passwords are being checked; retry\n";
        MHD_Response* r =
            ::MHD_create_response_from_buffer(sizeof busy - 1, const_cast<char*>(busy), MHD_RESPMEM_PERSISTENT);
        if (r) ::MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
        return reply(st, c, MHD_HTTP_SERVICE_UNAVAILABLE, r, "text/plain; charset=utf-8");
    }
    MHD_Response* r =
        ::MHD_create_response_from_buffer(13, const_cast<char*>("Unauthorized\n"), MHD_RESPMEM_PERSISTENT);
    if (r) ::MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic");
    return reply(st, c, MHD_HTTP_UNAUTHORIZED, r, "text/plain; charset=utf-8");
}

MHD_Result answer(void* cls, MHD_Connection* c, const char* url, const char* method, const char* /*version*/,
                  const char* /*upload_data*/, std::size_t* upload_data_size, void** req_cls) {
    auto& st = *static_cast<server_state*>(cls);
    // A request without a body is answered once the library has seen all of
    // it (first call: the head; second: the end), so the connection may be
    // kept alive. A request with a body is answered at its head: the body is
    // never read into memory, and the library closes the connection after
    // the answer.
    if (*upload_data_size != 0) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    st.pool.set(entry_of(c), serve::conn_entry::state::busy);
    if (*req_cls == nullptr &&
        ::MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH) == nullptr &&
        ::MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) == nullptr) {
        *req_cls = &head_seen;
        return MHD_YES;
    }
    if (st.web.tls && !client_cert_ok(st.web, c)) return MHD_NO;  // closes the connection
    if (st.auth) {
        using verdict = serve::basic_auth::verdict;
        verdict v = verdict::denied;
        if (*req_cls != nullptr && *req_cls != &head_seen) {  // resumed: the hash is done
            v = static_cast<auth_wait*>(*req_cls)->v.load();
        } else {
            auto r = st.auth->lookup(::MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
            if (r.known) {
                v = r.v;
            } else if (*req_cls == &head_seen) {
                // Hashed off the worker: the connection waits, suspended,
                // and the handler is called again once it is resumed.
                auto* w = new auth_wait;
                *req_cls = w;
                ::MHD_suspend_connection(c);
                st.auth->submit(std::move(r.t), [c, w](verdict out) {
                    w->v = out;
                    ::MHD_resume_connection(c);
                });
                return MHD_YES;
            }
            // A request with a body is answered at its head, which cannot
            // wait: only remembered credentials pass.
        }
        if (v != verdict::allowed) return refuse(st, c, v);
    }
    const bool get = std::strcmp(method, MHD_HTTP_METHOD_GET) == 0 || std::strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    if (!get) {
        MHD_Response* r =
            ::MHD_create_response_from_buffer(19, const_cast<char*>("method not allowed\n"), MHD_RESPMEM_PERSISTENT);
        if (r) ::MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        return reply(st, c, MHD_HTTP_METHOD_NOT_ALLOWED, r, "text/plain");
    }
    if (std::strcmp(url, "/") == 0)
        return reply_static(st, c, MHD_HTTP_OK, st.index.c_str(), "text/html; charset=utf-8");
    if (url != st.metrics_path) return reply_static(st, c, MHD_HTTP_NOT_FOUND, "not found\n", "text/plain");

    const char* accept = ::MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    const char* enc = ::MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    const auto f = serve::negotiate(accept ? accept : "");
    const bool want_gz = enc && serve::accept_q(enc, "gzip", true) > 0;
    bodies::pair b;
    try {
        b = st.cache.get(st.col, f, want_gz);
    } catch (const std::exception& e) {
        scrape_failed(st, e.what());
        return reply_static(st, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "collection failed\n", "text/plain");
    } catch (...) {
        scrape_failed(st, "an exception of unknown type");
        return reply_static(st, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "collection failed\n", "text/plain");
    }
    const bool gz = want_gz && b.gz && !b.gz->empty();
    MHD_Response* r = shared_response(gz ? b.gz : b.plain);
    if (r) {
        ::MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
        if (gz) ::MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    }
    return reply(st, c, MHD_HTTP_OK, r, std::string(serve::content_type(f)).c_str());
}

}  // namespace

serve::status serve::serve_http(serve::collector& col, const serve_options& opts, const serve::web_config& web,
                                std::ostream& out, std::ostream& err) {
    auto listening = serve::open_listener(opts.host, opts.port);
    if (!listening) return listening.error();
    const serve::listener l = *listening;
    if (!opts.port_file.empty()) {
        if (auto written = serve::write_port_file(opts.port_file, l.port); !written) {
            ::close(l.fd);
            return written.error();
        }
    }

    // SIGINT/SIGTERM: blocked here (and so in every thread the library
    // starts) and taken by this thread with sigwaitinfo, which stops the server.
    sigset_t stop_set, old;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &stop_set, &old);

    server_state st{col,
                    err,
                    {},
                    {},
                    opts.metrics_path,
                    index_html(opts.metrics_path),
                    web,
                    nullptr,
                    serve::conn_pool(opts.max_connections, opts.max_connections_per_ip),
                    opts.connection_deadline,
                    opts.idle_deadline};
    if (!web.users.empty()) st.auth = std::make_unique<serve::basic_auth>(web.users);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    auto num = [](auto v) { return static_cast<intptr_t>(v); };
    // The library's own limit is a backstop above the pool's: connections
    // accepted in one burst are counted before the ones they shed have been
    // closed. Without a per-address limit of its own, a scrape is never
    // refused for its address's idle connections.
    const std::size_t backstop = std::size_t{opts.max_connections} + 64 + opts.max_connections / 8;
    std::vector<MHD_OptionItem> o = {
        {MHD_OPTION_LISTEN_SOCKET, num(l.fd), nullptr},
        {MHD_OPTION_THREAD_POOL_SIZE, num(std::max(1u, opts.http_threads)), nullptr},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, num(connection_memory), nullptr},
        {MHD_OPTION_CONNECTION_TIMEOUT, num(opts.connection_deadline), nullptr},
        {MHD_OPTION_CONNECTION_LIMIT, num(backstop), nullptr},
        {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&on_connection), &st},
        {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&on_completed), &st},
        {MHD_OPTION_URI_LOG_CALLBACK, reinterpret_cast<intptr_t>(&on_request_line), &st},
    };
    if (web.tls) {
        flags |= MHD_USE_TLS;
        o.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(web.key_pem.c_str())});
        o.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(web.cert_pem.c_str())});
        if (!web.client_ca_pem.empty())
            o.push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0, const_cast<char*>(web.client_ca_pem.c_str())});
        o.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char*>(web.priorities.c_str())});
    }
    o.push_back({MHD_OPTION_END, 0, nullptr});
    MHD_Daemon* d =
        ::MHD_start_daemon(flags, 0, nullptr, nullptr, &answer, &st, MHD_OPTION_ARRAY, o.data(), MHD_OPTION_END);
    if (!d) {
        // Not closed here: whether the library already did is not documented.
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        return serve::error{serve::error_kind::listen,
                            "cannot start the HTTP server on " + serve::shown_address(opts.host, l.port)};
    }
    out << "proctimes serve: listening on " << (web.tls ? "https://" : "http://")
        << serve::shown_address(opts.host, l.port) << opts.metrics_path << " (exit records: " << col.exit_source()
        << ")" << std::endl;

    siginfo_t si{};
    while (::sigwaitinfo(&stop_set, &si) < 0 && errno == EINTR) {
    }
    // Every connection suspended for a hash is resumed (refused) first: the
    // library must not be stopped with one still suspended.
    if (st.auth) st.auth->stop();
    ::MHD_stop_daemon(d);  // joins its threads, closes every connection and the listening socket
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (const auto failed = st.failed_scrapes.load(); failed > 0)
        err << "proctimes: serve: " << failed << " scrape" << (failed == 1 ? "" : "s") << " failed (answered 500)"
            << std::endl;
    out << "proctimes serve: stopped" << std::endl;
    return serve::ok();
}

}  // namespace proctimes::cli
