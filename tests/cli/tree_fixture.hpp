// SPDX-License-Identifier: MIT
// Synthetic trees for the renderers of `run --tree`: a small build (make,
// sh, cc, cc1, as, ld), a process with hostile argv bytes, one whose times
// are not final, one not seen ending.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "run/tree/model.hpp"

namespace tree_testing {

using namespace std::chrono_literals;
using proctimes::instant;
using proctimes::tree_process;
using proctimes::tree_program;

// Every argv byte a CSV, JSON, XML or table writer must handle.
inline const std::vector<std::string> hostile_argv = {"weird",
                                                      "a \"quoted\" word",
                                                      "comma,separated",
                                                      "line\nbreak",
                                                      ") (",
                                                      "<tag attr='x'>&amp;",
                                                      std::string("bad \xff\xfe utf8"),
                                                      std::string("ctl \x01\x1b end"),
                                                      std::string("\xef\xbf\xbf"),
                                                      ""};

inline instant at(std::chrono::nanoseconds d) {
    return instant{} + std::chrono::sys_days{std::chrono::year{2026} / 11 / 26}.time_since_epoch() + 10h + d;
}

inline tree_program program(std::string exe, std::vector<std::string> argv, std::chrono::nanoseconds started) {
    tree_program p;
    p.executable = std::move(exe);
    p.argv = std::move(argv);
    p.started = at(started);
    return p;
}

inline tree_process process(pid_t pid, pid_t ppid, std::int64_t parent_index, std::vector<tree_program> programs,
                            std::chrono::nanoseconds created, std::chrono::nanoseconds exited,
                            std::chrono::nanoseconds user, std::chrono::nanoseconds kernel, int code = 0) {
    tree_process p;
    p.pid = pid;
    p.parent_pid = ppid;
    p.parent_index = parent_index;
    p.programs = std::move(programs);
    p.created = at(created);
    p.exited = at(exited);
    p.user = user;
    p.kernel = kernel;
    p.final_times = true;
    p.status = proctimes::exit_status{code, 0, false};
    p.precision.resolution = 1ns;
    p.precision.total_resolution = 1ns;
    p.precision.source = proctimes::cpu_source::cpu_clock_and_stat;
    return p;
}

// make -j2 → (sh -c 'cc -c a.c' → cc → cc1, as), (cc -c b.c → cc1, as), cc -o prog → ld,
// and `weird` with hostile argv, killed by SIGSEGV; ld's times are not final.
inline proctimes::cli::tree::tree_report build_report() {
    proctimes::cli::tree::tree_report r;
    r.command = {"make", "-j2"};
    r.exit.status = proctimes::exit_status{0, 0, false};
    r.wall = 100ms;
    auto& t = r.tree;
    t.source = proctimes::tree_source::ptrace;
    t.source_note = "";
    auto& v = t.processes;
    v.push_back(process(100, 0, -1, {program("/usr/bin/make", {"make", "-j2"}, 0ms)}, 0ms, 100ms, 4ms, 2ms));
    v.push_back(
        process(101, 100, 0,
                {program("/usr/bin/make", {"make", "-j2"}, 1ms), program("/bin/sh", {"sh", "-c", "cc -c a.c"}, 2ms)},
                1ms, 40ms, 1ms, 1ms));
    v.push_back(
        process(102, 101, 1,
                {program("/bin/sh", {"sh", "-c", "cc -c a.c"}, 3ms), program("/usr/bin/cc", {"cc", "-c", "a.c"}, 4ms)},
                3ms, 39ms, 2ms, 1ms));
    v.push_back(process(103, 102, 2,
                        {program("/usr/bin/cc", {"cc", "-c", "a.c"}, 5ms),
                         program("/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
                                 {"/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "-quiet", "a.c"}, 6ms)},
                        5ms, 30ms, 20ms, 3ms));
    v.push_back(
        process(104, 102, 2,
                {program("/usr/bin/cc", {"cc", "-c", "a.c"}, 31ms), program("/usr/bin/as", {"as", "-o", "a.o"}, 32ms)},
                31ms, 38ms, 2ms, 1ms));
    v.push_back(process(
        105, 100, 0, {program("/usr/bin/make", {"make", "-j2"}, 2ms), program("/usr/bin/cc", {"cc", "-c", "b.c"}, 3ms)},
        2ms, 60ms, 1ms, 1ms));
    v.push_back(process(106, 105, 5,
                        {program("/usr/bin/cc", {"cc", "-c", "b.c"}, 4ms),
                         program("/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
                                 {"/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "-quiet", "b.c"}, 5ms)},
                        4ms, 50ms, 30ms, 4ms));
    v.push_back(
        process(107, 105, 5,
                {program("/usr/bin/cc", {"cc", "-c", "b.c"}, 51ms), program("/usr/bin/as", {"as", "-o", "b.o"}, 52ms)},
                51ms, 58ms, 2ms, 2ms));
    v.push_back(
        process(108, 100, 0,
                {program("/usr/bin/make", {"make", "-j2"}, 61ms), program("/usr/bin/cc", {"cc", "-o", "prog"}, 62ms)},
                61ms, 95ms, 1ms, 1ms));
    v.push_back(process(
        109, 108, 8,
        {program("/usr/bin/cc", {"cc", "-o", "prog"}, 63ms), program("/usr/bin/ld", {"ld", "-o", "prog"}, 64ms)}, 63ms,
        90ms, 5ms, 5ms));
    v.back().final_times = false;
    v.push_back(process(110, 100, 0,
                        {program("/usr/bin/make", {"make", "-j2"}, 91ms), program("/tmp/x/weird", hostile_argv, 92ms)},
                        91ms, 93ms, 1ms, 0ms));
    v.back().status = proctimes::exit_status{0, 11, true};
    v.back().programs.back().argv_truncated = true;
    std::chrono::nanoseconds final_sum{};
    for (const auto& p : v) final_sum += p.final_times ? p.cpu() : 0ns;
    t.rusage_cpu = final_sum + 3ms;
    t.unaccounted_cpu = 3ms;
    return r;
}

}  // namespace tree_testing
