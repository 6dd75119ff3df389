// SPDX-License-Identifier: MIT
#include "serve/pe/goflags.hpp"

#include <re2/re2.h>

#include <map>
#include <optional>
#include <string_view>

#include "utf8.hpp"

namespace proctimes::cli::serve {
namespace {

// Go's strconv.ParseBool.
std::optional<bool> go_bool(std::string_view v) {
    for (const char* t : {"1", "t", "T", "TRUE", "true", "True"})
        if (v == t) return true;
    for (const char* f : {"0", "f", "F", "FALSE", "false", "False"})
        if (v == f) return false;
    return std::nullopt;
}

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::size_t at = 0;
    for (;;) {
        const auto comma = s.find(',', at);
        out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return out;
}

// A path served over HTTP and shown in the index page: nothing to escape.
bool plain_path(const std::string& p) {
    if (p.size() < 2 || p.front() != '/') return false;
    for (const char c : p)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '.' ||
              c == '_' || c == '~' || c == '-'))
            return false;
    return true;
}

enum class kind { boolean, value };

}  // namespace

outcome<std::vector<pe_rule>> rules_from_procnames(const std::string& procnames, const std::string& namemapping) {
    const auto usage = [](std::string why) { return serve::error{error_kind::usage, std::move(why)}; };
    // comm -> regex (nullptr: the comm alone names the group); one entry per
    // comm, the last mapping of a comm winning, as process-exporter's map.
    std::map<std::string, std::shared_ptr<const re2::RE2>> mapping;
    std::vector<std::string> order;
    if (!namemapping.empty()) {
        const auto toks = split_commas(namemapping);
        if (toks.size() % 2 == 1)
            return usage("-namemapping: an odd number of comma-separated tokens (expected NAME,REGEX pairs)");
        for (std::size_t i = 0; i < toks.size(); ++i)
            if (toks[i].empty()) return usage("-namemapping: token " + std::to_string(i) + " is empty");
        for (std::size_t i = 0; i + 1 < toks.size(); i += 2) {
            if (const std::string why = go_regexp_refusal(toks[i + 1]); !why.empty())
                return usage("-namemapping: bad regex '" + toks[i + 1] + "': " + why);
            RE2::Options ro;
            ro.set_log_errors(false);
            auto re = std::make_shared<const re2::RE2>(toks[i + 1], ro);
            if (!re->ok()) return usage("-namemapping: bad regex '" + toks[i + 1] + "': " + re->error());
            if (mapping.find(toks[i]) == mapping.end()) order.push_back(toks[i]);
            mapping[toks[i]] = std::move(re);
        }
    }
    for (const auto& name : split_commas(procnames)) {
        if (name.empty() || mapping.find(name) != mapping.end()) continue;
        mapping.emplace(name, nullptr);
        order.push_back(name);
    }
    std::vector<pe_rule> rules;
    for (const auto& comm : order) {
        pe_rule r;
        r.comm = {comm};
        std::string fixed_template_error;  // "{{.Comm}}" always parses
        r.set_name("{{.Comm}}", fixed_template_error);
        if (const auto re = mapping[comm]) {
            r.mapping = [re, prefix = comm + ":"](std::string_view cmdline) -> std::optional<std::string> {
                std::string scratch;
                const std::string_view text = as_utf8(cmdline, scratch);
                const int n = re->NumberOfCapturingGroups();
                std::vector<re2::StringPiece> sub(static_cast<std::size_t>(n) + 1);
                if (!re->Match(text, 0, text.size(), RE2::UNANCHORED, sub.data(), n + 1)) return std::nullopt;
                for (int i = 1; i <= n; ++i) {
                    const re2::StringPiece& s = sub[static_cast<std::size_t>(i)];
                    if (s.data() != nullptr && !s.empty()) return prefix + std::string(s.data(), s.size());
                }
                return std::nullopt;
            };
        }
        rules.push_back(std::move(r));
    }
    return rules;
}

status apply_go_flags(const std::vector<std::string>& args, serve_options& o, go_flags_seen& seen) {
    const auto usage = [](std::string why) { return serve::error{error_kind::usage, std::move(why)}; };
    static const std::map<std::string, kind, std::less<>> known = {
        {"procnames", kind::value},          {"namemapping", kind::value},        {"children", kind::boolean},
        {"threads", kind::boolean},          {"recheck", kind::boolean},          {"config.path", kind::value},
        {"web.listen-address", kind::value}, {"web.telemetry-path", kind::value}, {"procfs", kind::value},
        {"gather-smaps", kind::boolean},     {"web.config.file", kind::value},
    };
    // process-exporter's flags whose meaning proctimes does not have yet.
    static const std::map<std::string, const char*, std::less<>> missing = {
        {"once-to-stdout-delay", "not implemented; 'proctimes serve --once' prints one scrape"},
        {"debug", "not implemented"},
        {"man", "not implemented; see docs/SERVE.md"},
        {"version", "not implemented; run 'proctimes --version'"},
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg.size() < 2 || arg[0] != '-' || arg == "--")
            return usage("unexpected argument '" + arg + "' (serve takes options only)");
        std::string_view body(arg);
        body.remove_prefix(body.substr(0, 2) == "--" ? 2 : 1);
        const auto eq = body.find('=');
        const std::string name(body.substr(0, eq));
        std::optional<std::string> value;
        if (eq != std::string_view::npos) value = std::string(body.substr(eq + 1));
        if (const auto m = missing.find(name); m != missing.end())
            return usage("-" + name + " (process-exporter's flag): " + m->second);
        const auto k = known.find(name);
        if (k == known.end()) return usage("unknown option '" + arg + "'");
        bool on = true;
        if (k->second == kind::boolean) {
            if (value) {
                const auto b = go_bool(*value);
                if (!b) return usage("-" + name + ": '" + *value + "' is not a boolean (true or false)");
                on = *b;
            }
        } else if (!value) {
            if (i + 1 >= args.size()) return usage("-" + name + " needs a value");
            value = args[++i];
        }
        if (name == "procnames") {
            o.procnames = *value;
            seen.grouping = true;
        } else if (name == "namemapping") {
            o.namemapping = *value;
            seen.grouping = true;
        } else if (name == "children") {
            o.children = on;
        } else if (name == "threads") {
            o.threads = on;
            seen.threads = true;
        } else if (name == "recheck") {
            o.recheck = on;
        } else if (name == "gather-smaps") {
            o.gather_smaps = on;
            seen.smaps = true;
        } else if (name == "config.path") {
            if (!o.config_file.empty() && o.config_file != *value)
                return usage("-config.path and --config name different files");
            o.config_file = *value;
            seen.config = true;
        } else if (name == "web.listen-address") {
            seen.listen = true;
            seen.listen_value = *value;
        } else if (name == "web.telemetry-path") {
            if (!plain_path(*value))
                return usage("-web.telemetry-path: '" + *value +
                             "' must start with '/', not be '/' alone, and hold only letters, digits and / . _ ~ -");
            o.metrics_path = *value;
        } else if (name == "web.config.file") {
            if (!o.web_config_file.empty() && o.web_config_file != *value)
                return usage("-web.config.file and --web-config name different files");
            o.web_config_file = *value;
        } else if (name == "procfs") {
            o.proc_root = *value;
        }
    }
    if (!o.config_file.empty() && (!o.procnames.empty() || !o.namemapping.empty()))
        return usage("-config.path cannot be used with -namemapping or -procnames");
    return ok();
}

}  // namespace proctimes::cli::serve
