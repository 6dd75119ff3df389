// SPDX-License-Identifier: MIT
#include "serve/pe/grouping.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "proctimes/resources.hpp"
#include "serve/pe/goflags.hpp"

namespace proctimes::cli::serve {

// The "btime N" line of <proc>/stat: the boot instant in whole seconds.
std::optional<std::int64_t> read_boot_seconds(const std::string& proc_root) {
    const auto v = read_boot_time_seconds(proc_root);
    if (!v) return std::nullopt;
    return *v;
}

std::string go_base(std::string_view path) {
    if (path.empty()) return ".";
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    if (path == "/") return "/";
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

outcome<std::unique_ptr<classifier>> classifier::make(const serve_options& opts) {
    std::unique_ptr<classifier> c(new classifier);
    std::string error;
    c->by_ = opts.grouping;
    c->proc_root_ = opts.proc_root;
    const std::pair<const std::string*, std::shared_ptr<const pattern>*> filters[] = {{&opts.include, &c->include_},
                                                                                      {&opts.exclude, &c->exclude_}};
    for (const auto& [text, slot] : filters) {
        if (text->empty()) continue;
        error = go_regexp_refusal(*text);
        if (error.empty()) *slot = pattern::compile(*text, error);
        if (!*slot) {
            return serve::error{
                error_kind::usage,
                fmt::format("bad --{} regex '{}': {}", text == &opts.include ? "include" : "exclude", *text, error)};
        }
    }
    if (!opts.config_file.empty()) {
        auto rules = read_pe_config(opts.config_file);
        if (!rules) return rules.error();
        c->rules_ = std::move(*rules);
        c->uses_config_ = true;  // without rules too: then no process is in a group
    } else if (!opts.procnames.empty() || !opts.namemapping.empty()) {
        auto rules = rules_from_procnames(opts.procnames, opts.namemapping);
        if (!rules) return rules.error();
        c->rules_ = std::move(*rules);
        if (c->rules_.empty()) return serve::error{error_kind::usage, "-procnames names no process"};
        c->uses_config_ = true;
    }
    bool need_start = false;
    for (const auto& r : c->rules_) {
        c->need_facts_ = c->need_facts_ || r.needs_facts();
        c->need_cgroups_ = c->need_cgroups_ || r.name.uses(pe_name_template::field::cgroups);
        need_start = need_start || r.name.uses(pe_name_template::field::start_time);
    }
    if (need_start) {
        // {{.StartTime}} is the boot time of /proc/stat (whole seconds, read
        // once) plus the start tick, as process-exporter computes it, so
        // that both name a process alike.
        const auto boot = read_boot_seconds(c->proc_root_);
        if (!boot)
            return serve::error{
                error_kind::config,
                fmt::format("{{{{.StartTime}}}} needs the boot time: no btime line can be read in {}/stat",
                            c->proc_root_)};
        c->boot_seconds_ = *boot;
        const long hz = ::sysconf(_SC_CLK_TCK);
        if (hz > 0) c->ticks_per_second_ = hz;
    }
    return c;
}

std::string classifier::start_time_text(std::uint64_t start_ticks) const {
    const auto hz = static_cast<std::uint64_t>(ticks_per_second_);
    const auto seconds = static_cast<std::int64_t>(start_ticks / hz);
    const auto ns = static_cast<std::int64_t>((start_ticks % hz) * 1'000'000'000 / hz);
    return go_time_string(boot_seconds_ + seconds, ns);
}

std::string classifier::user_name(uid_t uid) {
    if (auto it = users_.find(uid); it != users_.end()) return it->second;
    std::string name = std::to_string(uid);
    passwd pw{};
    passwd* res = nullptr;
    char buf[1024];
    if (::getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res) name = res->pw_name;
    users_.emplace(uid, name);
    return name;
}

process_facts command_line_facts(std::string_view area) {
    // As Go's procfs splits it: nothing read is no command line; else the
    // trailing NULs are cut and the rest split at each NUL.
    process_facts f;
    f.has_cmdline = !area.empty();
    while (!area.empty() && area.back() == '\0') area.remove_suffix(1);
    f.cmdline = area;
    f.argv0 = f.cmdline.substr(0, f.cmdline.find('\0'));
    for (char& ch : f.cmdline)
        if (ch == '\0') ch = ' ';
    return f;
}

process_facts classifier::facts(pid_t pid, bool exe, bool cmdline, bool cgroup) const {
    process_facts f;
    resource_options o;
    o.proc_root = proc_root_;
    o.families = resource_family::none;
    if (exe) o.families |= resource_family::executable;
    if (cmdline) o.families |= resource_family::command_line;
    if (cgroup) o.families |= resource_family::cgroups;
    const auto r = read_process_resources(pid, o);
    if (r) f.name = r->name;
    if (r && r->executable) f.exe = *r->executable;
    if (cmdline) {
        process_facts c = command_line_facts(r && r->command_line ? std::string_view(*r->command_line) : "");
        f.cmdline = std::move(c.cmdline);
        f.argv0 = std::move(c.argv0);
        f.has_cmdline = c.has_cmdline;
        f.unreadable = !r || !r->command_line;
    }
    if (cgroup) {
        // The rules' facts are incomplete without it: decided at its next sight.
        if ((!r || !r->cgroups) && cmdline) f.unreadable = true;
        if (r && r->cgroups)
            for (const resource_cgroup& line : *r->cgroups) {
                f.cgroups.push_back(line.path);  // in the file's order
                if (line.hierarchy == "0" && line.controllers.empty() && f.cgroup.empty()) f.cgroup = line.path;
            }
        if (f.cgroup.empty() && !f.cgroups.empty()) f.cgroup = f.cgroups.front();
    }
    return f;
}

std::optional<std::string> classifier::filter(std::string group) {
    if (!include_ && !exclude_) return group;
    if (auto it = filtered_.find(group); it != filtered_.end()) return it->second;
    std::optional<std::string> r = group;
    if (include_ && !include_->search(group)) r.reset();
    if (r && exclude_ && exclude_->search(group)) r.reset();
    if (filtered_.size() > 100000) filtered_.clear();  // bounded: names are chosen by whoever runs processes
    filtered_.emplace(group, r);
    return r;
}

verdict classifier::apply_rules(std::string_view comm, uid_t uid, const live_process* live, const process_facts* f) {
    verdict v;
    for (const auto& r : rules_) {
        if (r.matches_nothing) continue;
        if (!r.comm.empty() && std::find(r.comm.begin(), r.comm.end(), comm) == r.comm.end()) continue;
        // This rule might match, but what it needs is not known (an exit
        // record's process has no command line, cgroups or start tick to show).
        if ((!f && r.needs_facts()) || (!live && r.needs_live_process())) {
            v.k = verdict::kind::unknown;
            return v;
        }
        // As process-exporter: `exe:` and {{.ExeBase}}/{{.ExeFull}} come from
        // argv[0] (the comm when the command line is empty), never from
        // /proc/<pid>/exe. An `exe:` entry with a '/' is compared whole with
        // argv[0], under its base name; of two entries with one base name,
        // the last one counts (a Go map keyed by base name).
        const bool has_cmdline = f && f->has_cmdline;
        const std::string argv0 = f ? f->argv0 : std::string();
        if (!r.exe.empty()) {
            if (!has_cmdline) continue;
            const std::string base = go_base(argv0);
            const std::string* want = nullptr;
            for (const auto& e : r.exe)
                if ((e.find('/') != std::string::npos ? go_base(e) : e) == base) want = &e;
            if (want == nullptr) continue;
            if (want->find('/') != std::string::npos && *want != argv0) continue;
        }
        std::vector<std::pair<std::string, std::string>> matches;
        if (!r.cmdline.empty()) {
            bool all = true;
            // The groups only when the name shows them.
            const bool captures =
                r.name.uses(pe_name_template::field::match) || r.name.uses(pe_name_template::field::matches);
            for (const auto& re : r.cmdline)
                all = all && (captures ? re->search_captures(f->cmdline, matches) : re->search(f->cmdline));
            if (!all) continue;
        }
        v.k = verdict::kind::matched;
        if (r.mapping) {
            auto name = r.mapping(f->cmdline);
            if (!name) {
                v.k = verdict::kind::unmatched;
                continue;
            }
            v.group = filter(std::move(*name)).value_or(std::string());
            return v;
        }
        const std::string full = has_cmdline ? argv0 : std::string(comm);
        const std::string base = has_cmdline ? go_base(full) : std::string(comm);
        const std::string user = user_name(uid);
        const std::string start = live && r.name.uses(pe_name_template::field::start_time)
                                      ? start_time_text(live->start_ticks)
                                      : std::string();
        name_values values{comm, base, full, user, live ? live->pid : 0, start, f ? &f->cgroups : nullptr, &matches};
        v.group = filter(r.name.render(values)).value_or(std::string());
        return v;
    }
    v.k = verdict::kind::unmatched;
    return v;
}

verdict classifier::rules_verdict(const snapshot_process& p, process_facts* kept) {
    std::string comm(shown_name(p.name.view()));
    const live_process live{p.pid(), p.identity.start_ticks};
    // A kernel thread is named as /proc names it, as process-exporter reads
    // it: an eBPF walk gives its 15-byte comm, without a worker's workqueue.
    const auto proc_name = [&](const process_facts& got) {
        if (p.kernel_thread && !got.name.empty()) comm = shown_name(got.name);
    };
    if (!need_facts_) {
        if (p.kernel_thread) proc_name(facts(p.pid(), false, false, false));
        return apply_rules(comm, p.uid, &live, nullptr);
    }
    process_facts f = facts(p.pid(), false, true, need_cgroups_);
    if (f.unreadable) {
        // Ended (or hidden) since the snapshot: decided at its next sight, if any.
        return verdict{verdict::kind::unknown, {}};
    }
    proc_name(f);
    verdict v = apply_rules(comm, p.uid, &live, &f);
    if (kept) *kept = std::move(f);
    return v;
}

verdict classifier::ended_verdict(std::string_view raw_name, uid_t uid, const process_facts* known) {
    return apply_rules(shown_name(raw_name), uid, nullptr, need_facts_ ? known : nullptr);
}

std::optional<std::string> classifier::group_of(const snapshot_process& p, process_facts* kept) {
    const std::string comm(shown_name(p.name.view()));
    if (uses_config_) {
        verdict v = rules_verdict(p, kept);
        if (v.k != verdict::kind::matched || v.group.empty()) return std::nullopt;
        return std::move(v.group);
    }
    switch (by_) {
        case group_by::name:
            return filter(comm);
        case group_by::user:
            return filter(p.uid == snapshot_process::unknown_uid ? std::string("?") : user_name(p.uid));
        case group_by::exe: {
            process_facts f = facts(p.pid(), true, false, false);
            // Kernel threads have no executable; group them under their name in brackets, as ps shows them.
            return filter(f.exe.empty() ? "[" + comm + "]" : f.exe);
        }
        case group_by::cgroup: {
            process_facts f = facts(p.pid(), false, false, true);
            return filter(f.cgroup.empty() ? std::string("?") : f.cgroup);
        }
    }
    return std::nullopt;
}

std::optional<std::string> classifier::group_of_ended(std::string_view raw_name, uid_t uid) {
    const std::string_view name = shown_name(raw_name);
    if (uses_config_) {
        verdict v = apply_rules(name, uid, nullptr, nullptr);  // a record has no exe, cmdline or pid
        if (v.k != verdict::kind::matched || v.group.empty()) return std::nullopt;
        return std::move(v.group);
    }
    switch (by_) {
        case group_by::name:
            return filter(std::string(name));
        case group_by::user:
            return filter(user_name(uid));
        default:
            return std::nullopt;
    }
}

}  // namespace proctimes::cli::serve
