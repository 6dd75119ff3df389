// SPDX-License-Identifier: MIT
// process-exporter `name:` templates (tools/proctimes/serve/pe/name_template.cpp):
// any text is either refused with a message or parsed; a parsed template
// renders without reading its values as templates, and text without "{{"
// renders as itself. The first byte picks a time for go_time_string.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "check.hpp"
#include "serve/pe/name_template.hpp"

namespace serve = proctimes::cli::serve;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::string error;
    const auto t = serve::pe_name_template::parse(text, error);
    FUZZ_CHECK(t.has_value() == error.empty());
    if (!t) return 0;
    // Values that look like templates: they must come out as they are.
    const std::vector<std::string> cgroups{"{{.Comm}}", "/"};
    const std::vector<std::pair<std::string, std::string>> matches{{"a", "{{.PID}}"}};
    const serve::name_values v{"{{.Comm}}", "{{", "}}", "{{.Username}}", 7, "{{.StartTime}}", &cgroups, &matches};
    const std::string out = t->render(v);
    if (text.find("{{") == std::string_view::npos) FUZZ_CHECK(out == text);
    const auto seconds = static_cast<std::int64_t>(data[0]) * 86'400 * 365;
    const std::string when = serve::go_time_string(seconds, static_cast<std::int64_t>(size) * 10'000'000);
    FUZZ_CHECK(when.size() >= 29 && when.substr(when.size() - 10) == " +0000 UTC");
    return 0;
}
