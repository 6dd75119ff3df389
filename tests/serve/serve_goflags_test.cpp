// SPDX-License-Identifier: MIT
// process-exporter's flags accepted by `serve` (one or two dashes, Go's
// -name=value and -name value forms), each with its meaning or a usage error
// naming what is missing; never silently ignored.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli.hpp"
#include "scrape_text.hpp"
#include "serve/collect/collector.hpp"
#include "serve/pe/goflags.hpp"

namespace {

using serve_testing::own_comm;
using serve_testing::temp_config;
using serve_testing::value_of;

struct result {
    int rc;
    std::string out, err;
};

result serve(std::vector<std::string> args) {
    args.insert(args.begin(), "serve");
    std::ostringstream o, e;
    const int rc = proctimes::cli::run(args, o, e);
    return {rc, o.str(), e.str()};
}

// A config that puts this test process in group pe-<its comm>.
std::string own_config() {
    return temp_config("process_names:\n  - name: \"pe-{{.Comm}}\"\n    comm:\n    - " + own_comm() + "\n");
}

}  // namespace

TEST(ServeGoFlags, ProcnamesGroupsOnlyThoseNamesWithEitherDash) {
    for (const std::string flag : {"-procnames", "--procnames"}) {
        const auto r = serve({"--once", "--top", "0", flag, own_comm() + ",no-such-proc"});
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_GE(value_of(r.out, "proctimes_group_processes{group=\"" + own_comm() + "\"}"), 1) << flag;
        EXPECT_EQ(r.out.find("group=\"kthreadd\""), std::string::npos) << flag;  // not named: not grouped
    }
    const auto eq = serve({"--once", "--top", "0", "-procnames=" + own_comm()});
    ASSERT_EQ(eq.rc, 0) << eq.err;
    EXPECT_GE(value_of(eq.out, "proctimes_group_processes{group=\"" + own_comm() + "\"}"), 1);
    // As process-exporter: not with a config file; and not with --group-by.
    EXPECT_EQ(serve({"--once", "-procnames", "x", "-config.path", "/etc/hostname"}).rc, 2);
    EXPECT_EQ(serve({"--once", "-procnames", "x", "--group-by", "user"}).rc, 2);
    EXPECT_EQ(serve({"--once", "-procnames", ",,"}).rc, 2);  // names nothing
    EXPECT_EQ(serve({"--once", "-procnames"}).rc, 2);        // no value
}

TEST(ServeGoFlags, NamemappingNamesByTheFirstNonEmptyCapture) {
    const auto made = proctimes::cli::serve::rules_from_procnames("bash,java", "java,(x)?-jar\\s+([^/ ]+)\\.jar");
    ASSERT_TRUE(made) << made.error().message;
    const auto& rules = *made;
    ASSERT_EQ(rules.size(), 2u);
    const auto& java = rules[0].comm.front() == "java" ? rules[0] : rules[1];
    const auto& bash = rules[0].comm.front() == "java" ? rules[1] : rules[0];
    ASSERT_TRUE(java.mapping);
    EXPECT_EQ(java.mapping("java -Xmx1g -jar app.jar"), "java:app");  // group 1 took no part: group 2
    EXPECT_EQ(java.mapping("java -version"), std::nullopt);           // no match: in no group
    EXPECT_FALSE(bash.mapping);
    EXPECT_EQ(bash.name_template, "{{.Comm}}");
    // Live: this process by its own command line.
    const auto r = serve({"--once", "--top", "0", "-namemapping", own_comm() + ",(--once)"});
    ASSERT_EQ(r.rc, 0) << r.err;
    // The test binary's command line has no "--once": it is in no group.
    EXPECT_EQ(r.out.find("proctimes_group_processes{"), std::string::npos) << r.out;
    for (const char* bad : {"a", "a,", ",b", "a,("}) {
        const auto b = serve({"--once", "-namemapping", bad});
        EXPECT_EQ(b.rc, 2) << bad;
        EXPECT_NE(b.err.find("-namemapping"), std::string::npos) << b.err;
    }
}

// -children is on by default, as in process-exporter: every kernel thread
// (unmatched) joins kthreadd's group; -children=false leaves them out.
TEST(ServeGoFlags, ChildrenIsOnByDefault) {
    const std::string cfg = "/tmp/proctimes-goflags-children-" + std::to_string(::getpid()) + ".yaml";
    { std::ofstream(cfg) << "process_names:\n  - comm: [kthreadd]\n"; }
    const auto n = [](const result& r) {
        return value_of(r.out, "namedprocess_namegroup_num_procs{groupname=\"kthreadd\"}");
    };
    for (const char* on : {"", "-children", "--children", "-children=true", "-children=1"}) {
        std::vector<std::string> args{"--once", "--top", "0", "--namedprocess", "-config.path", cfg};
        if (*on) args.emplace_back(on);
        const auto r = serve(args);
        EXPECT_EQ(r.rc, 0) << on << r.err;
        if (::access("/proc/2/comm", R_OK) == 0) EXPECT_GT(n(r), 1) << on;
    }
    for (const char* off : {"-children=false", "--children=0", "-children=F"}) {
        const auto r = serve({"--once", "--top", "0", "--namedprocess", "-config.path", cfg, off});
        EXPECT_EQ(r.rc, 0) << off << r.err;
        if (::access("/proc/2/comm", R_OK) == 0) EXPECT_EQ(n(r), 1) << off;
    }
    EXPECT_EQ(serve({"--once", "-children=maybe"}).rc, 2);
    ::unlink(cfg.c_str());
}

TEST(ServeGoFlags, ThreadsTurnsOnTheThreadWalk) {
    const auto on = serve({"--once", "--top", "0", "--namedprocess", "-threads"});
    ASSERT_EQ(on.rc, 0) << on.err;
    EXPECT_NE(on.out.find("# TYPE namedprocess_namegroup_thread_count gauge"), std::string::npos);
    EXPECT_NE(on.out.find("snapshot=\"" + serve_testing::rules_walk() + "+threads\""), std::string::npos);
    const auto off = serve({"--once", "--top", "0", "--namedprocess", "-threads=false"});
    ASSERT_EQ(off.rc, 0) << off.err;
    EXPECT_EQ(off.out.find("namedprocess_namegroup_thread_count"), std::string::npos);
    EXPECT_EQ(serve({"--once", "--top", "0", "--threads=false"}).rc, 0);
}

TEST(ServeGoFlags, ConfigPathIsConfig) {
    const std::string path = own_config();
    ASSERT_FALSE(path.empty());
    for (const std::string flag : {"-config.path", "--config.path"}) {
        const auto r = serve({"--once", "--top", "0", flag, path});
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_GE(value_of(r.out, "proctimes_group_processes{group=\"pe-" + own_comm() + "\"}"), 1) << r.out;
    }
    EXPECT_EQ(serve({"--once", "--config", "/etc/hostname", "-config.path", path}).rc, 2);
    const auto missing = serve({"--once", "-config.path", "/nonexistent/pe.yml"});
    EXPECT_EQ(missing.rc, 2);
    EXPECT_NE(missing.err.find("/nonexistent/pe.yml"), std::string::npos);
    ::unlink(path.c_str());
}

// With process-exporter's rules, its defaults: -threads and -gather-smaps are
// on there, so a config alone brings the thread families and the proportional
// memory types, and -threads=false / -gather-smaps=false (or serve's own
// --threads=false / --gather-smaps=false) turn them off.
TEST(ServeGoFlags, ProcessExporterRulesBringItsThreadAndSmapsDefaults) {
    const std::string path = own_config();
    ASSERT_FALSE(path.empty());
    const std::string g = "{groupname=\"pe-" + own_comm() + "\"";
    const std::string pss = "namedprocess_namegroup_memory_bytes" + g + ",memtype=\"proportionalResident\"}";
    for (const std::string flag : {"-config.path", "--config"}) {
        const auto on = serve({"--once", "--top", "0", flag, path});
        ASSERT_EQ(on.rc, 0) << on.err;
        EXPECT_NE(on.out.find("# TYPE namedprocess_namegroup_thread_count gauge"), std::string::npos) << on.out;
        EXPECT_GT(value_of(on.out, pss), 0) << flag;
        EXPECT_NE(on.out.find("snapshot=\"" + serve_testing::rules_walk() + "+threads\""), std::string::npos) << flag;
    }
    for (const auto& offs : {std::vector<std::string>{"-threads=false", "-gather-smaps=false"},
                             std::vector<std::string>{"--threads=false", "--gather-smaps=false"}}) {
        std::vector<std::string> args{"--once", "--top", "0", "-config.path", path};
        args.insert(args.end(), offs.begin(), offs.end());
        const auto off = serve(args);
        ASSERT_EQ(off.rc, 0) << off.err;
        EXPECT_EQ(off.out.find("namedprocess_namegroup_thread_count"), std::string::npos) << offs[0];
        EXPECT_EQ(off.out.find("memtype=\"proportionalResident\""), std::string::npos) << offs[0];
        EXPECT_GE(value_of(off.out, "namedprocess_namegroup_num_procs" + g + "}"), 1) << off.out;
    }
    // Without process-exporter's rules, proctimes' own defaults: both off.
    const auto own = serve({"--once", "--top", "0", "--namedprocess"});
    ASSERT_EQ(own.rc, 0) << own.err;
    EXPECT_EQ(own.out.find("namedprocess_namegroup_thread_count"), std::string::npos);
    EXPECT_EQ(own.out.find("memtype=\"proportionalResident\""), std::string::npos);
    ::unlink(path.c_str());
}

TEST(ServeGoFlags, UnknownAndUnimplementedFlagsAreUsageErrors) {
    const std::pair<std::vector<std::string>, const char*> cases[] = {
        {{"-no-such-flag"}, "unknown option"},
        {{"--no-such-flag=1"}, "unknown option"},
        {{"-web.config.file", "/nonexistent/web.yml"}, "--web-config: cannot read /nonexistent/web.yml"},
        {{"-web.config.file"}, "needs a value"},
        {{"-web.config.file=/a.yml", "--web-config", "/b.yml"}, "name different files"},
        {{"-debug"}, "-debug"},
        {{"-once-to-stdout-delay", "1s"}, "--once"},
        {{"-web.telemetry-path"}, "needs a value"},
        {{"-web.telemetry-path", "metrics"}, "must start with '/'"},
        {{"-web.telemetry-path", "/"}, "must start with '/'"},
        {{"-web.telemetry-path", "/a\"b"}, "must start with '/'"},
        {{"-web.listen-address", "nowhere"}, "HOST:PORT"},
        {{"-recheck=yes"}, "not a boolean"},
        {{"stray"}, "unexpected argument"},
    };
    for (const auto& [args, says] : cases) {
        std::vector<std::string> a{"--once"};
        a.insert(a.end(), args.begin(), args.end());
        const auto r = serve(a);
        EXPECT_EQ(r.rc, 2) << args.front();
        EXPECT_NE(r.err.find(says), std::string::npos) << args.front() << ": " << r.err;
    }
}

// -recheck: a process that no rule matched is classified again at every
// collection. A script named x execs a binary also named x (same comm, so
// nothing else would look at it again) that the rule matches by path.
TEST(ServeGoFlags, RecheckClassifiesUnmatchedProcessesAgain) {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/proctimes-recheck-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const fs::path dir(tmpl);
    fs::create_directories(dir / "a");
    fs::create_directories(dir / "b");
    const std::string name = "rc" + std::to_string(::getpid() % 1000000);
    const fs::path script = dir / "a" / name, target = dir / "b" / name, go = dir / "go";
    fs::copy_file("/bin/sleep", target);
    {
        std::ofstream s(script);
        s << "#!/bin/sh\nwhile [ ! -e " << go.string() << " ]; do sleep 0.02; done\nexec " << target.string()
          << " 30\n";
    }
    fs::permissions(script, fs::perms::owner_all);
    const fs::path cfg = dir / "pe.yml";
    std::ofstream(cfg) << "process_names:\n  - name: \"{{.Comm}}\"\n    exe:\n    - " << target.string() << "\n";

    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::execl(script.c_str(), script.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    const auto series = "proctimes_group_processes{group=\"" + name + "\"}";
    std::string error;
    std::unique_ptr<proctimes::cli::serve::collector> plain, rechecking;
    for (const bool recheck : {false, true}) {
        proctimes::cli::serve_options o;
        o.config_file = cfg.string();
        o.top = 0;
        o.exit_records = false;
        o.recheck = recheck;
        auto made = proctimes::cli::serve::collector::open(o);
        if (!made) error = made.error().message;
        (recheck ? rechecking : plain) = std::move(*made);
        ASSERT_TRUE(recheck ? rechecking : plain) << error;
    }
    // Before the exec: the script (comm x, exe /bin/dash) matches nothing.
    const auto comm_is = [&](const std::string& want) {
        std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
        std::string c;
        std::getline(in, c);
        return c == want;
    };
    for (int i = 0; i < 500 && !comm_is(name); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(comm_is(name));
    EXPECT_EQ(value_of(plain->scrape(proctimes::cli::serve::format::text_004), series), -1);
    EXPECT_EQ(value_of(rechecking->scrape(proctimes::cli::serve::format::text_004), series), -1);
    std::ofstream(go.string()) << "";
    const auto exe_is_target = [&] {
        std::error_code ec;
        return fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec) == target;
    };
    for (int i = 0; i < 500 && !exe_is_target(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(exe_is_target());
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    // Same pid, same start, same comm: only -recheck looks again.
    EXPECT_EQ(value_of(rechecking->scrape(proctimes::cli::serve::format::text_004), series), 1);
    EXPECT_EQ(value_of(plain->scrape(proctimes::cli::serve::format::text_004), series), -1);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    fs::remove_all(dir);
    // The flag sets it, in either form.
    proctimes::cli::serve_options o;
    proctimes::cli::serve::go_flags_seen seen;
    EXPECT_TRUE(proctimes::cli::serve::apply_go_flags({"-recheck"}, o, seen));
    EXPECT_TRUE(o.recheck);
    EXPECT_TRUE(proctimes::cli::serve::apply_go_flags({"--recheck=false"}, o, seen));
    EXPECT_FALSE(o.recheck);
}
