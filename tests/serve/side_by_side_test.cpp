// SPDX-License-Identifier: MIT
// Debian's prometheus-process-exporter and `proctimes serve`, started with the
// same flags and config file, scraped side by side by one real Prometheus
// (3 s interval: process-exporter needs more than 1 s per scrape on a loaded machine; loopback), on one workload:
//   - a CPU burner (argv[0] `sbs-burn`, exe serve_load, comm `pt_burn`);
//   - a long-lived process of 7 threads (`pt_threads`, its main thread busy
//     a fifth of the time) whose argv[0] ends in `postgres` (the README
//     example's exe rule names it), and another of 3 whose argv[0] is
//     `sbs-renamed`; each is executed through a symlink named as its comm;
//   - a churning parent (`pt_short`) whose children each use ~20 ms of CPU
//     and end between scrapes; the truth is its wait4 rusage;
//   - the kernel's threads (the mix names kthreadd, and with -children every
//     kernel thread joins its group);
//   - a shell loop (`sh -c '...sbs-loop...'`) that starts `sleep` over and over,
//     and a long-lived bash;
//   - `sleep` started through a symlink (comm `sbs-gone`) that ends 9 s into
//     the workload: a group both exporters saw, with no member when the
//     expressions are asked (the published alert `num_procs == 0` has data on
//     both, not only when a scrape happened to fall between two of the loop's
//     sleeps).
// One case per config: process-exporter's README example, Debian's all.yaml,
// and a comm/exe/cmdline mix with named captures. Each asserts, through
// Prometheus' HTTP API: the same group names (the rest of the machine's groups: shown where they differ); for the
// workload's long-lived groups the same num_procs and num_threads and CPU rates within 10 % (the burner's, whose share
// of a loaded machine swings between the two exporters' scrapes: each exporter's counter against the burner's own CPU
// clock); for the groups the rest of
// the machine shares (every bash, every sh), a CPU rate on serve no lower than process-exporter's (serve adds the
// members that ended between scrapes, process-exporter loses them); for the churning group, its CPU counter's last
// value within 10 % of the truth. Then every expression of data/pe_queries.txt that returns data on process-exporter
// must return data on serve. The suite runs as one process (one Prometheus, six exporters), in order.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "burn_clock.hpp"
#include "harness.hpp"

using namespace serve_test;
using namespace std::chrono_literals;

namespace {

const char* const kCases[] = {"readme", "all", "mix"};

struct world {
    std::string dir;
    int prom_port = 0;
    std::map<std::string, int> port;  // job -> port
    std::vector<program> exporters, load;
    program prom;
    double t0 = 0;
    std::string churn_out;
};
world* w = nullptr;

std::optional<nlohmann::json> query(const std::string& q, double at) {
    httplib::Client c("127.0.0.1", w->prom_port);
    c.set_read_timeout(10, 0);
    auto r = c.Post("/api/v1/query", httplib::Params{{"query", q}, {"time", std::to_string(at)}});
    if (!r || r->status != 200) return std::nullopt;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || j["status"] != "success") return std::nullopt;
    return j["data"];
}

// A vector result as labels (sorted "k=v,..." without __name__ and job) -> value.
std::map<std::string, double> series(const std::string& q, double at) {
    std::map<std::string, double> out;
    const auto d = query(q, at);
    if (!d) return out;
    if ((*d)["resultType"] == "scalar") {
        out[""] = std::stod((*d)["result"][1].get<std::string>());
        return out;
    }
    for (const auto& s : (*d)["result"]) {
        std::string key;
        for (const auto& [k, v] : s["metric"].items())
            if (k != "__name__" && k != "job" && k != "instance") key += k + "=" + v.get<std::string>() + ",";
        out[key] = std::stod(s["value"][1].get<std::string>());
    }
    return out;
}

std::map<std::string, double> by_group(const std::string& q, double at) {
    std::map<std::string, double> out;
    for (const auto& [k, v] : series(q, at)) {
        const auto g = k.find("groupname=");
        if (g == std::string::npos) continue;
        out[k.substr(g + 10, k.find(',', g) - g - 10)] += v;
    }
    return out;
}

std::string job(const std::string& c, bool serve) { return (serve ? "serve-" : "pe-") + c; }

std::string sel(const std::string& c, bool serve, const std::string& more = "") {
    return "{job=\"" + job(c, serve) + "\"" + (more.empty() ? "" : "," + more) + "}";
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class SideBySide : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (::access("/usr/bin/prometheus", X_OK) != 0 || ::access("/usr/bin/prometheus-process-exporter", X_OK) != 0 ||
            ::access("/usr/share/doc/prometheus-process-exporter/examples/all.yaml", R_OK) != 0)
            return;
        w = new world;
        w->dir = temp_dir("sbs");
        const std::string d = w->dir;
        // The README's example config; Debian's all.yaml as installed; a mix.
        write(d + "/readme.yml",
              "process_names:\n  - comm:\n    - bash\n  - exe:\n    - postgres\n    - /usr/local/bin/prometheus\n"
              "  - name: \"{{.ExeFull}}:{{.Matches.Cfgfile}}\"\n    exe:\n    - /usr/local/bin/process-exporter\n"
              "    cmdline:\n    - -config.path\\s+(?P<Cfgfile>\\S+)\n");
        write(d + "/all.yml", read_text("/usr/share/doc/prometheus-process-exporter/examples/all.yaml"));
        write(d + "/mix.yml",
              "process_names:\n"
              "  - name: \"burner-{{.Comm}}\"\n    exe: [sbs-burn]\n"
              "  - name: \"{{.ExeBase}}\"\n    comm: [pt_threads]\n"
              "  - name: \"churn:{{.Matches.n}}\"\n    cmdline: ['short (?P<n>\\d+) ']\n"
              "  - name: \"loop-{{.Comm}}\"\n    comm: [sh]\n    cmdline: ['sbs-loop']\n"
              "  - name: \"{{.Comm}}\"\n    comm: [bash]\n"
              "  - name: \"kernel-{{.Comm}}\"\n    comm: [kthreadd]\n");
        std::string scrape;
        for (const char* c : kCases) {
            for (const bool serve : {false, true}) {
                const int port = free_port();
                const std::string j = job(c, serve);
                w->port[j] = port;
                // The same flags for both, process-exporter's own: the binary
                // replaced, nothing else (serve takes process-exporter's
                // families and defaults with its config).
                std::vector<std::string> argv{serve ? std::string(PROCTIMES_BIN)
                                                    : "/usr/bin/prometheus-process-exporter"};
                if (serve) argv.emplace_back("serve");
                argv.insert(argv.end(), {"-web.listen-address", "127.0.0.1:" + std::to_string(port), "-config.path",
                                         d + "/" + c + ".yml"});
                w->exporters.emplace_back(argv, std::string(d).append("/").append(j).append(".log"));
                scrape += "  - job_name: ";
                scrape += j;
                scrape += "\n    static_configs:\n      - targets: ['127.0.0.1:";
                scrape += std::to_string(port);
                scrape += "']\n";
            }
        }
        w->prom_port = free_port();
        write(d + "/prometheus.yml",
              "global:\n  scrape_interval: 3s\n  scrape_timeout: 3s\nscrape_configs:\n" + scrape);
        w->prom = program(
            {"/usr/bin/prometheus", "--config.file=" + d + "/prometheus.yml", "--storage.tsdb.path=" + d + "/data",
             "--web.listen-address=127.0.0.1:" + std::to_string(w->prom_port), "--log.level=warn"},
            d + "/prometheus.log");
        // Every exporter scraped before the workload starts.
        const auto until = std::chrono::steady_clock::now() + 90s;
        while (std::chrono::steady_clock::now() < until) {
            const auto up = series("count(up == 1)", now_seconds());
            if (up.count("") && up.at("") == static_cast<double>(w->port.size())) break;
            std::this_thread::sleep_for(500ms);
        }
        w->t0 = now_seconds();
        // The workload. Each program that renames itself is executed through
        // a symlink named as it renames itself (the comm is the executed
        // file's base name), while argv[0] keeps the name exe rules match: a
        // process is named once, at first sight, on both exporters, and one
        // first seen between its exec and its prctl would be in the group of
        // the name it had for that millisecond (it was, once).
        const std::string load = PROCTIMES_SERVE_LOAD;
        for (const char* comm : {"pt_burn", "pt_threads", "pt_short"})
            ::symlink(load.c_str(), (d + "/" + comm).c_str());
        w->load.emplace_back(std::vector<std::string>{d + "/sbs-burn", "burn", "150", d + "/burn.log"}, d + "/burn.out",
                             d + "/pt_burn");
        w->load.emplace_back(std::vector<std::string>{d + "/postgres", "threads", "6", "150", "0.2"},
                             d + "/threads.out", d + "/pt_threads");
        w->load.emplace_back(std::vector<std::string>{"sbs-renamed", "threads", "2", "150"}, d + "/renamed.out",
                             d + "/pt_threads");
        w->churn_out = d + "/churn.txt";
        w->load.emplace_back(std::vector<std::string>{load, "short", "2000", "20", w->churn_out, "30"},
                             d + "/churn.out", d + "/pt_short");
        w->load.emplace_back(std::vector<std::string>{"/bin/sh", "-c", "while :; do sleep 0.3; done; echo sbs-loop"},
                             d + "/loop.out");
        w->load.emplace_back(std::vector<std::string>{"/bin/bash", "-c", "while :; do sleep 1; done; : sbs-bash"},
                             d + "/bash.out");
        ::symlink("/bin/sleep", (d + "/sbs-gone").c_str());
        w->load.emplace_back(std::vector<std::string>{d + "/sbs-gone", "9"}, d + "/gone.out");
        // Reaped as it ends: a zombie would still be a member on both.
        if (w->load.back().wait_for(30s) != 0) std::cout << "sbs-gone did not end with status 0\n";
        // The churn writes its truth after 2.5 + 30 s; then a few more scrapes.
        wait_for_file(w->churn_out, 90s);
        std::this_thread::sleep_for(4s);
    }
    static void TearDownTestSuite() {
        if (!w) return;
        w->prom.stop();
        w->load.clear();
        w->exporters.clear();
        remove_unless_failed(w->dir, ::testing::UnitTest::GetInstance()->failed_test_count() > 0);
        delete w;
        w = nullptr;
    }
    void SetUp() override {
        if (!w) GTEST_SKIP() << "needs /usr/bin/prometheus and Debian's prometheus-process-exporter";
        if (::geteuid() != 0) GTEST_SKIP() << "needs root: exit records, and other users' exe and cmdline";
    }
    // After a failure: how each exporter's scrapes went over the workload
    // (a failed or slow scrape leaves a gap that rate() and == 0 see).
    void TearDown() override {
        if (!w || !HasFailure()) return;
        const double t = now_seconds();
        const std::string span = "[" + std::to_string(static_cast<int>(t - w->t0) + 5) + "s]";
        for (const auto& [j, port] : w->port) {
            std::cout << j << ":";
            for (const char* q : {"count_over_time(up", "avg_over_time(up", "max_over_time(scrape_duration_seconds"}) {
                std::string e = q;
                e.append("{job=\"").append(j).append("\"}").append(span).append(")");
                const auto v = series(e, t);
                std::cout << " " << q << span << ") " << (v.empty() ? -1 : v.begin()->second);
            }
            std::cout << "\n";
        }
    }

    // The burner's group on one exporter: its counter's growth between the
    // first and the last scrape of the last 30 s, against what the burner's
    // CPU clock says it used between those reads (burn_clock.hpp). Exact
    // but for process-exporter's ticks: it reads user and system time each
    // truncated to 10 ms.
    static void against_burn_clock(const std::string& c, bool serve, const std::string& g, double t) {
        const burn_clock clock(w->dir + "/burn.log");
        ASSERT_GT(clock.size(), 50U) << "the burner's log";
        const auto samples =
            query("namedprocess_namegroup_cpu_seconds_total" + sel(c, serve, "groupname=\"" + g + "\"") + "[30s]", t);
        const auto durations = query("scrape_duration_seconds{job=\"" + job(c, serve) + "\"}[30s]", t);
        ASSERT_TRUE(samples && durations) << c << ": no answer from Prometheus";
        std::map<double, double> cpu, took;  // scrape timestamp -> the group's CPU (every mode), the scrape's duration
        for (const auto& s : (*samples)["result"])
            for (const auto& v : s["values"]) cpu[v[0].get<double>()] += std::stod(v[1].get<std::string>());
        for (const auto& s : (*durations)["result"])
            for (const auto& v : s["values"]) took[v[0].get<double>()] = std::stod(v[1].get<std::string>());
        ASSERT_GE(cpu.size(), 2U) << job(c, serve) << ": fewer than two samples of " << g << " in 30 s";
        const auto& [a, va] = *cpu.begin();
        const auto& [b, vb] = *cpu.rbegin();
        ASSERT_GE(a, clock.first_time()) << "the window began before the burner";
        ASSERT_TRUE(took.count(a) && took.count(b)) << job(c, serve) << ": no scrape duration at a sample";
        const auto [lo, hi] = clock.growth(a, took.at(a), b, took.at(b));
        std::cout << "[ " << c << " ] " << job(c, serve) << ": " << g << " grew " << vb - va << " s in " << b - a
                  << " s of scrapes; its clock says " << lo << " to " << hi << " s (scrapes of " << took.at(a)
                  << " and " << took.at(b) << " s)\n";
        EXPECT_GE(vb - va, lo - 0.02) << job(c, serve) << ": CPU of " << g;
        EXPECT_LE(vb - va, hi + 0.02) << job(c, serve) << ": CPU of " << g;
    }

    // One case: the group names, then the workload's groups (`own`: every
    // member is the test's; `burner` among them, or empty) and the groups the
    // machine shares (`shared`).
    void compare(const std::string& c, const std::set<std::string>& own, const std::string& burner,
                 const std::set<std::string>& shared, const std::string& churn_group) {
        const double t = now_seconds() - 1;
        // A group with a member at every scrape of the last 30 s on one
        // exporter is known to the other (a series at t, 0 included): the
        // names agree. Equal membership at every instant is not asked of
        // groups the test does not own: the two exporters scrape at different
        // moments (process-exporter's `sleep` group, two loops' sleeps,
        // read 0 to 2 where serve's read 2).
        const auto stable = [&](bool serve) {
            return by_group("min_over_time(namedprocess_namegroup_num_procs" + sel(c, serve) + "[30s]) > 0", t);
        };
        // The last sample within 30 s, not the instant's: on a loaded
        // machine either exporter's last scrape may have timed out (its
        // series are then stale at t), which says nothing of its groups.
        const auto known = [&](bool serve) {
            return by_group("last_over_time(namedprocess_namegroup_num_procs" + sel(c, serve) + "[30s])", t);
        };
        const auto pe_groups = stable(false), sv_groups = stable(true);
        const auto pe_known = known(false), sv_known = known(true);
        ASSERT_FALSE(pe_groups.empty()) << "process-exporter has no group in case " << c << "; up: "
                                        << (query("up", t) ? query("up", t)->dump() : std::string("no answer"));
        // Asserted for the groups the test names (the workload's and the
        // shells'); for the rest of the machine a difference is shown, not
        // failed: each exporter names a process once, at first sight, and a
        // build's process first seen between its fork and its exec stays in
        // its parent's group there (a lint lane's python3 was `sh` on
        // process-exporter and `python3` on serve, once).
        const auto named = [&](const std::string& g) { return own.count(g) || shared.count(g); };
        for (const auto& [g, n] : pe_groups)
            if (!sv_known.count(g)) {
                EXPECT_FALSE(named(g)) << c << ": serve lacks group " << g;
                std::cout << "[ " << c << " ] a machine group only process-exporter has: " << g << "\n";
            }
        for (const auto& [g, n] : sv_groups)
            if (!pe_known.count(g)) {
                EXPECT_FALSE(named(g)) << c << ": serve has a group process-exporter has not: " << g;
                std::cout << "[ " << c << " ] a machine group only serve has: " << g << "\n";
            }
        for (const auto& g : own) EXPECT_TRUE(pe_groups.count(g) && sv_groups.count(g)) << c << ": group " << g;
        // The workload's groups: the same counts.
        for (const char* fam : {"num_procs", "num_threads"}) {
            const auto pe =
                by_group("last_over_time(namedprocess_namegroup_" + std::string(fam) + sel(c, false) + "[30s])", t);
            const auto sv =
                by_group("last_over_time(namedprocess_namegroup_" + std::string(fam) + sel(c, true) + "[30s])", t);
            for (const auto& g : own)
                EXPECT_EQ(sv.count(g) ? sv.at(g) : -1, pe.count(g) ? pe.at(g) : -2) << c << ": " << fam << " of " << g;
        }
        const auto rate = [&](bool serve) {
            return by_group(
                "sum by (groupname) (rate(namedprocess_namegroup_cpu_seconds_total" + sel(c, serve) + "[30s]))", t);
        };
        const auto pe_rate = rate(false), sv_rate = rate(true);
        for (const auto& g : own) {
            const double p = pe_rate.count(g) ? pe_rate.at(g) : -1, s = sv_rate.count(g) ? sv_rate.at(g) : -1;
            std::cout << "[ " << c << " ] rate(" << g << ") process-exporter " << p << ", serve " << s << "\n";
            ASSERT_GE(p, 0) << c << ": no CPU rate of " << g << " on process-exporter";
            // The burner takes what a loaded machine leaves it, which swings
            // within the seconds between the two exporters' scrapes (0.44 on
            // one and 0.49 on the other over the same 30 s, once): each
            // exporter's counter is held to the burner's own clock instead.
            if (g == burner) {
                for (const bool serve : {false, true}) against_burn_clock(c, serve, g, t);
                continue;
            }
            EXPECT_NEAR(s, p, std::max(0.10 * p, 0.02)) << c << ": CPU rate of " << g;
        }
        for (const auto& g : shared) {
            if (!pe_rate.count(g)) continue;
            const double p = pe_rate.at(g), s = sv_rate.count(g) ? sv_rate.at(g) : -1;
            std::cout << "[ " << c << " ] rate(" << g << ", shared) process-exporter " << p << ", serve " << s << "\n";
            EXPECT_GE(s, p - std::max(0.10 * p, 0.02)) << c << ": CPU rate of " << g;
        }
        if (churn_group.empty()) return;
        double children = 0, self = 0, done = 0;
        int count = 0;
        std::istringstream(read_text(w->churn_out)) >> children >> self >> done >> count;
        ASSERT_GT(count, 0);
        const int window = static_cast<int>(t - w->t0) + 5;
        // The counters' last value, not increase(): the group began with the
        // workload (serve's counter then holds all its CPU), and increase()
        // extrapolates the average rate to the end of the window, up to a
        // scrape interval past the churn's end (+5 to +8 % here).
        const auto inc = [&](bool serve) {
            return by_group("sum by (groupname) (max_over_time(namedprocess_namegroup_cpu_seconds_total" +
                                sel(c, serve) + "[" + std::to_string(window) + "s]))",
                            t);
        };
        const auto pe_inc = inc(false), sv_inc = inc(true);
        const double truth = children + self;
        const double s = sv_inc.count(churn_group) ? sv_inc.at(churn_group) : -1;
        std::cout << "[ " << c << " ] churn " << churn_group << ": " << count << " children, truth " << truth
                  << " s; serve " << s << " s, process-exporter "
                  << (pe_inc.count(churn_group) ? pe_inc.at(churn_group) : -1) << " s\n";
        EXPECT_NEAR(s, truth, 0.10 * truth) << c << ": CPU of the churning group " << churn_group;
    }
};

TEST_F(SideBySide, ReadmeExampleConfig) { compare("readme", {"postgres"}, "", {"bash"}, ""); }

TEST_F(SideBySide, DebianAllYaml) { compare("all", {"pt_burn", "pt_threads"}, "pt_burn", {"bash", "sh"}, "pt_short"); }

TEST_F(SideBySide, CommExeCmdlineMixWithNamedCaptures) {
    compare("mix", {"burner-pt_burn", "postgres", "sbs-renamed"}, "burner-pt_burn",
            {"loop-sh", "bash", "kernel-kthreadd"}, "churn:2000");
    // kthreadd and, through -children, every kernel thread: one group on
    // both, its size within a few threads (kworkers come and go between the
    // two exporters' scrapes).
    const double t = now_seconds() - 1;
    const auto pe = by_group("namedprocess_namegroup_num_procs" + sel("mix", false), t);
    const auto sv = by_group("namedprocess_namegroup_num_procs" + sel("mix", true), t);
    ASSERT_TRUE(pe.count("kernel-kthreadd") && sv.count("kernel-kthreadd"));
    std::cout << "[ mix ] kernel threads: process-exporter " << pe.at("kernel-kthreadd") << ", serve "
              << sv.at("kernel-kthreadd") << "\n";
    EXPECT_GT(pe.at("kernel-kthreadd"), 10);
    EXPECT_NEAR(sv.at("kernel-kthreadd"), pe.at("kernel-kthreadd"), std::max(5.0, 0.1 * pe.at("kernel-kthreadd")));
}

TEST_F(SideBySide, DashboardAndAlertExpressionsReturnDataOnBoth) {
    std::istringstream in(read_text(PE_QUERIES));
    const double t = now_seconds() - 1;
    const std::set<std::string> long_lived{"pt_burn", "pt_threads"};
    int asked = 0, with_data = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        const auto a = line.find(" | "), b = line.find(" | ", a + 3);
        ASSERT_NE(b, std::string::npos) << line;
        const std::string source = line.substr(0, a), check = line.substr(a + 3, b - a - 3);
        const std::string expr = line.substr(b + 3);
        auto with_job = [&](bool serve, const char* config = "all") {
            std::string e = expr;
            for (auto at = e.find("$job"); at != std::string::npos; at = e.find("$job"))
                e.replace(at, 4, "job=\"" + job(config, serve) + "\"");
            return e;
        };
        ++asked;
        const auto pe = series(with_job(false), t);
        if (pe.empty()) continue;
        ++with_data;
        const auto sv = series(with_job(true), t);
        EXPECT_FALSE(sv.empty()) << source << ": no data on serve for " << with_job(true);
        if (check != "value") continue;
        // A value of the whole machine (no groupname): all.yaml makes a group
        // of every comm, and on a busy machine the short-lived ones (a build's
        // compilers) are in one exporter's scrape and not in the other's. It
        // is compared on the README config's job, whose groups (bash,
        // postgres) live through the test.
        if (pe.size() == 1 && pe.begin()->first.empty()) {
            const auto pr = series(with_job(false, "readme"), t), sr = series(with_job(true, "readme"), t);
            ASSERT_EQ(pr.size(), 1U) << source << ": " << with_job(false, "readme");
            ASSERT_EQ(sr.size(), 1U) << source << ": " << with_job(true, "readme");
            const double v = pr.begin()->second;
            std::cout << "[ readme ] " << expr << ": process-exporter " << v << ", serve " << sr.begin()->second
                      << " (all.yaml: " << pe.begin()->second << " and "
                      << (sv.empty() ? std::string("none") : std::to_string(sv.begin()->second)) << ")\n";
            EXPECT_NEAR(sr.begin()->second, v, std::max(0.10 * std::abs(v), 0.02)) << source << ": " << expr;
            continue;
        }
        for (const auto& [k, v] : pe) {
            bool wanted = false;
            for (const auto& g : long_lived) wanted = wanted || k.find("groupname=" + g + ",") != std::string::npos;
            // A rate of the burner: the two exporters' windows begin and end
            // at different scrapes, between which its share of a loaded
            // machine swings (each is held to its clock in DebianAllYaml).
            if (expr.find("rate(") != std::string::npos && k.find("groupname=pt_burn,") != std::string::npos) continue;
            if (!wanted) continue;
            ASSERT_TRUE(sv.count(k)) << source << ": serve lacks " << k << " of " << expr;
            EXPECT_NEAR(sv.at(k), v, std::max(0.10 * std::abs(v), 0.02)) << source << ": " << k << " of " << expr;
        }
    }
    // The group whose only member ended long before: 0 on both, not absent.
    for (const bool serve : {false, true}) {
        const auto gone = series("namedprocess_namegroup_num_procs" + sel("all", serve, "groupname=\"sbs-gone\""), t);
        ASSERT_EQ(gone.size(), 1U) << job("all", serve) << ": the group of the ended sbs-gone";
        EXPECT_EQ(gone.begin()->second, 0) << job("all", serve);
    }
    std::cout << asked << " expressions, " << with_data << " with data on process-exporter\n";
    EXPECT_GT(with_data, 30);
}

}  // namespace
