// SPDX-License-Identifier: MIT
// The environment readers (settings.hpp) and setting_problems()
// (proctimes/settings.hpp).
#include "settings.hpp"

#include <array>

#include "backend/backend.hpp"
#include "parse/number.hpp"
#include "proctimes/settings.hpp"

namespace proctimes::inline v1::detail {
namespace {

bool same_word(std::string_view text, std::string_view word) noexcept {
    if (text.size() != word.size()) return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != word[i]) return false;
    }
    return true;
}

enum class kind : std::uint8_t { flag, number, path };

struct known_setting {
    const char* variable;
    kind type;
};

// Every variable the library reads (docs/API.md has the same table, with
// what each does).
constexpr std::array<known_setting, 7> known_settings{{
    {"PROCTIMES_EXIT_MONITOR", kind::flag},
    {"PROCTIMES_EXIT_RECORDS", kind::flag},
    {"PROCTIMES_EXIT_RECORDS_BPF", kind::flag},
    {"PROCTIMES_BPF_TASK_ITER", kind::flag},
    {"PROCTIMES_BPF_DEBUG", kind::flag},
    {"PROCTIMES_BPF_EXIT_RING_KIB", kind::number},
    {"PROCTIMES_ANCHOR_DIR", kind::path},
}};

}  // namespace

flag_value parse_flag(std::string_view text) noexcept {
    if (text.empty()) return flag_value::unset;
    for (const std::string_view w : {"1", "on", "true", "yes"})
        if (same_word(text, w)) return flag_value::on;
    for (const std::string_view w : {"0", "off", "false", "no"})
        if (same_word(text, w)) return flag_value::off;
    return flag_value::invalid;
}

flag_value env_flag(const char* name) noexcept {
    const auto v = platform_getenv(name, false);
    return v ? parse_flag(*v) : flag_value::unset;
}

std::optional<std::uint64_t> parse_setting_number(std::string_view text) noexcept {
    return parse::parse_whole_number(text);
}

result<std::optional<std::uint64_t>> env_number(const char* name) noexcept {
    const auto v = platform_getenv(name, false);
    if (!v || v->empty()) return std::optional<std::uint64_t>{};
    const auto n = parse_setting_number(*v);
    if (!n) return make_error_code(errc::invalid_argument);
    return std::optional<std::uint64_t>{*n};
}

std::optional<std::string> env_path(const char* name) noexcept {
    auto v = platform_getenv(name, true);
    if (!v || v->empty()) return std::nullopt;
    return v;
}

flag_value switch_setting::env() const noexcept {
    int e = env_.load(std::memory_order_relaxed);
    if (e < 0) {
        e = static_cast<int>(env_flag(variable_));
        env_.store(e, std::memory_order_relaxed);
    }
    return static_cast<flag_value>(e);
}

bool switch_setting::on() const noexcept {
    const int s = set_.load(std::memory_order_relaxed);
    if (s >= 0) return s == 1;
    switch (env()) {
        case flag_value::on:
            return true;
        case flag_value::off:
            return false;
        default:
            return default_.load(std::memory_order_relaxed);
    }
}

bool switch_setting::invalid_value_ignored() const noexcept {
    return set_.load(std::memory_order_relaxed) < 0 && env() == flag_value::invalid;
}

}  // namespace proctimes::inline v1::detail

namespace proctimes::inline v1 {

std::vector<setting_problem> setting_problems() {
    using namespace detail;
    std::vector<setting_problem> out;
    for (const known_setting& s : known_settings) {
        const auto v = platform_getenv(s.variable, s.type == kind::path);
        if (!v || v->empty()) continue;
        if (s.type == kind::flag && parse_flag(*v) == flag_value::invalid)
            out.push_back({s.variable, *v, "1/on/true/yes or 0/off/false/no"});
        else if (s.type == kind::number && !parse_setting_number(*v))
            out.push_back({s.variable, *v, "a whole decimal number"});
    }
    return out;
}

}  // namespace proctimes::inline v1
