// SPDX-License-Identifier: MIT
// `proctimes serve` scraped by Debian's real Prometheus (1 s interval, loopback,
// temporary config and storage), asked through its HTTP API:
//   (a) a group whose one process burns a CPU: rate() matches the CPU it used;
//   (b) 200 processes of ~20 ms CPU between scrapes (fewer if a loaded machine
//       cannot run them in 30 s): increase() within ±10 % of
//       their CPU (root: exit records), process-exporter's figure printed;
//   (c) resets() of every CPU counter is 0 over the run.
// The suite runs as one process (one Prometheus), in declaration order.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "burn_clock.hpp"
#include "harness.hpp"

using namespace serve_test;
using namespace std::chrono_literals;

namespace {

struct world {
    std::string dir;
    int serve_port = 0, pe_port = 0, prom_port = 0;
    program serve, pe, prom;
    bool have_pe = false;
    double started = 0;
};
world* w = nullptr;

// One instant query; the values of its vector result by the given label (or "").
std::optional<nlohmann::json> query(const std::string& q, std::optional<double> at = std::nullopt) {
    httplib::Client c("127.0.0.1", w->prom_port);
    c.set_read_timeout(10, 0);
    httplib::Params p{{"query", q}};
    if (at) p.emplace("time", std::to_string(*at));
    auto r = c.Post("/api/v1/query", p);
    if (!r || r->status != 200) return std::nullopt;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || j["status"] != "success") return std::nullopt;
    return j["data"];
}

std::optional<double> scalar(const std::string& q, std::optional<double> at = std::nullopt) {
    auto d = query(q, at);
    if (!d || (*d)["result"].empty()) return std::nullopt;
    return std::stod((*d)["result"][0]["value"][1].get<std::string>());
}

// Timestamps of the raw samples of a selector over the last `range`.
std::vector<double> sample_times(const std::string& sel, const std::string& range) {
    std::vector<double> ts;
    auto d = query(sel + "[" + range + "]");
    if (!d || (*d)["result"].empty()) return ts;
    for (const auto& v : (*d)["result"][0]["values"]) ts.push_back(v[0].get<double>());
    return ts;
}

bool wait_up(const std::string& job, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (auto v = scalar("up{job=\"" + job + "\"}"); v && *v == 1) return true;
        std::this_thread::sleep_for(500ms);
    }
    return false;
}

class Prometheus : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (::access("/usr/bin/prometheus", X_OK) != 0) return;
        w = new world;
        w->dir = temp_dir("prom");
        w->serve_port = free_port();
        w->serve = program({PROCTIMES_BIN, "serve", "--listen", "127.0.0.1:" + std::to_string(w->serve_port), "--top",
                            "5", "--namedprocess"},
                           w->dir + "/serve.log");
        w->have_pe = ::geteuid() == 0 && ::access("/usr/bin/prometheus-process-exporter", X_OK) == 0;
        std::string pe_job;
        if (w->have_pe) {
            w->pe_port = free_port();
            w->pe = program({"/usr/bin/prometheus-process-exporter", "-web.listen-address",
                             "127.0.0.1:" + std::to_string(w->pe_port), "-procnames", "pt_short,pt_burn"},
                            w->dir + "/pe.log");
            pe_job =
                "  - job_name: pe\n    static_configs:\n      - targets: ['127.0.0.1:" + std::to_string(w->pe_port) +
                "']\n";
        }
        w->prom_port = free_port();
        std::ofstream cfg(w->dir + "/prometheus.yml");
        cfg << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
            << "scrape_configs:\n  - job_name: proctimes\n    static_configs:\n      - targets: ['127.0.0.1:"
            << w->serve_port << "']\n"
            << pe_job;
        cfg.close();
        w->prom = program({"/usr/bin/prometheus", "--config.file=" + w->dir + "/prometheus.yml",
                           "--storage.tsdb.path=" + w->dir + "/data",
                           "--web.listen-address=127.0.0.1:" + std::to_string(w->prom_port), "--log.level=warn"},
                          w->dir + "/prometheus.log");
        w->started = now_seconds();
    }
    static void TearDownTestSuite() {
        if (!w) return;
        w->prom.stop();
        w->pe.stop();
        const int st = w->serve.stop();
        // SIGTERM ends the exporter cleanly: exit status 0.
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "serve wait status " << st;
        remove_unless_failed(w->dir, ::testing::UnitTest::GetInstance()->failed_test_count() > 0);
        delete w;
        w = nullptr;
    }
    void SetUp() override {
        if (!w) GTEST_SKIP() << "/usr/bin/prometheus is absent (Debian package prometheus; scripts/bootstrap.sh)";
        ASSERT_TRUE(wait_up("proctimes", 40s)) << "Prometheus never scraped proctimes serve (" << w->dir << ")";
    }
};

TEST_F(Prometheus, BurnerGroupRateMatchesItsCpu) {
    const std::string log = w->dir + "/burn.log";
    program burner({PROCTIMES_SERVE_LOAD, "burn", "14", log}, w->dir + "/burn.out");
    std::this_thread::sleep_for(13s);
    const double t = now_seconds();
    const std::string sel = "proctimes_group_cpu_seconds_total{group=\"pt_burn\"}";
    auto rate = scalar("sum(rate(" + sel + "[10s]))", t);
    ASSERT_TRUE(rate) << "no rate for group pt_burn";
    // rate() is the slope between the first and the last sample in the
    // window (extrapolated to its edges at that slope): the truth is what the
    // burner used between those two scrapes, not over the whole 10 s, as its
    // share of a loaded machine changes from second to second.
    auto raw = query(sel + "[10s]", t);
    ASSERT_TRUE(raw && !(*raw)["result"].empty()) << "no samples for group pt_burn";
    const auto& values = (*raw)["result"][0]["values"];
    ASSERT_GE(values.size(), 2u) << *raw;
    const double first = values.front()[0].get<double>(), last = values.back()[0].get<double>();
    // What the burner itself says it used then (its CPU clock, every 0.1 s).
    const burn_clock clock(log);
    ASSERT_GT(clock.size(), 50u);
    ASSERT_LE(clock.first_time(), first) << "the window began before the burner";
    const double truth = (clock.at_least(last) - clock.at_least(first)) / (last - first);
    // The rate lies between what the burner used over the two scrapes'
    // narrowest start-to-read span and over their widest one.
    auto durations = query("scrape_duration_seconds{job=\"proctimes\"}[10s]", t);
    ASSERT_TRUE(durations && !(*durations)["result"].empty()) << "no scrape durations";
    double d_first = 0, d_last = 0;
    for (const auto& v : (*durations)["result"][0]["values"]) {
        if (v[0].get<double>() == first) d_first = std::stod(v[1].get<std::string>());
        if (v[0].get<double>() == last) d_last = std::stod(v[1].get<std::string>());
    }
    const auto [grew_lo, grew_hi] = clock.growth(first, d_first, last, d_last);
    const double lo = grew_lo / (last - first), hi = grew_hi / (last - first);
    std::cout << "rate(pt_burn[10s]) = " << *rate << " CPU; the burner's own clock says " << truth
              << " CPU between the window's first and last scrape (" << lo << " to " << hi
              << " with the scrapes' durations, " << d_first << " and " << d_last << " s; 1.0 on an idle machine)\n";
    EXPECT_GE(*rate, lo - 0.05 * truth);
    EXPECT_LE(*rate, hi + 0.05 * truth);
    if (truth > 0.97) EXPECT_NEAR(*rate, 1.0, 0.05);
}

TEST_F(Prometheus, ShortProcessesBetweenScrapesAreCounted) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs exit records (CAP_NET_ADMIN): processes that live between two scrapes are seen only "
                        "through them";
    const std::string out = w->dir + "/short.txt";
    const double t0 = now_seconds();
    // At most 30 s of spawning: on a machine loaded by others, fewer than 200
    // may get their 20 ms; the comparison holds for however many ran.
    program shorts({PROCTIMES_SERVE_LOAD, "short", "200", "20", out, "30"}, w->dir + "/short.out");
    const std::string text = wait_for_file(out, 60s);
    ASSERT_FALSE(text.empty()) << "the short processes did not finish";
    ASSERT_NE(shorts.wait_for(10s), -1);
    double children = 0, self = 0, done = 0;
    int count = 0;
    std::istringstream(text) >> children >> self >> done >> count;
    ASSERT_GE(count, 1);
    std::this_thread::sleep_for(3s);  // a few scrapes after the last one
    // Evaluate at the last scrape's own timestamp, with a window that starts
    // before the group's first sample: no extrapolation at either end.
    const std::string sel = "proctimes_group_cpu_seconds_total{group=\"pt_short\",mode=\"user\"}";
    const auto ts = sample_times(sel, "2m");
    ASSERT_FALSE(ts.empty());
    const double t = ts.back();
    const int window = static_cast<int>(t - t0) + 10;
    auto inc = scalar(
        "sum(increase(proctimes_group_cpu_seconds_total{group=\"pt_short\"}[" + std::to_string(window) + "s]))", t);
    ASSERT_TRUE(inc);
    const double used = children + self;
    std::cout << count << " short processes used " << used << " s CPU (rusage: children " << children << " + parent "
              << self << "); proctimes increase() = " << *inc << " s (" << 100 * *inc / used << " %)\n";
    if (w->have_pe) {
        auto pe = scalar("sum(increase(namedprocess_namegroup_cpu_seconds_total{groupname=\"pt_short\",job=\"pe\"}[" +
                             std::to_string(window) + "s]))",
                         t);
        std::cout << "prometheus-process-exporter increase() = " << (pe ? *pe : 0.0) << " s ("
                  << 100 * (pe ? *pe : 0.0) / used << " %)\n";
    }
    EXPECT_NEAR(*inc, used, 0.10 * used);
    auto ended = scalar("max(proctimes_group_ended_processes_total{group=\"pt_short\"})", t);
    ASSERT_TRUE(ended);
    std::cout << "ended processes counted: " << *ended << " of " << count << "\n";
    // A child never seen alive whose exit record the kernel could not queue
    // (a full netlink socket under load) is not known to have existed: at
    // most 1 % of them here. Their CPU is what the bound above checks.
    EXPECT_GE(*ended, 0.99 * static_cast<double>(count));
}

TEST_F(Prometheus, NoCpuCounterEverReset) {
    const int window = static_cast<int>(now_seconds() - w->started) + 5;
    const double t = now_seconds();
    // resets() drops the metric's name, and two families can have series
    // whose other labels are the same (proctimes_exporter_cpu_seconds_total
    // and proctimes_ended_unattributed_cpu_seconds_total, each by mode, once
    // some CPU is unattributed): one family at a time.
    auto names = query("count by (__name__) ({__name__=~\"proctimes_.*cpu_seconds_total\"})", t);
    ASSERT_TRUE(names && !(*names)["result"].empty()) << "no CPU counter";
    for (const auto& n : (*names)["result"]) {
        const std::string name = n["metric"]["__name__"].get<std::string>();
        auto d = query("resets(" + name + "[" + std::to_string(window) + "s]) > 0", t);
        ASSERT_TRUE(d) << "resets() of " << name;
        EXPECT_TRUE((*d)["result"].empty()) << name << " went backwards: " << (*d)["result"].dump();
    }
    auto n = scalar(
        "count(count_over_time({__name__=~\"proctimes_.*cpu_seconds_total\"}[" + std::to_string(window) + "s]))", t);
    ASSERT_TRUE(n);
    std::cout << *n << " CPU counter series checked over " << window << " s\n";
    EXPECT_GT(*n, 10.0);
}

}  // namespace
