// SPDX-License-Identifier: MIT
// The errors of `proctimes serve` as values: each failure has its kind, and
// the kind alone chooses the exit status (serve/error.hpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "serve/collect/collector.hpp"
#include "serve/error.hpp"
#include "serve/http/listen.hpp"
#include "serve/http/webconfig.hpp"
#include "serve/serve.hpp"

namespace {

namespace serve = proctimes::cli::serve;
using serve::error_kind;

TEST(ServeErrors, EachKindHasItsDocumentedExitStatus) {
    EXPECT_EQ(serve::exit_status(error_kind::usage), 2);
    EXPECT_EQ(serve::exit_status(error_kind::config), 2);
    EXPECT_EQ(serve::exit_status(error_kind::tls), 2);
    EXPECT_EQ(serve::exit_status(error_kind::listen), 1);
    EXPECT_EQ(serve::exit_status(error_kind::runtime), 1);
}

TEST(ServeErrors, WebConfigErrorsAreTlsOrConfig) {
    const auto tls = serve::parse_web_config("tls_server_config:\n  cert: x\n", ".");
    ASSERT_FALSE(tls);
    EXPECT_EQ(tls.error().kind, error_kind::tls);
    EXPECT_EQ(tls.error().message, "tls_server_config: missing one of key or key_file");
    const auto file = serve::parse_web_config("tls_server_config:\n  cert_file: /nonexistent/c.pem\n", ".");
    ASSERT_FALSE(file);
    EXPECT_EQ(file.error().kind, error_kind::tls);

    const auto key = serve::parse_web_config("no_such_key: 1\n", ".");
    ASSERT_FALSE(key);
    EXPECT_EQ(key.error().kind, error_kind::config);
    EXPECT_EQ(key.error().message, "no_such_key: unknown key");

    const auto users = serve::parse_web_config("basic_auth_users:\n  alice: plain\n", ".");
    ASSERT_FALSE(users);
    EXPECT_EQ(users.error().kind, error_kind::config);

    const auto missing = serve::read_web_config("/nonexistent/web.yml");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().kind, error_kind::config);
    EXPECT_EQ(missing.error().message.rfind("--web-config: cannot read /nonexistent/web.yml", 0), 0u)
        << missing.error().message;

    const auto none = serve::parse_web_config("", ".");
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->tls);
}

TEST(ServeErrors, ListenAndPortFileErrorsAreListenErrors) {
    const auto first = serve::open_listener("127.0.0.1", 0);
    ASSERT_TRUE(first) << first.error().message;
    const auto second = serve::open_listener("127.0.0.1", first->port);
    ::close(first->fd);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().kind, error_kind::listen);
    EXPECT_EQ(second.error().message,
              "cannot listen on 127.0.0.1:" + std::to_string(first->port) + ": Address already in use");

    const auto written = serve::write_port_file("/nonexistent/dir/port", 9284);
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().kind, error_kind::listen);
    EXPECT_EQ(written.error().message.rfind("--port-file: cannot create a file beside /nonexistent/dir/port", 0), 0u)
        << written.error().message;
    EXPECT_EQ(serve::shown_address("::1", 80), "[::1]:80");
}

TEST(ServeErrors, TheCollectorTellsAnUnreadableTableFromABadConfig) {
    proctimes::cli::serve_options o;
    o.proc_root = "/nonexistent";
    const auto table = serve::collector::open(o);
    ASSERT_FALSE(table);
    EXPECT_EQ(table.error().kind, error_kind::runtime);
    EXPECT_EQ(table.error().message.rfind("cannot read /nonexistent: ", 0), 0u) << table.error().message;

    o.config_file = "/nonexistent/pe.yaml";  // read before the table: the config's error
    const auto config = serve::collector::open(o);
    ASSERT_FALSE(config);
    EXPECT_EQ(config.error().kind, error_kind::config);

    o.config_file.clear();
    o.include = "(";
    const auto regex = serve::collector::open(o);
    ASSERT_FALSE(regex);
    EXPECT_EQ(regex.error().kind, error_kind::usage);
}

// The exit status follows the kind, not the message: an unreadable process
// table is 1 with a process-exporter config too (the config read, the table not).
TEST(ServeErrors, AnUnreadableTableIsExitOneWithAConfigToo) {
    char path[] = "/tmp/proctimes-serve-error-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    const std::string yaml = "process_names:\n  - name: '{{.Comm}}'\n    comm: [sh]\n";
    ASSERT_EQ(::write(fd, yaml.data(), yaml.size()), static_cast<ssize_t>(yaml.size()));
    ::close(fd);
    proctimes::cli::serve_options o;
    o.once = true;
    o.config_file = path;
    o.proc_root = "/nonexistent";
    std::ostringstream out, err;
    const int rc = proctimes::cli::run_serve(o, out, err);
    ::unlink(path);
    EXPECT_EQ(rc, 1) << err.str();
    EXPECT_EQ(err.str().rfind("proctimes: serve: cannot read /nonexistent: ", 0), 0u) << err.str();
    EXPECT_TRUE(out.str().empty());
}

}  // namespace
