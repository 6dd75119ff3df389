// SPDX-License-Identifier: MIT
// proctimes::run_tree on a real build: `make -j2` of a generated C project.
// Every compiler pass appears once per invocation with its arguments, and
// the final CPU of the whole tree accounts for the build's wait rusage.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>

#include <sys/prctl.h>
#include <unistd.h>

#include "in_child.hpp"
#include "proctimes/tree.hpp"
#include "tree_check.hpp"

namespace {

using namespace std::chrono;

constexpr int sources = 40;

std::string base_name(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool has_arg(const proctimes::tree_program& p, const std::string& a) {
    for (const auto& x : p.argv)
        if (x == a || (x.size() > a.size() && x.compare(x.size() - a.size(), a.size(), a) == 0 &&
                       x[x.size() - a.size() - 1] == '/'))
            return true;
    return false;
}

std::string make_build(bool as_nobody, proctimes::tree_source prefer) {
    // Dumpable again, as after an exec (tree_test.cpp says why).
    if (as_nobody && (::setgid(65534) != 0 || ::setuid(65534) != 0 || ::prctl(PR_SET_DUMPABLE, 1) != 0))
        return "cannot become nobody";
    if (::access("/usr/bin/make", X_OK) != 0 || ::access("/usr/bin/cc", X_OK) != 0) return "";  // checked by the caller
    const std::string d = tree_check::scratch_dir();
    if (d.empty()) return "no scratch directory";
    std::string objs;
    for (int i = 0; i < sources; ++i) {
        const std::string n = "f" + std::to_string(i);
        std::string path = d;
        path.append("/").append(n).append(".c");
        std::ofstream(path) << "int " << n << "(int x) { int s = 0; for (int i = 0; i < x; ++i) s += i * " << i + 1
                            << "; return s; }\n";
        objs += " " + n + ".o";
    }
    std::ofstream(d + "/main.c") << "int main(void) { return 0; }\n";
    std::ofstream(d + "/Makefile") << "prog: main.o" << objs << "\n\tcc -o $@ $^\n%.o: %.c\n\tcc -O2 -c $< -o $@\n";
    auto r = proctimes::run_tree({.argv = {"make", "-s", "-j2", "-C", d}}, {.prefer = prefer});
    if (!r) return "run_tree: " + r.error().message();
    const auto& t = r->tree;
    const std::string dump = "\n" + tree_check::describe(t);
    if (!r->command.status || r->command.status->code != 0) return "make failed" + dump;
    if (auto s = tree_check::source(t, prefer); !s.empty()) return s + dump;
    if (auto s = tree_check::structure(t, t.processes[0].pid); !s.empty()) return s + dump;
    if (auto s = tree_check::accounting(t, milliseconds{20}); !s.empty()) return s + dump;

    // Per source file: one cc1 and one as; one collect2 and one ld for the link.
    std::map<std::string, int> cc1, as, link;
    for (const auto& p : t.processes) {
        if (!p.exited || !p.status || p.status->code != 0 || p.outlived_command) return "a process did not end" + dump;
        // bpf: a process the kernel ran no free program for keeps its lower bound (accounting() checks it).
        if (!p.final_times && t.source != proctimes::tree_source::bpf) return "a process without final values" + dump;
        // A forked process's first program is its parent's: count execs only.
        for (std::size_t k = &p == &t.processes[0] ? 0 : 1; k < p.programs.size(); ++k) {
            const auto& prog = p.programs[k];
            if (prog.argv.empty()) continue;
            const std::string name = base_name(prog.argv[0]);
            for (int i = 0; i <= sources; ++i) {
                const std::string n = i == sources ? "main" : "f" + std::to_string(i);
                if (name == "cc1" && has_arg(prog, n + ".c")) ++cc1[n];
                if (name == "as" && has_arg(prog, n + ".o")) ++as[n];
            }
            if (name == "collect2" || name == "ld") ++link[name];
        }
    }
    for (int i = 0; i <= sources; ++i) {
        const std::string n = i == sources ? "main" : "f" + std::to_string(i);
        if (cc1[n] != 1 || as[n] != 1) {
            std::string why = n;
            why.append(": cc1 ").append(std::to_string(cc1[n])).append(", as ").append(std::to_string(as[n]));
            return why + dump;
        }
    }
    if (link["collect2"] != 1 || link["ld"] != 1) return "link steps" + dump;
    return "";
}

void check(bool as_nobody, proctimes::tree_source prefer) {
    if (::access("/usr/bin/make", X_OK) != 0 || ::access("/usr/bin/cc", X_OK) != 0)
        GTEST_SKIP() << "make or cc missing";
    auto o = test_in_child::run([as_nobody, prefer] { return make_build(as_nobody, prefer); }, 600);
    EXPECT_TRUE(o.ok()) << o.why();
}

using proctimes::tree_source;

TEST(TreeMake, EveryCompilerPassOnceAndCpuAccountedAsRoot) { check(false, tree_source::ptrace); }
TEST(TreeMake, EveryCompilerPassOnceAndCpuAccountedAsNobody) { check(true, tree_source::ptrace); }
TEST(TreeMake, EveryCompilerPassOnceAndCpuAccountedBpfAsRoot) { check(false, tree_source::bpf); }

}  // namespace
