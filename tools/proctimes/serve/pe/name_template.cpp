// SPDX-License-Identifier: MIT
#include "serve/pe/name_template.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>

namespace proctimes::cli::serve {
namespace {

constexpr std::string_view matches_prefix = ".Matches.";

bool is_identifier(std::string_view s) {
    if (s.empty()) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    });
}

void trim_spaces_right(std::string& s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
}

std::string_view trim_spaces_left(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
        s.remove_prefix(1);
    return s;
}

}  // namespace

std::optional<pe_name_template> pe_name_template::parse(std::string_view text, std::string& error) {
    pe_name_template t;
    t.text_ = std::string(text);
    std::string literal;
    bool trim_next = false;
    std::string_view rest = text;
    const auto flush = [&] {
        if (!literal.empty()) t.pieces_.push_back({field::text, std::move(literal)});
        literal.clear();
    };
    while (!rest.empty()) {
        const auto open = rest.find("{{");
        std::string_view before = rest.substr(0, open);
        if (trim_next) before = trim_spaces_left(before);
        literal.append(before);
        if (open == std::string_view::npos) break;
        const auto close = rest.find("}}", open + 2);
        if (close == std::string_view::npos) {
            error = "name template '" + std::string(text) + "': unclosed action";
            return std::nullopt;
        }
        std::string_view action = rest.substr(open + 2, close - open - 2);
        // "{{- " and " -}}" trim the white space before and after, as in Go.
        if (action.size() >= 2 && action[0] == '-' && action[1] == ' ') {
            trim_spaces_right(literal);
            action.remove_prefix(2);
        }
        trim_next = action.size() >= 2 && action[action.size() - 1] == '-' && action[action.size() - 2] == ' ';
        if (trim_next) action.remove_suffix(2);
        while (!action.empty() && action.front() == ' ') action.remove_prefix(1);
        while (!action.empty() && action.back() == ' ') action.remove_suffix(1);
        rest.remove_prefix(close + 2);
        if (action.size() >= 4 && action.substr(0, 2) == "/*" && action.substr(action.size() - 2) == "*/")
            continue;  // a comment
        flush();
        field f = field::stop;
        std::string key;
        if (action == ".Comm") {
            f = field::comm;
        } else if (action == ".ExeBase") {
            f = field::exe_base;
        } else if (action == ".ExeFull") {
            f = field::exe_full;
        } else if (action == ".Username") {
            f = field::username;
        } else if (action == ".PID") {
            f = field::pid;
        } else if (action == ".StartTime") {
            f = field::start_time;
        } else if (action == ".Cgroups") {
            f = field::cgroups;
        } else if (action == ".Matches") {
            f = field::matches;
        } else if (action.substr(0, matches_prefix.size()) == matches_prefix &&
                   is_identifier(action.substr(matches_prefix.size()))) {
            f = field::match;
            key = std::string(action.substr(matches_prefix.size()));
        } else if (action.size() > 1 && action[0] == '.' && is_identifier(action.substr(1))) {
            f = field::stop;  // a field process-exporter does not have: Go fails there
        } else {
            error = "name template '" + std::string(text) + "': the action '{{" + std::string(action) +
                    "}}' is not supported (only the fields .Comm, .ExeBase, .ExeFull, .Username, .PID, .StartTime, "
                    ".Cgroups, .Matches and .Matches.NAME)";
            return std::nullopt;
        }
        t.pieces_.push_back({f, std::move(key)});
    }
    flush();
    return t;
}

bool pe_name_template::uses(field f) const noexcept {
    for (const auto& p : pieces_) {
        if (p.f == f) return true;
        if (p.f == field::stop) return false;
    }
    return false;
}

std::string pe_name_template::render(const name_values& v) const {
    std::string out;
    for (const auto& p : pieces_) {
        switch (p.f) {
            case field::text:
                out += p.text;
                break;
            case field::comm:
                out += v.comm;
                break;
            case field::exe_base:
                out += v.exe_base;
                break;
            case field::exe_full:
                out += v.exe_full;
                break;
            case field::username:
                out += v.user;
                break;
            case field::pid:
                out += std::to_string(v.pid);
                break;
            case field::start_time:
                out += v.start_time;
                break;
            case field::cgroups:
                out += v.cgroups ? go_string_list(*v.cgroups) : std::string("[]");
                break;
            case field::match: {
                // The last rule's capture wins, as in process-exporter; a name
                // no regex has is Go's "<no value>".
                const std::pair<std::string, std::string>* found = nullptr;
                if (v.matches)
                    for (const auto& m : *v.matches)
                        if (m.first == p.text) found = &m;
                out += found ? std::string_view(found->second) : std::string_view("<no value>");
                break;
            }
            case field::matches: {
                static const std::vector<std::pair<std::string, std::string>> none;
                out += go_string_map(v.matches ? *v.matches : none);
                break;
            }
            case field::stop:
                return out;
        }
    }
    return out;
}

std::string go_time_string(std::int64_t seconds, std::int64_t nanoseconds) {
    seconds += nanoseconds / 1'000'000'000;
    nanoseconds %= 1'000'000'000;
    if (nanoseconds < 0) {
        nanoseconds += 1'000'000'000;
        --seconds;
    }
    const auto t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    if (::gmtime_r(&t, &tm) == nullptr) return {};
    char date[64];
    std::snprintf(date, sizeof date, "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
    std::string out = date;
    if (nanoseconds != 0) {
        char digits[16];
        std::snprintf(digits, sizeof digits, "%09lld", static_cast<long long>(nanoseconds));
        std::string frac = digits;
        while (frac.back() == '0') frac.pop_back();
        out += '.';
        out += frac;
    }
    out += " +0000 UTC";
    return out;
}

std::string go_string_list(const std::vector<std::string>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += ' ';
        out += v[i];
    }
    out += ']';
    return out;
}

std::string go_string_map(const std::vector<std::pair<std::string, std::string>>& entries) {
    std::map<std::string, std::string> sorted;
    for (const auto& [k, v] : entries) sorted[k] = v;
    std::string out = "map[";
    bool first = true;
    for (const auto& [k, v] : sorted) {
        if (!first) out += ' ';
        first = false;
        out += k;
        out += ':';
        out += v;
    }
    out += ']';
    return out;
}

}  // namespace proctimes::cli::serve
