// SPDX-License-Identifier: MIT
// `proctimes doctor`: what this machine lets proctimes use, and why not where
// it cannot — for now the eBPF snapshot source (docs/BPF.md) — and what the
// exit machinery failed to do so far (docs/EXIT.md). Also the
// one-line note `ps --source bpf` prints when it had to read /proc instead.
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/settings.hpp"
#include "proctimes/snapshot.hpp"

namespace proctimes::cli {

void note_snapshot_source(const snapshot& s, snapshot_source asked, std::ostream& err) {
    if (asked != snapshot_source::bpf || s.source == snapshot_source::bpf) return;
    err << fmt::format("proctimes: the eBPF source cannot be used ({}); read /proc instead\n",
                       bpf_snapshot_status().reason);
}

namespace {

// The exit machinery's failures so far, by kind (exit_failures): "none", or
// each kind that happened with its count.
std::string exit_failure_line() {
    exit_failures f;
    (void)exit_records_status(f);
    if (f.total() == 0) return "none";
    const std::pair<const char*, std::uint64_t> kinds[] = {{"monitor start", f.monitor_start},
                                                           {"watch", f.watch},
                                                           {"unwatch", f.unwatch},
                                                           {"deliver", f.deliver},
                                                           {"await", f.await},
                                                           {"query", f.query},
                                                           {"reap deferred", f.reap_deferred},
                                                           {"reap lost", f.reap_lost},
                                                           {"ends not kept", f.ends_not_kept},
                                                           {"eBPF sweep", f.bpf_sweep}};
    std::string line;
    for (const auto& [name, n] : kinds)
        if (n != 0) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", name, n);
    return line;
}

int run_doctor(std::ostream& out) {
    const auto st = bpf_snapshot_status();
    out << fmt::format("eBPF snapshot source: {}\n", !st.built ? "not built" : st.usable ? "usable" : "not usable");
    if (!st.reason.empty()) out << fmt::format("  why: {}\n", st.reason);
    if (st.usable) out << fmt::format("  program: {}\n", st.program);
    if (st.built) out << fmt::format("  load and attach: {:.1f} ms\n", static_cast<double>(st.load_time.count()) / 1e6);
    const auto procfs = to_string(snapshot_source::procfs);
    out << fmt::format("  ps (one snapshot), --source auto: {} (one snapshot never pays the load)\n", procfs);
    out << fmt::format("  ps --interval, --source auto: {}\n", st.usable ? "eBPF" : procfs);
    out << fmt::format("exit monitor failures: {}\n", exit_failure_line());
    const auto problems = setting_problems();
    out << fmt::format("environment: {}\n", problems.empty() ? "no PROCTIMES_* value ignored" : "values ignored");
    for (const setting_problem& p : problems)
        out << fmt::format("  {}={}: ignored, expected {}\n", p.variable, p.value, p.expected);
    return 0;
}

}  // namespace

subcommand add_doctor(CLI::App& root) {
    auto* app =
        root.add_subcommand("doctor", "Report which optional sources this machine lets proctimes use, and why not");
    return {app, [](std::ostream& out, std::ostream&) { return run_doctor(out); }};
}

}  // namespace proctimes::cli
