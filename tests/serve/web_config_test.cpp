// SPDX-License-Identifier: MIT
// `proctimes serve --web-config` (process-exporter's -web.config.file): the
// exporter-toolkit format, against the real program. Certificates are made
// by openssl at test time, scrapes go through curl, bcrypt hashes come from
// libxcrypt: TLS scrapes, basic authentication (401 and WWW-Authenticate),
// client certificates required and verified, plain HTTP on a TLS port, the
// configured headers, clear refusals of what cannot be honoured, and memory
// under a flood of TLS handshakes.
#include <crypt.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <thread>

#include <gnutls/gnutls.h>
#include <sys/stat.h>

#include "harness.hpp"

using namespace serve_test;
using namespace std::chrono_literals;

namespace {

struct ran {
    int rc = -1;
    std::string out;
};

// A shell command with its standard output and error, under timeout(1).
ran sh(const std::string& cmd, int seconds = 30) {
    ran r;
    const std::string full = "timeout -s KILL " + std::to_string(seconds) + " sh -c '" + cmd + "' 2>&1";
    FILE* p = ::popen(full.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf{};
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int st = ::pclose(p);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

bool have(const char* tool) { return sh(std::string("command -v ") + tool + " >/dev/null").rc == 0; }

std::string bcrypt(const std::string& password, const char* prefix = "$2b$", unsigned long cost = 5) {
    std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> salt{};
    if (!::crypt_gensalt_rn(prefix, cost, nullptr, 0, salt.data(), static_cast<int>(salt.size()))) return {};
    crypt_data d{};
    const char* h = ::crypt_rn(password.c_str(), salt.data(), &d, sizeof d);
    return h && h[0] != '*' ? h : "";
}

struct tls_dir {
    std::string dir = temp_dir("webcfg");
    bool ok = false;
    tls_dir() {
        // A CA, a server certificate for 127.0.0.1 signed by it, a client
        // certificate signed by it, and a second CA with its own client.
        const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
        ok = !dir.empty() &&
             sh("cd " + dir + " && openssl req -x509" + key +
                    " -keyout ca.key -out ca.pem -days 2 -subj /CN=testca"
                    " && openssl req -new" +
                    key +
                    " -keyout server.key -out server.csr -subj /CN=127.0.0.1"
                    " && printf \"subjectAltName=IP:127.0.0.1\" > san.ext"
                    " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
                    " -extfile san.ext -out server.pem"
                    " && openssl req -new" +
                    key +
                    " -keyout client.key -out client.csr -subj /CN=scraper"
                    " && openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
                    " -out client.pem"
                    " && openssl req -x509" +
                    key + " -keyout other.key -out other.pem -days 2 -subj /CN=stranger",
                60)
                     .rc == 0;
    }
    ~tls_dir() {
        if (!dir.empty()) std::system(("rm -rf '" + dir + "'").c_str());
    }
    void write(const std::string& name, const std::string& text) const {
        FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
        std::fputs(text.c_str(), f);
        std::fclose(f);
    }
};

struct tls_serve {
    program proc;
    int port = 0;
    std::string log;
    tls_serve(const tls_dir& t, const std::string& config, std::vector<std::string> extra = {})
        : log(t.dir + "/serve.log") {
        t.write("web.yml", config);
        ::unlink((t.dir + "/port").c_str());
        std::vector<std::string> argv{serve_bin(PROCTIMES_BIN),
                                      "serve",
                                      "--listen",
                                      "127.0.0.1:0",
                                      "--port-file",
                                      t.dir + "/port",
                                      "--no-exit-records",
                                      "-web.config.file",
                                      t.dir + "/web.yml"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        proc = program(argv, log);
        const std::string p = wait_for_file(t.dir + "/port", 20s);
        if (!p.empty()) port = std::stoi(p);
    }
    std::string url(const char* scheme = "https") const {
        return std::string(scheme) + "://127.0.0.1:" + std::to_string(port) + "/metrics";
    }
};

const char* const server_tls = "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n";

#define NEED_TOOLS()                                                                 \
    if (!have("openssl") || !have("curl")) GTEST_SKIP() << "openssl or curl absent"; \
    tls_dir t;                                                                       \
    ASSERT_TRUE(t.ok) << "openssl could not make the test certificates"

}  // namespace

TEST(ServeWebConfig, ScrapesOverTlsWithTheConfiguredHeaders) {
    NEED_TOOLS();
    tls_serve s(t, std::string(server_tls) +
                       "http_server_config:\n  headers:\n    X-Frame-Options: deny\n"
                       "    Strict-Transport-Security: max-age=31536000\n");
    ASSERT_NE(s.port, 0) << read_text(s.log);
    const auto r = sh("curl -sS -D - --cacert " + t.dir + "/ca.pem " + s.url());
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("HTTP/1.1 200"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nproctimes_group_cpu_seconds_total{"), std::string::npos);
    EXPECT_NE(r.out.find("X-Frame-Options: deny"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Strict-Transport-Security: max-age=31536000"), std::string::npos);
    // TLS 1.3 by default; TLS 1.1 is below the default min_version (TLS12).
    EXPECT_EQ(sh("curl -sS -o /dev/null --tlsv1.3 --cacert " + t.dir + "/ca.pem " + s.url()).rc, 0);
    EXPECT_NE(sh("curl -sS -o /dev/null --tls-max 1.1 --cacert " + t.dir + "/ca.pem " + s.url()).rc, 0);

    // Plain HTTP on the TLS port gets no answer, and TLS still works after.
    const auto plain = http_get(s.port, "/metrics", 5s);
    EXPECT_EQ(plain.status, 0) << plain.head;
    EXPECT_TRUE(s.proc.running());
    EXPECT_EQ(sh("curl -sS -o /dev/null --cacert " + t.dir + "/ca.pem " + s.url()).rc, 0);
    EXPECT_EQ(WEXITSTATUS(s.proc.stop()), 0);
}

TEST(ServeWebConfig, MaxVersionAndCipherSuitesAreHonoured) {
    NEED_TOOLS();
    tls_serve s(t, std::string(server_tls) +
                       "  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n");
    ASSERT_NE(s.port, 0) << read_text(s.log);
    const std::string ca = " --cacert " + t.dir + "/ca.pem ";
    const auto ok = sh("curl -sS -o /dev/null -w %{http_code} --tlsv1.2" + ca + s.url());
    EXPECT_EQ(ok.out, "200") << ok.out;
    EXPECT_NE(sh("curl -sS -o /dev/null --tlsv1.3" + ca + s.url()).rc, 0);
    const auto other = sh("curl -sS -o /dev/null --ciphers ECDHE-ECDSA-AES128-GCM-SHA256 --tls-max 1.2" + ca + s.url());
    EXPECT_NE(other.rc, 0) << other.out;
}

TEST(ServeWebConfig, BasicAuthAnswers401UntilThePasswordIsRight) {
    NEED_TOOLS();
    const std::string hash = bcrypt("s3cret");
    ASSERT_EQ(hash.substr(0, 4), "$2b$");
    std::string y = bcrypt("other pass");
    y[2] = 'y';  // $2y$ is the same algorithm under htpasswd's prefix
    tls_serve s(t, std::string(server_tls) + "basic_auth_users:\n  prom: " + hash + "\n  alice: '" + y + "'\n");
    ASSERT_NE(s.port, 0) << read_text(s.log);
    const std::string curl = "curl -sS -D - -o /dev/null --cacert " + t.dir + "/ca.pem ";
    const auto none = sh(curl + s.url());
    EXPECT_NE(none.out.find("HTTP/1.1 401"), std::string::npos) << none.out;
    EXPECT_NE(none.out.find("WWW-Authenticate: Basic"), std::string::npos) << none.out;
    EXPECT_NE(sh(curl + "-u prom:wrong " + s.url()).out.find(" 401"), std::string::npos);
    EXPECT_NE(sh(curl + "-u nobody:s3cret " + s.url()).out.find(" 401"), std::string::npos);
    EXPECT_NE(sh(curl + "-u prom:s3cre " + s.url()).out.find(" 401"), std::string::npos);
    EXPECT_NE(sh(curl + "-u prom:s3cret " + s.url()).out.find("HTTP/1.1 200"), std::string::npos);
    EXPECT_NE(sh(curl + "-u prom:s3cret " + s.url()).out.find("HTTP/1.1 200"), std::string::npos);  // remembered
    EXPECT_NE(sh(curl + "-u \"alice:other pass\" " + s.url()).out.find("HTTP/1.1 200"), std::string::npos);
    EXPECT_NE(sh(curl + "-u alice:s3cret " + s.url()).out.find(" 401"), std::string::npos);
    // Basic authentication without TLS works as well (as exporter-toolkit's).
    tls_serve p(t, "basic_auth_users:\n  prom: " + hash + "\n");
    ASSERT_NE(p.port, 0) << read_text(p.log);
    EXPECT_NE(sh("curl -sS -D - -o /dev/null " + p.url("http")).out.find(" 401"), std::string::npos);
    EXPECT_NE(sh("curl -sS -D - -o /dev/null -u prom:s3cret " + p.url("http")).out.find(" 200"), std::string::npos);
}

std::string base64(const std::string& in) {
    static const char* const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (std::size_t i = 0; i < in.size(); i += 3) {
        unsigned n = static_cast<unsigned char>(in[i]) << 16;
        if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
        if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
        out += abc[(n >> 18) & 63];
        out += abc[(n >> 12) & 63];
        out += i + 1 < in.size() ? abc[(n >> 6) & 63] : '=';
        out += i + 2 < in.size() ? abc[n & 63] : '=';
    }
    return out;
}

// As users meet it: clients sending new wrong passwords for a user of an
// expensive hash (cost 13, about 0.5 s a bcrypt here) while Prometheus
// scrapes with the right ones. The scrapes are answered at once from the
// remembered outcome (the hashes run one at a time on their own thread, never
// on an HTTP worker and never under the lock of that look-up), and every
// guess still gets 401.
TEST(ServeWebConfig, ScrapesByKnownCredentialsStayFastWhileNewWrongPasswordsAreHashed) {
    NEED_TOOLS();
    const std::string hash = bcrypt("s3cret", "$2b$", 13);
    ASSERT_EQ(hash.substr(0, 7), "$2b$13$");
    tls_serve s(t, "basic_auth_users:\n  prom: " + hash + "\n");
    ASSERT_NE(s.port, 0) << read_text(s.log);
    const std::string good = "Authorization: Basic " + base64("prom:s3cret") + "\r\n";
    // The first scrape pays one bcrypt; the outcome is remembered.
    const http_answer first = http_get(s.port, "/metrics", 20s, "127.0.0.1", good);
    ASSERT_EQ(first.status, 200) << first.head;

    constexpr int bad_clients = 6;
    std::atomic<bool> stop{false};
    std::atomic<int> bad_sent{0}, bad_401{0}, bad_other{0};
    std::vector<std::thread> bad;
    bad.reserve(bad_clients);
    for (int k = 0; k < bad_clients; ++k)
        bad.emplace_back([&, k] {
            // Bounded: at most 40 guesses each, 30 s for an answer.
            for (int i = 0; i < 40 && !stop; ++i) {
                const std::string guess = "prom:guess-" + std::to_string(k) + "-" + std::to_string(i);
                ++bad_sent;
                const http_answer a =
                    http_get(s.port, "/metrics", 30s, "127.0.0.1", "Authorization: Basic " + base64(guess) + "\r\n");
                if (a.status == 401 && a.header("WWW-Authenticate") == "Basic")
                    ++bad_401;
                else
                    ++bad_other;
            }
        });
    std::this_thread::sleep_for(500ms);  // the guesses are being hashed
    double slowest = 0;
    int answered = 0;
    for (int i = 0; i < 12; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const http_answer r = http_get(s.port, "/metrics", 20s, "127.0.0.1", good);
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        slowest = std::max(slowest, took);
        if (r.status == 200 && r.body.find("proctimes_group_cpu_seconds_total") != std::string::npos) ++answered;
        EXPECT_LT(took, 1.0) << "scrape " << i << " by the right credentials took " << took << " s (status " << r.status
                             << ")";
        std::this_thread::sleep_for(250ms);
    }
    stop = true;
    for (auto& th : bad) th.join();
    std::cout << "[ measured ] " << answered << " of 12 scrapes answered, the slowest in " << slowest << " s; "
              << bad_401.load() << " of " << bad_sent.load() << " guesses answered 401\n";
    EXPECT_EQ(answered, 12);
    // Each client has had at least its first guess answered, and every
    // answer to a guess was a 401.
    EXPECT_GE(bad_401.load(), bad_clients);
    EXPECT_EQ(bad_other.load(), 0);

    // 16 new guesses at once: at most 8 wait for a hash, the others are
    // told at once to retry (503, Retry-After), and a scrape by the right
    // credentials is still answered at once.
    std::vector<int> burst(16, 0);
    std::vector<std::string> retry(16);
    std::vector<std::thread> at_once;
    at_once.reserve(burst.size());
    for (std::size_t k = 0; k < burst.size(); ++k)
        at_once.emplace_back([&, k] {
            // Up to 8 hashes queue ahead of the last of them: 4 s here, and
            // on a loaded machine four to six times that.
            const http_answer a =
                http_get(s.port, "/metrics", 90s, "127.0.0.1",
                         "Authorization: Basic " + base64("prom:burst-" + std::to_string(k)) + "\r\n");
            burst[k] = a.status;
            retry[k] = a.header("Retry-After");
        });
    std::this_thread::sleep_for(300ms);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(http_get(s.port, "/metrics", 20s, "127.0.0.1", good).status, 200);
    const double during_burst = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(during_burst, 1.0);
    for (auto& th : at_once) th.join();
    int refused = 0, busy = 0;
    std::string others;
    for (std::size_t k = 0; k < burst.size(); ++k) {
        if (burst[k] == 401)
            ++refused;
        else if (burst[k] == 503 && retry[k] == "1")
            ++busy;
        else
            others += " " + std::to_string(burst[k]) + (retry[k].empty() ? "" : " (Retry-After " + retry[k] + ")");
    }
    std::cout << "[ measured ] 16 guesses at once: " << refused << " answered 401 after a hash, " << busy
              << " 503 at once; a scrape meanwhile took " << during_burst << " s\n";
    EXPECT_EQ(others, "") << "guesses answered neither 401 nor 503 (0: no answer)";
    EXPECT_GE(busy, 1);
    EXPECT_GE(refused, 1);
    EXPECT_TRUE(s.proc.running());

    // SIGTERM while guesses wait for their hash: the waiting connections
    // are closed (the library must not be stopped with one suspended) and
    // the exporter exits 0 once the hash under way is done.
    std::vector<std::thread> waiting;
    waiting.reserve(4);
    std::atomic<int> unanswered_ok{0};
    for (int k = 0; k < 4; ++k)
        waiting.emplace_back([&, k] {
            const http_answer a = http_get(s.port, "/metrics", 20s, "127.0.0.1",
                                           "Authorization: Basic " + base64("prom:last-" + std::to_string(k)) + "\r\n");
            if (a.status == 0 || a.status == 401) ++unanswered_ok;
        });
    std::this_thread::sleep_for(300ms);
    const auto stop0 = std::chrono::steady_clock::now();
    const int st = s.proc.stop();
    const double stopping = std::chrono::duration<double>(std::chrono::steady_clock::now() - stop0).count();
    for (auto& th : waiting) th.join();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st << "\n" << read_text(s.log);
    EXPECT_LT(stopping, 4.0);
    EXPECT_EQ(unanswered_ok.load(), 4);
}

TEST(ServeWebConfig, RequireAndVerifyClientCertRefusesOtherClients) {
    NEED_TOOLS();
    tls_serve s(t,
                std::string(server_tls) + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n");
    ASSERT_NE(s.port, 0) << read_text(s.log);
    const std::string curl = "curl -sS -o /dev/null -w %{http_code} --cacert " + t.dir + "/ca.pem ";
    const auto good = sh(curl + "--cert " + t.dir + "/client.pem --key " + t.dir + "/client.key " + s.url());
    EXPECT_EQ(good.out, "200") << good.out;
    const auto none = sh(curl + s.url());
    EXPECT_NE(none.rc, 0) << none.out;
    EXPECT_EQ(none.out.find("200"), std::string::npos) << none.out;
    // TLS 1.2: the server refuses during the handshake (curl's 35, "SSL
    // connect error"); under TLS 1.3 the client has finished its part first.
    const auto none12 = sh(curl + "--tls-max 1.2 " + s.url());
    EXPECT_EQ(none12.rc, 35) << none12.out;
    const auto stranger = sh(curl + "--cert " + t.dir + "/other.pem --key " + t.dir + "/other.key " + s.url());
    EXPECT_NE(stranger.rc, 0) << stranger.out;
    EXPECT_EQ(stranger.out.find("200"), std::string::npos) << stranger.out;
    EXPECT_TRUE(s.proc.running());
}

TEST(ServeWebConfig, WhatCannotBeHonouredIsRefusedNamingTheKey) {
    NEED_TOOLS();
    const std::string bin = serve_bin(PROCTIMES_BIN);
    struct bad {
        std::string yaml, says;
    };
    const std::vector<bad> cases = {
        {"tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  cert_fiel: x\n",
         "tls_server_config.cert_fiel: unknown key"},
        {"tls_sever_config: {}\n", "tls_sever_config: unknown key"},
        {std::string(server_tls) + "  client_auth_type: RequireAndVerify\n", "client_auth_type: invalid"},
        {std::string(server_tls) + "  client_auth_type: RequireAndVerifyClientCert\n", "needs client_ca_file"},
        {std::string(server_tls) + "  min_version: TLS14\n", "min_version: unknown TLS version"},
        {std::string(server_tls) + "  min_version: TLS13\n  max_version: TLS12\n", "min_version is above"},
        {std::string(server_tls) +
             "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n",
         "would also allow TLS_ECDHE_"},
        {std::string(server_tls) + "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n", "unknown or insecure"},
        {std::string(server_tls) + "  client_allowed_sans: [a]\n", "client_allowed_sans: not supported"},
        {"tls_server_config:\n  cert_file: server.pem\n", "missing one of key or key_file"},
        {"tls_server_config:\n  cert_file: server.pem\n  key_file: other.key\n", "do not load"},
        {"tls_server_config:\n  cert_file: nothere.pem\n  key_file: server.key\n", "cert_file: cannot read"},
        {"basic_auth_users:\n  prom: plaintext\n", "basic_auth_users.prom: not a bcrypt hash"},
        {"http_server_config:\n  headers:\n    X-Powered-By: me\n", "X-Powered-By: header cannot be configured"},
        {"http_server_config:\n  headers:\n    X-Frame-Options: allow\n", "invalid value"},
        {"rate_limit:\n  interval: 1s\n  burst: 5\n", "rate_limit: not supported"},
        {"[1, 2]\n", "expected a mapping"},
    };
    for (const auto& c : cases) {
        t.write("bad.yml", c.yaml);
        const auto r = sh(bin + " serve --once --no-exit-records --web-config " + t.dir + "/bad.yml");
        EXPECT_EQ(r.rc, 2) << c.yaml << r.out;
        EXPECT_NE(r.out.find(c.says), std::string::npos) << c.yaml << "\n" << r.out;
    }
    // A FIFO is refused at once, never waited on.
    ASSERT_EQ(::mkfifo((t.dir + "/fifo").c_str(), 0600), 0);
    const auto f = sh(bin + " serve --once --no-exit-records -web.config.file=" + t.dir + "/fifo", 10);
    EXPECT_EQ(f.rc, 2) << f.out;
    EXPECT_NE(f.out.find("not a regular file"), std::string::npos) << f.out;
}
