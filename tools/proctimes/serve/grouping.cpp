// SPDX-License-Identifier: MIT
#include "serve/grouping.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "fd.hpp"
#include "serve/goflags.hpp"

namespace proctimes::cli::serve {
namespace {

std::string base_name(std::string_view path) {
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// A whole small /proc file without following the caller anywhere it could block:
// /proc/<pid>/{cmdline,cgroup} are procfs files; O_NONBLOCK guards a
// --proc-root tree that has a FIFO there.
std::string read_small(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return {};
    std::string s;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0 || s.size() > std::size_t{64} * 1024) break;
        s.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return s;
}

std::vector<std::string> string_list(const YAML::Node& n, const char* key, std::string& error) {
    std::vector<std::string> v;
    const YAML::Node list = n[key];
    if (!list) return v;
    if (!list.IsSequence()) {
        error = std::string("'") + key + "' must be a list";
        return v;
    }
    for (const auto& item : list) v.push_back(item.as<std::string>());
    return v;
}

}  // namespace

std::string render_name_template(std::string_view tmpl, std::string_view comm, std::string_view exe_base,
                                 std::string_view exe_full, std::string_view user, pid_t pid,
                                 const std::vector<std::pair<std::string, std::string>>& matches) {
    std::string out;
    while (!tmpl.empty()) {
        const auto open = tmpl.find("{{");
        const auto close = open == std::string_view::npos ? open : tmpl.find("}}", open + 2);
        if (close == std::string_view::npos) {
            out.append(tmpl);
            break;
        }
        out.append(tmpl.substr(0, open));
        std::string_view field = tmpl.substr(open + 2, close - open - 2);
        while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
        while (!field.empty() && field.back() == ' ') field.remove_suffix(1);
        constexpr std::string_view matches_prefix = ".Matches.";
        if (field == ".Comm") {
            out.append(comm);
        } else if (field == ".ExeBase") {
            out.append(exe_base);
        } else if (field == ".ExeFull") {
            out.append(exe_full);
        } else if (field == ".Username") {
            out.append(user);
        } else if (field == ".PID") {
            out += std::to_string(pid);
        } else if (field.substr(0, matches_prefix.size()) == matches_prefix) {
            const std::string_view key = field.substr(matches_prefix.size());
            // The last rule's capture wins, as in process-exporter.
            const auto it =
                std::find_if(matches.rbegin(), matches.rend(), [key](const auto& m) { return m.first == key; });
            out.append(it == matches.rend() ? std::string_view("<no value>") : std::string_view(it->second));
        } else {
            out.append(tmpl.substr(open, close + 2 - open));
        }
        tmpl.remove_prefix(close + 2);
    }
    return out;
}

bool pe_rule::needs_exe() const { return !exe.empty() || name_template.find("Exe") != std::string::npos; }

std::vector<pe_rule> parse_pe_config(std::string_view yaml, std::string& error) {
    std::vector<pe_rule> rules;
    try {
        const YAML::Node root = YAML::Load(std::string(yaml));
        const YAML::Node names = root["process_names"];
        if (!names || !names.IsSequence()) {
            error = "no 'process_names' list";
            return {};
        }
        for (const auto& entry : names) {
            if (!entry.IsMap()) {
                error = "a 'process_names' entry is not a map";
                return {};
            }
            pe_rule r;
            if (entry["name"]) r.name_template = entry["name"].as<std::string>();
            r.comm = string_list(entry, "comm", error);
            r.exe = string_list(entry, "exe", error);
            r.cmdline_text = string_list(entry, "cmdline", error);
            if (!error.empty()) return {};
            for (const auto& re : r.cmdline_text) {
                auto p = pattern::compile(re, error);
                if (!p) {
                    error = fmt::format("bad cmdline regex '{}': {}", re, error);
                    return {};
                }
                r.cmdline.push_back(std::move(p));
            }
            if (r.comm.empty() && r.exe.empty() && r.cmdline.empty()) {
                error = "a 'process_names' entry has none of comm, exe, cmdline";
                return {};
            }
            rules.push_back(std::move(r));
        }
    } catch (const std::exception& e) {
        error = e.what();
        return {};
    }
    return rules;
}

std::vector<pe_rule> read_pe_config(const std::string& path, std::string& error) {
    constexpr std::size_t max_config_bytes = std::size_t{1} << 20;
    std::string text;
    if (const auto ec = detail::read_file(path.c_str(), text, max_config_bytes)) {
        error = "cannot read " + path + ": " + (ec == std::errc::file_too_large ? "larger than 1 MiB" : ec.message());
        return {};
    }
    auto rules = parse_pe_config(text, error);
    if (!error.empty()) error = path + ": " + error;
    return rules;
}

std::unique_ptr<classifier> classifier::make(const serve_options& opts, std::string& error) {
    std::unique_ptr<classifier> c(new classifier);
    c->by_ = opts.grouping;
    c->proc_root_ = opts.proc_root;
    const std::pair<const std::string*, std::shared_ptr<const pattern>*> filters[] = {{&opts.include, &c->include_},
                                                                                      {&opts.exclude, &c->exclude_}};
    for (const auto& [text, slot] : filters) {
        if (text->empty()) continue;
        *slot = pattern::compile(*text, error);
        if (!*slot) {
            error = fmt::format("bad --{} regex '{}': {}", text == &opts.include ? "include" : "exclude", *text, error);
            return nullptr;
        }
    }
    if (!opts.config_file.empty()) {
        c->rules_ = read_pe_config(opts.config_file, error);
        if (!error.empty()) return nullptr;
    } else if (!opts.procnames.empty() || !opts.namemapping.empty()) {
        c->rules_ = rules_from_procnames(opts.procnames, opts.namemapping, error);
        if (!error.empty()) return nullptr;
        if (c->rules_.empty()) {
            error = "-procnames names no process";
            return nullptr;
        }
    }
    return c;
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

process_facts classifier::facts(pid_t pid, bool exe, bool cmdline, bool cgroup) const {
    process_facts f;
    const std::string dir = proc_root_ + "/" + std::to_string(pid);
    if (exe) {
        char buf[4096];
        const ssize_t n = ::readlink((dir + "/exe").c_str(), buf, sizeof buf - 1);
        if (n > 0) f.exe.assign(buf, static_cast<std::size_t>(n));
    }
    if (cmdline) {
        const std::string raw = read_small(dir + "/cmdline");
        f.argv0 = raw.substr(0, raw.find('\0'));
        f.cmdline = raw;
        while (!f.cmdline.empty() && f.cmdline.back() == '\0') f.cmdline.pop_back();
        for (char& ch : f.cmdline)
            if (ch == '\0') ch = ' ';
    }
    if (cgroup) {
        const std::string text = read_small(dir + "/cgroup");
        std::istringstream lines(text);
        std::string line, first;
        while (std::getline(lines, line)) {
            const auto c2 = line.find(':', line.find(':') + 1);
            if (c2 == std::string::npos) continue;
            const std::string path = line.substr(c2 + 1);
            if (first.empty()) first = path;
            if (line.rfind("0::", 0) == 0) {
                f.cgroup = path;
                break;
            }
        }
        if (f.cgroup.empty()) f.cgroup = first;
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

std::optional<std::string> classifier::apply_rules(std::string_view comm, uid_t uid, pid_t pid,
                                                   const process_facts* f) {
    for (const auto& r : rules_) {
        if (!r.comm.empty() && std::find(r.comm.begin(), r.comm.end(), comm) == r.comm.end()) continue;
        if (!r.exe.empty()) {
            if (!f) continue;
            bool any = false;
            for (const auto& e : r.exe) {
                const bool full = e.find('/') != std::string::npos;
                if ((full && (e == f->argv0 || e == f->exe)) ||
                    (!full && (e == base_name(f->argv0) || e == base_name(f->exe))))
                    any = true;
            }
            if (!any) continue;
        }
        std::vector<std::pair<std::string, std::string>> matches;
        if (!r.cmdline.empty()) {
            if (!f) continue;
            bool all = true;
            for (const auto& re : r.cmdline) all = all && re->search(f->cmdline, matches);
            if (!all) continue;
        }
        if (r.mapping) {
            if (!f) continue;
            auto name = r.mapping(f->cmdline);
            if (!name) continue;
            return filter(std::move(*name));
        }
        const std::string full = f ? (f->exe.empty() ? f->argv0 : f->exe) : std::string(comm);
        const std::string base = f ? base_name(full) : std::string(comm);
        return filter(render_name_template(r.name_template, comm, base, full, user_name(uid), pid, matches));
    }
    return std::nullopt;
}

std::optional<std::string> classifier::group_of(const snapshot_process& p) {
    const std::string comm(shown_name(p.name.view()));
    if (!rules_.empty()) {
        bool need = false;
        for (const auto& r : rules_) need = need || r.needs_facts();
        if (!need) return apply_rules(comm, p.uid, p.pid(), nullptr);
        const process_facts f = facts(p.pid(), true, true, false);
        return apply_rules(comm, p.uid, p.pid(), &f);
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
    if (!rules_.empty()) {
        for (const auto& r : rules_)
            if (r.needs_facts()) return std::nullopt;  // a record has no exe or cmdline
        return apply_rules(name, uid, 0, nullptr);
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
