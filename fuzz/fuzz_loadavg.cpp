// SPDX-License-Identifier: MIT
// /proc/loadavg (parse/loadavg.hpp), against a reference parser written the
// plain way: split on single spaces, take field 4, require DIGITS/DIGITS that
// fit int64. A parsed line also prints back to a line that parses the same.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "parse/loadavg.hpp"

using namespace proctimes::parse;

namespace {

std::optional<std::uint64_t> digits(const std::string& s) {
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (char ch : s) {
        if (ch < '0' || ch > '9') return std::nullopt;
        const auto d = static_cast<std::uint64_t>(ch - '0');
        if (v > (static_cast<std::uint64_t>(INT64_MAX) - d) / 10) return std::nullopt;  // past int64
        v = v * 10 + d;
    }
    return v;
}

std::optional<task_load> reference(std::string_view text) {
    std::vector<std::string> fields(1);
    for (char ch : text) {
        if (ch == ' ')
            fields.emplace_back();
        else
            fields.back() += ch;
    }
    if (fields.size() < 4) return std::nullopt;
    const std::string& f = fields[3];
    const auto slash = f.find('/');
    if (slash == std::string::npos) return std::nullopt;
    auto running = digits(f.substr(0, slash));
    auto total = digits(f.substr(slash + 1));
    if (!running || !total) return std::nullopt;
    return task_load{*running, *total};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto r = parse_loadavg_tasks(text);
    const auto ref = reference(text);
    FUZZ_CHECK(r.has_value() == ref.has_value());
    if (!r) return 0;
    FUZZ_CHECK(r->running == ref->running && r->total == ref->total);
    const std::string line = "0.00 0.00 0.00 " + std::to_string(r->running) + "/" + std::to_string(r->total) + " 1\n";
    const auto again = parse_loadavg_tasks(line);
    FUZZ_CHECK(again && again->running == r->running && again->total == r->total);
    return 0;
}
