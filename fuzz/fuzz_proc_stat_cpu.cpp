// SPDX-License-Identifier: MIT
// The /proc/stat "cpu" line parser against a simple reference: split the first
// "cpu " line on spaces and read each field with strtoull.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "parse/proc_stat_cpu.hpp"

using namespace proctimes::parse;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto r = parse_proc_stat_cpu(text);
    // Reference: the first line starting "cpu " with at least 4 fields, each
    // only digits and fitting 64 bits.
    std::size_t at = 0;
    std::string line;
    bool found = false;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string l = text.substr(at, end - at);
        if (l.size() > 4 && l.compare(0, 4, "cpu ") == 0) {
            line = l.substr(4);
            found = true;
            break;
        }
        at = end + 1;
    }
    std::vector<std::uint64_t> fields;
    bool ok = found;
    if (found) {
        std::size_t i = 0;
        while (i < line.size()) {
            if (line[i] == ' ') {
                ++i;
                continue;
            }
            std::size_t j = i;
            while (j < line.size() && line[j] != ' ') ++j;
            const std::string word = line.substr(i, j - i);
            if (word.find_first_not_of("0123456789") != std::string::npos) {
                ok = false;
                break;
            }
            errno = 0;
            const unsigned long long v = std::strtoull(word.c_str(), nullptr, 10);
            if (errno == ERANGE) {
                ok = false;
                break;
            }
            fields.push_back(v);
            i = j;
        }
        ok = ok && fields.size() >= 4;
    }
    FUZZ_CHECK(ok == r.has_value());
    if (r) {
        FUZZ_CHECK(r->user == fields[0] && r->nice == fields[1] && r->system == fields[2] && r->idle == fields[3]);
        FUZZ_CHECK(r->fields == static_cast<int>(fields.size() < 10 ? fields.size() : 10));
        if (fields.size() >= 8) FUZZ_CHECK(r->steal == fields[7]);
        FUZZ_CHECK(r->cpus >= 0);
    }
    return 0;
}
