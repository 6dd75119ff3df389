// SPDX-License-Identifier: MIT
// Which group a process belongs to: by name, user, cgroup or executable, with
// --include/--exclude regexes on the group name, or by the `process_names`
// rules of a process-exporter config file (docs/SERVE.md lists what of that
// format is understood). Every regex is RE2 (Go's syntax, linear-time
// matching: pattern.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "pattern.hpp"
#include "proctimes/snapshot.hpp"
#include "serve/error.hpp"
#include "serve/pe/name_template.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli::serve {

/// One `process_names` entry of a process-exporter config.
struct pe_rule {
    std::string name_template = "{{.ExeBase}}";  ///< as written
    pe_name_template name;                       ///< parsed: see set_name()
    std::vector<std::string> comm;               ///< any of these comm values
    std::vector<std::string> exe;                ///< any of these: a base name, or a full path when it has a '/'
    /// Every one must match (a search) the command line's words joined by spaces;
    /// their named groups are the template's {{.Matches.NAME}}.
    std::vector<std::shared_ptr<const pattern>> cmdline;
    std::vector<std::string> cmdline_text;
    /// A `comm: []` or `exe: []` (an empty list, not a missing one): as in
    /// process-exporter, a matcher no process passes.
    bool matches_nothing = false;
    /// -namemapping: the group name from the command line (nullopt: the rule
    /// does not match); replaces the template when set.
    std::function<std::optional<std::string>(std::string_view cmdline)> mapping;
    pe_rule();
    /// Parses TEXT as the `name:` template; false (and `error`) when it cannot be.
    bool set_name(std::string_view text, std::string& error);
    [[nodiscard]] bool needs_exe() const;
    /// Whether the rule reads the executable, the command line or the cgroups (which an exit record lacks).
    [[nodiscard]] bool needs_facts() const {
        return needs_exe() || !cmdline.empty() || mapping != nullptr || name.uses(pe_name_template::field::cgroups);
    }
    /// Whether its name shows what only a live process has: its pid, start time or cgroups.
    [[nodiscard]] bool needs_live_process() const {
        using f = pe_name_template::field;
        return mapping == nullptr && (name.uses(f::pid) || name.uses(f::start_time) || name.uses(f::cgroups));
    }
};

/// What a process whose name (comm) is empty is called, in groups and in the
/// `name` label: 17 bytes, longer than any comm (15), so no process can take it.
inline constexpr std::string_view empty_name_placeholder = "(no process name)";

/// `name`, or the placeholder above when it is empty.
inline std::string_view shown_name(std::string_view name) noexcept {
    return name.empty() ? empty_name_placeholder : name;
}

/// Reads and parses a config file: a regular file of at most 1 MiB, opened
/// without blocking (a FIFO or device is refused). Errors: error_kind::config
/// ("cannot read PATH: ...", or PATH and the parser's message).
outcome<std::vector<pe_rule>> read_pe_config(const std::string& path);

/// Parses the YAML text of a process-exporter config, as its YAML reader (Go's
/// yaml.v2) reads it: of two equal keys of a map the last counts, `<<` merges
/// a map (or a list of maps) in at its place, and a text without a
/// `process_names` list (empty, comments only, `process_names:` alone) has
/// no rules, which groups no process. Returns the rules, or sets `error` (a
/// message naming what is wrong, and its line where there is one).
std::vector<pe_rule> parse_pe_config(std::string_view yaml, std::string& error);

/// "" when `expr` is in Go's regexp syntax as far as RE2 can tell; else why
/// Go refuses it (RE2 takes `\C`, one byte, which Go's regexp has not).
std::string go_regexp_refusal(std::string_view expr);

/// What a classifier needs to know about a process beyond its snapshot entry;
/// read from /proc only when the grouping uses it.
struct process_facts {
    std::string exe;                   ///< the path of its executable ("" when unreadable)
    std::string argv0;                 ///< first word of its command line
    std::string cmdline;               ///< the command line, words joined by spaces
    std::string cgroup;                ///< the v2 path (the "0::" line), else the first line's path
    std::vector<std::string> cgroups;  ///< the path of every line, in order ({{.Cgroups}})
    /// Its name as /proc's stat shows it ("" when unread): a kernel thread's
    /// can be longer than the 15 bytes of its comm (a worker's carries its
    /// workqueue, as in `kworker/0:1H-kblockd`).
    std::string name;
    /// The command line is not empty (a kernel thread's and a zombie's are):
    /// process-exporter then takes {{.ExeBase}} and {{.ExeFull}} from argv[0],
    /// else from the comm, and its `exe:` matcher needs argv[0].
    bool has_cmdline = false;
    /// The command line could not be read (the process ended, or access was
    /// refused): nothing can be decided from these facts.
    bool unreadable = false;
};

/// The facts of an argument area as /proc/<pid>/cmdline reads it (or an
/// exec record carries it), split as process-exporter's procfs splits it.
process_facts command_line_facts(std::string_view area);

/// Go's filepath.Base: the last element of `path` after trailing slashes are
/// removed; "." for "", "/" for slashes alone.
std::string go_base(std::string_view path);

/// What the rules say of a process.
struct verdict {
    enum class kind {
        matched,    ///< a rule matched: `group` ("" when --include/--exclude leave it out)
        unmatched,  ///< no rule matches, whatever the facts not known
        unknown,    ///< a rule needs facts that are not known (an exit record's process)
    };
    kind k = kind::unmatched;
    std::string group;
};

class classifier {
public:
    /// Builds the regexes and loads the config file. Errors: error_kind::usage
    /// for a bad --include/--exclude regex or -procnames/-namemapping,
    /// error_kind::config for a config file that cannot be read or used.
    static outcome<std::unique_ptr<classifier>> make(const serve_options& opts);

    /// The group of a live process; nullopt when excluded or unmatched.
    /// With `kept`, the facts the rules were matched against are stored there
    /// (for a child that forks and never execs: it has the same ones).
    std::optional<std::string> group_of(const snapshot_process& p, process_facts* kept = nullptr);
    /// The rules' verdict on a live process (uses_config()): unknown when its
    /// command line could not be read (it ended meanwhile).
    verdict rules_verdict(const snapshot_process& p, process_facts* kept = nullptr);
    /// The verdict on a process known only from its exit record: by its comm
    /// and uid, and `known` (its own command line's facts, from its exec
    /// record; or its parent's, when it forked and never exec'd) or nothing;
    /// unknown when a rule needs what the record does not say.
    verdict ended_verdict(std::string_view name, uid_t uid, const process_facts* known);
    /// The group of a process known only from its exit record, without
    /// config rules; nullopt when excluded, or when the grouping needs what a
    /// record does not say (its executable path or cgroup).
    std::optional<std::string> group_of_ended(std::string_view name, uid_t uid);

    /// process-exporter's rules name the groups (--config, -procnames, -namemapping).
    /// A config without rules groups no process.
    [[nodiscard]] bool uses_config() const noexcept { return uses_config_; }
    /// Some rule needs the executable or the command line.
    [[nodiscard]] bool rules_need_facts() const noexcept { return need_facts_; }
    /// Some rule needs the cgroups ({{.Cgroups}}), which an exec record does not carry.
    [[nodiscard]] bool rules_need_cgroups() const noexcept { return need_cgroups_; }

private:
    classifier() = default;
    std::optional<std::string> filter(std::string group);
    /// A live process's pid and start tick, for the templates that show them.
    struct live_process {
        pid_t pid;
        std::uint64_t start_ticks;
    };
    verdict apply_rules(std::string_view comm, uid_t uid, const live_process* live, const process_facts* f);
    std::string start_time_text(std::uint64_t start_ticks) const;
    std::string user_name(uid_t uid);
    process_facts facts(pid_t pid, bool exe, bool cmdline, bool cgroup) const;

    group_by by_ = group_by::name;
    std::string proc_root_;
    std::shared_ptr<const pattern> include_, exclude_;
    std::vector<pe_rule> rules_;
    bool uses_config_ = false;
    bool need_facts_ = false;
    bool need_cgroups_ = false;
    std::int64_t boot_seconds_ = 0;  ///< read_boot_seconds(), once, as process-exporter does
    long ticks_per_second_ = 100;
    std::unordered_map<uid_t, std::string> users_;
    std::unordered_map<std::string, std::optional<std::string>> filtered_;
};

/// The "btime N" line of <proc_root>/stat: the boot instant in whole
/// seconds, as process-exporter and the Go client read it.
std::optional<std::int64_t> read_boot_seconds(const std::string& proc_root);

}  // namespace proctimes::cli::serve
