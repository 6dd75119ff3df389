// SPDX-License-Identifier: MIT
// `proctimes serve`'s listening socket, port file and content negotiation,
// against the real program: a used port is refused, the resolver's reason is
// given, a planted symlink is never followed, and scrapes in the two formats
// share one collection.
#include <gtest/gtest.h>

#include <dirent.h>
#include <netdb.h>
#include <sys/stat.h>
#include <iostream>
#include <set>
#include <sstream>

#include "harness.hpp"

using namespace serve_test;
using namespace std::chrono_literals;

namespace {

double collections_in(const std::string& body) {
    const std::string name = "proctimes_scrape_collections_total ";
    const auto at = body.find("\n" + name);
    return at == std::string::npos ? -1 : std::stod(body.substr(at + 1 + name.size()));
}

struct scratch {
    std::string dir;
    explicit scratch(const char* tag) : dir(temp_dir(tag)) {}
    ~scratch() { std::system(("rm -rf '" + dir + "'").c_str()); }
};

// `serve` on a free loopback port, its port written to `port_file` (default:
// t.dir/port) and its output to t.dir/<log>; port is 0 when no port file came
// within 20 s (the log says why).
struct loopback_serve {
    program proc;
    int port = 0;
    std::string log;
    explicit loopback_serve(const scratch& t, const std::string& log_name = "serve.log", std::string port_file = "")
        : log(t.dir + "/" + log_name) {
        if (port_file.empty()) port_file = t.dir + "/port";
        proc = program({serve_bin(PROCTIMES_BIN), "serve", "--listen", "127.0.0.1:0", "--port-file", port_file,
                        "--no-exit-records"},
                       log);
        const std::string p = wait_for_file(port_file, 20s);
        if (!p.empty()) port = std::stoi(p);
    }
};

}  // namespace

TEST(ServeHttpListen, ASecondServerOnAUsedPortExitsInUse) {
    scratch t("inuse");
    const loopback_serve first(t, "first.log");
    ASSERT_NE(first.port, 0) << read_text(first.log);
    const int port = first.port;
    program second(
        {serve_bin(PROCTIMES_BIN), "serve", "--listen", "127.0.0.1:" + std::to_string(port), "--no-exit-records"},
        t.dir + "/second.log");
    const int st = second.wait_for(15s);
    const std::string log = read_text(t.dir + "/second.log");
    ASSERT_NE(st, -1) << "a second exporter is serving the same port: " << log;
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << "wait status " << st;
    EXPECT_NE(log.find("in use"), std::string::npos) << log;
    // The first one still has the port to itself.
    EXPECT_EQ(http_get(port, "/metrics", 20s).status, 200);
}

TEST(ServeHttpListen, AnUnresolvableHostGivesTheResolversReason) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo("300.1.1.1", "0", &hints, &res);
    if (rc == 0) {
        ::freeaddrinfo(res);
        GTEST_SKIP() << "this resolver gives 300.1.1.1 an address";
    }
    const std::string reason = ::gai_strerror(rc);
    scratch t("gai");
    program serve({serve_bin(PROCTIMES_BIN), "serve", "--listen", "300.1.1.1:0", "--no-exit-records"},
                  t.dir + "/serve.log");
    const int st = serve.wait_for(30s, true);
    const std::string log = read_text(t.dir + "/serve.log");
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << "wait status " << st << ": " << log;
    EXPECT_NE(log.find("300.1.1.1"), std::string::npos) << log;
    EXPECT_NE(log.find(reason), std::string::npos) << "expected the resolver's \"" << reason << "\": " << log;
    EXPECT_EQ(log.find("No such file or directory"), std::string::npos) << log;
}

TEST(ServeHttpListen, PortFileNeverFollowsAPlantedSymlink) {
    scratch t("portfile");
    const std::string victim = t.dir + "/victim", file = t.dir + "/port";
    { std::ofstream(victim) << "precious\n"; }
    ASSERT_EQ(::symlink(victim.c_str(), (file + ".tmp").c_str()), 0);
    const loopback_serve serve(t, "serve.log", file);
    ASSERT_NE(serve.port, 0) << read_text(serve.log);
    EXPECT_EQ(read_text(victim), "precious\n") << "the port was written through the planted link";
    struct stat st {};
    ASSERT_EQ(::lstat(file.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << "the port file is not a regular file of its own";
    EXPECT_EQ(http_get(serve.port, "/metrics", 20s).status, 200);
    // Nothing else is left beside it: the planted link, the victim, the log and the file.
    int entries = 0;
    if (DIR* d = ::opendir(t.dir.c_str())) {
        while (dirent* e = ::readdir(d))
            if (e->d_name[0] != '.') ++entries;
        ::closedir(d);
    }
    EXPECT_EQ(entries, 4);
}

TEST(ServeHttpListen, ScrapesAlternatingFormatsShareACollection) {
    scratch t("formats");
    const loopback_serve serve(t);
    ASSERT_NE(serve.port, 0) << read_text(serve.log);
    const int port = serve.port;
    const std::string om = "Accept: application/openmetrics-text; version=1.0.0\r\n";
    // Pairs of scrapes, text then OpenMetrics, the second sent as soon as
    // the first is answered: when it was answered within 90 ms of the
    // first's answer, it reached the server less than 100 ms after the
    // first's collection ended (the window runs from there, however long
    // the collection took), and both must show the same collection.
    int quick = 0, shared = 0;
    for (int i = 0; i < 40; ++i) {
        const http_answer a = http_get(port, "/metrics", 20s);
        const auto answered = std::chrono::steady_clock::now();
        const http_answer b = http_get(port, "/metrics", 20s, "127.0.0.1", om);
        const auto second = std::chrono::steady_clock::now() - answered;
        ASSERT_EQ(a.status, 200);
        ASSERT_EQ(b.status, 200);
        ASSERT_NE(b.body.find("# EOF"), std::string::npos) << "not OpenMetrics";
        ASSERT_EQ(a.body.find("# EOF"), std::string::npos) << "not the text format";
        // Whatever this pair took, the next one starts a new collection: a
        // pair's first scrape must not reuse the collection of the last one.
        std::this_thread::sleep_for(150ms);
        if (second >= 90ms) continue;
        ++quick;
        if (collections_in(a.body) == collections_in(b.body)) ++shared;
    }
    std::cout << quick << " pairs answered within 90 ms, " << shared << " of them shared one collection\n";
    ASSERT_GE(quick, 5) << "too few quick pairs to judge on this machine";
    EXPECT_EQ(shared, quick);
}

TEST(ServeHttpListen, AcceptHeadersAreNegotiatedByTypeAndQ) {
    scratch t("accept");
    const loopback_serve serve(t);
    ASSERT_NE(serve.port, 0) << read_text(serve.log);
    const int port = serve.port;
    const auto type_for = [port](const std::string& accept) {
        return http_get(port, "/metrics", 20s, "127.0.0.1", "Accept: " + accept + "\r\n").header("Content-Type");
    };
    EXPECT_EQ(type_for("application/openmetrics-text;q=0, text/plain;q=0.5").rfind("text/plain", 0), 0u);
    EXPECT_EQ(type_for("application/openmetrics-text;q=0").rfind("text/plain", 0), 0u);
    EXPECT_EQ(type_for("Application/OpenMetrics-Text").rfind("application/openmetrics-text", 0), 0u);
    EXPECT_EQ(type_for("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
                  .rfind("application/openmetrics-text", 0),
              0u);
    EXPECT_EQ(type_for("text/html,*/*;q=0.8").rfind("text/plain", 0), 0u);
    // gzip when asked for (Prometheus asks), the same bytes otherwise.
    const http_answer gz = http_get(port, "/metrics", 20s, "127.0.0.1", "Accept-Encoding: gzip\r\n");
    EXPECT_EQ(gz.status, 200);
    EXPECT_EQ(gz.header("Content-Encoding"), "gzip");
    ASSERT_GE(gz.body.size(), 2u);
    EXPECT_EQ(static_cast<unsigned char>(gz.body[0]), 0x1f);
    EXPECT_EQ(static_cast<unsigned char>(gz.body[1]), 0x8b);
    EXPECT_EQ(http_get(port, "/metrics", 20s, "127.0.0.1", "Accept-Encoding: gzip;q=0\r\n").header("Content-Encoding"),
              "");
    // The other endpoints.
    EXPECT_EQ(http_get(port, "/", 20s).status, 200);
    EXPECT_EQ(http_get(port, "/nope", 20s).status, 404);
    const http_answer post = http_exchange(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 20s);
    EXPECT_EQ(post.status, 405);
    EXPECT_EQ(post.header("Allow"), "GET, HEAD");
}

// process-exporter's -web.listen-address and -web.telemetry-path: the
// exposition at the path given, nowhere else; the index page links to it.
TEST(ServeHttpListen, ProcessExporterListenAndTelemetryPathFlags) {
    scratch t("goflags");
    const std::string file = t.dir + "/port";
    program serve({serve_bin(PROCTIMES_BIN), "serve", "-web.listen-address", "127.0.0.1:0",
                   "--web.telemetry-path=/custom/metrics", "--port-file", file, "--no-exit-records"},
                  t.dir + "/serve.log");
    const std::string p = wait_for_file(file, 20s);
    ASSERT_FALSE(p.empty()) << read_text(t.dir + "/serve.log");
    const auto got = http_get(std::stoi(p), "/custom/metrics", 20s);
    EXPECT_EQ(got.status, 200);
    EXPECT_NE(got.body.find("proctimes_group_cpu_seconds_total{"), std::string::npos);
    EXPECT_EQ(http_get(std::stoi(p), "/metrics", 20s).status, 404);
    const auto index = http_get(std::stoi(p), "/", 20s);
    EXPECT_EQ(index.status, 200);
    EXPECT_NE(index.body.find("href=\"/custom/metrics\""), std::string::npos) << index.body;
    EXPECT_NE(read_text(t.dir + "/serve.log").find("/custom/metrics"), std::string::npos);
}

// docs/SERVE.md lists every value proctimes_exporter_source's labels take:
// the snapshot source (eBPF or /proc, with or without the thread walk) and
// the exit records' (eBPF, taskstats, none), for each setting that changes
// them. A value served that the row of the table does not name fails.
TEST(ServeHttpListen, EveryExporterSourceValueServedIsDocumented) {
    std::string row;
    {
        std::istringstream in(read_text(PROCTIMES_SERVE_DOC));
        for (std::string line; std::getline(in, line);)
            if (line.rfind("| `proctimes_exporter_source` |", 0) == 0) row = line;
    }
    ASSERT_FALSE(row.empty()) << "no proctimes_exporter_source row in " << PROCTIMES_SERVE_DOC;
    // The label column: the third cell ("\|" inside a cell is not a separator).
    std::vector<std::string> cells;
    for (std::size_t at = 0, next; at != std::string::npos; at = next) {
        next = row.find(" | ", at + 1);
        cells.push_back(row.substr(at, next == std::string::npos ? std::string::npos : next - at));
    }
    ASSERT_GE(cells.size(), 4u) << row;
    const std::string& labels = cells[2];
    std::set<std::string> seen;
    for (const char* flags : {"", "--threads", "--no-exit-records", "--namedprocess --threads"}) {
        const std::string cmd = "timeout -s KILL 60 " + serve_bin(PROCTIMES_BIN) + " serve --once " + flags + " 2>&1";
        FILE* p = ::popen(cmd.c_str(), "r");
        ASSERT_NE(p, nullptr);
        std::string out;
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
        ::pclose(p);
        const std::string name = "\nproctimes_exporter_source{";
        const auto at = out.find(name);
        ASSERT_NE(at, std::string::npos) << flags << ": " << out.substr(0, 500);
        const std::string series = out.substr(at + name.size(), out.find('}', at) - at - name.size());
        for (const char* label : {"snapshot", "exits"}) {
            const std::string key = std::string(label) + "=\"";
            const auto v = series.find(key);
            ASSERT_NE(v, std::string::npos) << series;
            const std::string value = series.substr(v + key.size(), series.find('"', v + key.size()) - v - key.size());
            seen.insert(std::string(label) + "=" + value);
            EXPECT_NE(labels.find("`" + value + "`"), std::string::npos)
                << label << "=\"" << value << "\" (serve --once " << flags
                << ") is not in the row's labels: " << labels;
        }
    }
    std::cout << "[ measured ] served:";
    for (const auto& s : seen) std::cout << " " << s;
    std::cout << "\n";
    // At least: a snapshot source with and without the thread walk, and exits="none".
    EXPECT_GE(seen.size(), 3u);
}
