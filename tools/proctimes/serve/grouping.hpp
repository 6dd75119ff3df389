// SPDX-License-Identifier: MIT
// Which group a process belongs to: by name, user, cgroup or executable, with
// --include/--exclude regexes on the group name, or by the `process_names`
// rules of a process-exporter config file (docs/SERVE.md lists what of that
// format is understood).
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <sys/types.h>

#include "proctimes/snapshot.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli::serve {

/// One `process_names` entry of a process-exporter config.
struct pe_rule {
    std::string name_template = "{{.ExeBase}}";
    std::vector<std::string> comm;    ///< any of these comm values
    std::vector<std::string> exe;     ///< any of these: a base name, or a full path when it has a '/'
    std::vector<std::regex> cmdline;  ///< every one must match the space-joined command line
    std::vector<std::string> cmdline_text;
    [[nodiscard]] bool needs_exe() const;
};

/// Parses the YAML text of a process-exporter config. Returns the rules, or
/// sets `error` (a message naming what is wrong).
std::vector<pe_rule> parse_pe_config(std::string_view yaml, std::string& error);

/// What a classifier needs to know about a process beyond its snapshot entry;
/// read from /proc only when the grouping uses it.
struct process_facts {
    std::string exe;      ///< readlink of /proc/<pid>/exe ("" when unreadable)
    std::string argv0;    ///< first word of /proc/<pid>/cmdline
    std::string cmdline;  ///< the command line, words joined by spaces
    std::string cgroup;   ///< the v2 path (the "0::" line), else the first line's path
};

class classifier {
public:
    /// Builds the regexes and loads the config file; sets `error` on failure.
    static std::unique_ptr<classifier> make(const serve_options& opts, std::string& error);

    /// The group of a live process; nullopt when excluded or unmatched.
    std::optional<std::string> group_of(const snapshot_process& p);
    /// The group of a process known only from its exit record; nullopt when
    /// excluded, or when the grouping needs what a record does not say (its
    /// executable path or cgroup).
    std::optional<std::string> group_of_ended(std::string_view name, uid_t uid);

    [[nodiscard]] bool uses_config() const noexcept { return !rules_.empty(); }

private:
    classifier() = default;
    std::optional<std::string> filter(std::string group);
    std::optional<std::string> apply_rules(std::string_view comm, uid_t uid, pid_t pid, const process_facts* f);
    std::string user_name(uid_t uid);
    process_facts facts(pid_t pid, bool exe, bool cmdline, bool cgroup) const;

    group_by by_ = group_by::name;
    std::string proc_root_;
    std::optional<std::regex> include_, exclude_;
    std::vector<pe_rule> rules_;
    std::unordered_map<uid_t, std::string> users_;
    std::unordered_map<std::string, std::optional<std::string>> filtered_;
};

}  // namespace proctimes::cli::serve
