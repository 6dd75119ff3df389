// SPDX-License-Identifier: MIT
// Reading a scrape in the text format, for the serve tests: one series'
// value, the name this test process is grouped under, a collector of
// process-exporter's families for one group, and a config file to give it.
#pragma once

#include <fstream>
#include <memory>
#include <string>

#include <stdlib.h>
#include <unistd.h>

#include "proctimes/snapshot.hpp"
#include "serve/collect/collector.hpp"

namespace serve_testing {

/// `yaml` in a new file /tmp/proctimes-test-XXXXXX: its path, or "" when it
/// cannot be written. The caller unlinks it.
inline std::string temp_config(const std::string& yaml) {
    char path[] = "/tmp/proctimes-test-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) return {};
    const bool written = ::write(fd, yaml.data(), yaml.size()) == static_cast<ssize_t>(yaml.size());
    ::close(fd);
    if (!written) {
        ::unlink(path);
        return {};
    }
    return path;
}

/// The value of one series (name and labels, exactly as written) in a scrape,
/// or -1 when it is absent.
inline double value_of(const std::string& text, const std::string& series) {
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + 1 + series.size() + 1));
}

/// The walk serve reads with process-exporter's rules or families, as
/// proctimes_exporter_source names it: the eBPF task walk where it lists
/// every process /proc lists (Linux 6.7+, permitted), else /proc.
inline std::string rules_walk() {
    const proctimes::bpf_source_status s = proctimes::bpf_snapshot_status();
    return s.usable && s.program == "task walk" ? "bpf" : "proc";
}

/// This process's name (comm): its group under --group-by name.
inline std::string own_comm() {
    std::ifstream in("/proc/self/comm");
    std::string s;
    std::getline(in, s);
    return s;
}

/// A collector of process-exporter's families (--namedprocess) for the
/// group `name` alone, without exit records or per-process series; walking
/// threads too with `threads`. Null, with `error` set, when it cannot open.
inline std::unique_ptr<proctimes::cli::serve::collector> namedprocess_collector(const std::string& name, bool threads,
                                                                                std::string& error) {
    proctimes::cli::serve_options opts;
    opts.namedprocess = true;
    opts.threads = threads;
    opts.include = "^" + name + "$";
    opts.top = 0;
    opts.exit_records = false;
    auto made = proctimes::cli::serve::collector::open(opts);
    if (!made) error = made.error().message;
    return std::move(*made);
}

}  // namespace serve_testing
