// SPDX-License-Identifier: MIT
// process-exporter's config file, read as its YAML reader (Go's yaml.v2)
// reads it: see parse_pe_config() in grouping.hpp and docs/SERVE.md.
#include <algorithm>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "serve/files.hpp"
#include "serve/pe/grouping.hpp"
#include "utf8.hpp"

namespace proctimes::cli::serve {
namespace {

// Where in the text a node is, for a message: "line N: ".
std::string at_line(const YAML::Node& n) {
    const YAML::Mark m = n.Mark();
    return m.is_null() ? std::string() : fmt::format("line {}: ", m.line + 1);
}

// What a scalar is as Go's yaml.v2 reads it into a string: its text, and ""
// for a null (`~`, `null`, nothing), where yaml-cpp would say "null".
std::string go_string(const YAML::Node& n) { return n.IsNull() ? std::string() : n.Scalar(); }

// A YAML map as Go's yaml.v2 reads one into a struct: its keys in order, a
// later one of the same name replacing the earlier one's value, and a merge
// key `<<` replaced, where it stands, by the keys of the map it names (of a
// list of maps, the first one's keys taking precedence). Merges are bounded
// (aliases could make one map merge itself, or a chain double at each step).
constexpr std::size_t max_keys_read = 1'000'000;

class go_map {
public:
    /// `budget`: the keys every map of one config may still read, merges included.
    explicit go_map(std::size_t& budget) : budget_(budget) {}
    bool read(const YAML::Node& map, std::string& error) { return read(map, 0, error); }
    /// The value of `key`, or nullptr when absent.
    [[nodiscard]] const YAML::Node* find(std::string_view key) const {
        for (const auto& [k, v] : keys_)
            if (k == key) return &v;
        return nullptr;
    }

private:
    static constexpr int max_merge_depth = 64;

    static bool is_merge_key(const YAML::Node& k) {
        // A plain `<<` (a quoted "<<" is an ordinary key), or one tagged !!merge.
        return k.IsScalar() && k.Scalar() == "<<" && (k.Tag() == "?" || k.Tag() == "tag:yaml.org,2002:merge");
    }

    bool read(const YAML::Node& map, int depth, std::string& error) {
        for (const auto& kv : map) {
            if (budget_ == 0) {
                error = fmt::format("{}merge keys (<<) expand to more than {} keys", at_line(kv.first), max_keys_read);
                return false;
            }
            --budget_;
            if (is_merge_key(kv.first)) {
                if (!merge(kv.second, depth + 1, error)) return false;
                continue;
            }
            if (!kv.first.IsScalar() && !kv.first.IsNull()) {
                error = at_line(kv.first) + "a map key that is not a string";
                return false;
            }
            std::string key = go_string(kv.first);
            auto it = std::find_if(keys_.begin(), keys_.end(), [&key](const auto& e) { return e.first == key; });
            if (it != keys_.end())
                it->second = kv.second;  // the last one counts, as in process-exporter
            else
                keys_.emplace_back(std::move(key), kv.second);
        }
        return true;
    }

    bool merge(const YAML::Node& value, int depth, std::string& error) {
        if (depth > max_merge_depth) {
            error = fmt::format("{}merge keys (<<) nested more than {} deep", at_line(value), max_merge_depth);
            return false;
        }
        if (value.IsMap()) return read(value, depth, error);
        if (value.IsSequence() &&
            std::all_of(value.begin(), value.end(), [](const YAML::Node& n) { return n.IsMap(); })) {
            for (std::size_t i = value.size(); i-- > 0;)  // backwards: the earlier maps take precedence
                if (!read(value[i], depth, error)) return false;
            return true;
        }
        error = at_line(value) + "a merge key (<<) needs a map or a list of maps as its value";
        return false;
    }

    std::vector<std::pair<std::string, YAML::Node>> keys_;
    std::size_t& budget_;
};

// A list of strings under `key` of an entry: absent or null is nullopt (no
// matcher), a list (even empty) its strings.
std::optional<std::vector<std::string>> string_list(const go_map& entry, const char* key, std::string& error) {
    const YAML::Node* list = entry.find(key);
    if (list == nullptr || list->IsNull()) return std::nullopt;
    if (!list->IsSequence()) {
        error = fmt::format("{}'{}' must be a list", at_line(*list), key);
        return std::nullopt;
    }
    std::vector<std::string> v;
    for (const auto& item : *list) {
        if (!item.IsScalar() && !item.IsNull()) {
            error = fmt::format("{}an item of '{}' is not a string", at_line(item), key);
            return std::nullopt;
        }
        v.push_back(go_string(item));
    }
    return v;
}

// What YAML (and so process-exporter's reader) allows in a file: tab, LF, CR,
// printable ASCII, NEL, and the rest of Unicode but for surrogates, U+FFFE
// and U+FFFF.
bool yaml_allowed(char32_t c) {
    return c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 || (c >= 0xA0 && c <= 0xD7FF) ||
           (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

// The first byte that is not UTF-8, or character YAML does not allow, as
// "line L, column C: ..."; "" when there is none.
std::string first_refused_character(std::string_view text) {
    std::size_t line = 1, column = 1;
    while (!text.empty()) {
        const std::size_t n = utf8_length(text);
        const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
        if (n == 0) return fmt::format("line {}, column {} (byte 0x{:02X}): not UTF-8", line, column, byte(0));
        char32_t c = n == 1 ? byte(0) : byte(0) & (0x7Fu >> n);
        for (std::size_t i = 1; i < n; ++i) c = (c << 6) | (byte(i) & 0x3Fu);
        if (!yaml_allowed(c))
            return fmt::format("line {}, column {}: the character U+{:04X}, which YAML does not allow", line, column,
                               static_cast<std::uint32_t>(c));
        if (c == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
        text.remove_prefix(n);
    }
    return {};
}

}  // namespace

pe_rule::pe_rule() {
    std::string unused;
    set_name(name_template, unused);
}

bool pe_rule::set_name(std::string_view text, std::string& error) {
    auto t = pe_name_template::parse(text, error);
    if (!t) return false;
    name_template = std::string(text);
    name = std::move(*t);
    return true;
}

bool pe_rule::needs_exe() const {
    return !exe.empty() || name.uses(pe_name_template::field::exe_base) || name.uses(pe_name_template::field::exe_full);
}

std::string go_regexp_refusal(std::string_view expr) {
    // RE2 is Go's syntax but for \C (any byte), which Go's parser refuses as
    // an invalid escape, in a class too; between \Q and \E all is literal.
    for (std::size_t i = 0; i + 1 < expr.size(); ++i) {
        if (expr[i] != '\\') continue;
        if (expr[i + 1] == 'Q') {
            const auto end = expr.find("\\E", i + 2);
            if (end == std::string_view::npos) break;
            i = end + 1;
            continue;
        }
        if (expr[i + 1] == 'C') return "invalid escape sequence: `\\C` (Go's regexp has no single-byte match)";
        ++i;
    }
    return {};
}

std::vector<pe_rule> parse_pe_config(std::string_view yaml, std::string& error) {
    // Go's YAML reader refuses a byte that is not UTF-8 and a control
    // character anywhere (comments too); UTF-16 with a byte order mark is
    // read as such by both.
    const bool utf16 =
        yaml.size() >= 2 && ((yaml[0] == '\xFF' && yaml[1] == '\xFE') || (yaml[0] == '\xFE' && yaml[1] == '\xFF'));
    if (!utf16) {
        if (const std::string where = first_refused_character(yaml); !where.empty()) {
            error = where + " (process-exporter refuses it too)";
            return {};
        }
    }
    std::vector<pe_rule> rules;
    try {
        const YAML::Node root = YAML::Load(std::string(yaml));
        // Nothing (an empty file, comments only): no rules, as in process-exporter.
        if (!root.IsDefined() || root.IsNull()) return {};
        if (!root.IsMap()) {
            error = at_line(root) + "the top level is not a map (expected 'process_names:')";
            return {};
        }
        std::size_t budget = max_keys_read;
        go_map top(budget);
        if (!top.read(root, error)) return {};
        const YAML::Node* names = top.find("process_names");
        if (names == nullptr || names->IsNull()) return {};  // no rules: no process is grouped
        if (!names->IsSequence()) {
            error = at_line(*names) + "'process_names' must be a list";
            return {};
        }
        for (const auto& item : *names) {
            if (!item.IsMap()) {
                error = at_line(item) + "a 'process_names' entry is not a map";
                return {};
            }
            go_map entry(budget);
            if (!entry.read(item, error)) return {};
            pe_rule r;
            // `name:` empty or absent is process-exporter's default, {{.ExeBase}}.
            if (const YAML::Node* name = entry.find("name"); name != nullptr) {
                if (!name->IsScalar() && !name->IsNull()) {
                    error = at_line(*name) + "'name' must be a string";
                    return {};
                }
                const std::string text = go_string(*name);
                if (!text.empty() && !r.set_name(text, error)) {
                    error.insert(0, at_line(*name));
                    return {};
                }
            }
            const auto comm = string_list(entry, "comm", error);
            const auto exe = string_list(entry, "exe", error);
            const auto cmdline = string_list(entry, "cmdline", error);
            if (!error.empty()) return {};
            if (!comm && !exe && !cmdline) {
                error = at_line(item) + "a 'process_names' entry has none of comm, exe, cmdline";
                return {};
            }
            // An empty list is a matcher all the same: `comm: []` or `exe: []`
            // matches no process, `cmdline: []` (no regex to fail) every one.
            r.matches_nothing = (comm && comm->empty()) || (exe && exe->empty());
            if (comm) r.comm = *comm;
            if (exe) r.exe = *exe;
            if (cmdline) r.cmdline_text = *cmdline;
            for (const auto& re : r.cmdline_text) {
                std::string why = go_regexp_refusal(re);
                auto p = why.empty() ? pattern::compile(re, why) : nullptr;
                if (!p) {
                    error = fmt::format("{}bad cmdline regex '{}': {}", at_line(item), re, why);
                    return {};
                }
                r.cmdline.push_back(std::move(p));
            }
            rules.push_back(std::move(r));
        }
    } catch (const YAML::DeepRecursion& e) {
        error = fmt::format(
            "line {}, column {}: maps and lists nested more than {} deep, the most this YAML reader takes "
            "(process-exporter's takes 10000)",
            e.mark.line + 1, e.mark.column + 1, e.depth() - 1);
        return {};
    } catch (const std::exception& e) {
        error = e.what();
        return {};
    }
    return rules;
}

outcome<std::vector<pe_rule>> read_pe_config(const std::string& path) {
    constexpr std::size_t max_config_bytes = std::size_t{1} << 20;
    const auto text = read_regular_file(path, max_config_bytes);
    if (!text)
        return {error_kind::config,
                "cannot read " + path + ": " +
                    (text.error() == std::errc::file_too_large ? "larger than 1 MiB" : text.error().message())};
    std::string error;
    auto rules = parse_pe_config(*text, error);
    if (!error.empty()) return {error_kind::config, path + ": " + error};
    return rules;
}
}  // namespace proctimes::cli::serve
