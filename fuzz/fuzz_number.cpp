// SPDX-License-Identifier: MIT
// Command-line numbers (parse/number.hpp): whatever the input, the parser
// returns a non-negative duration whose decimal form parses back to itself,
// or nothing; it never overflows (UBSan watches the arithmetic).
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "parse/number.hpp"

using namespace proctimes::parse;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (const auto n = parse_whole_number(text)) FUZZ_CHECK(parse_whole_number(std::to_string(*n)) == n);
    const auto v = parse_decimal_seconds(text);
    if (!v) return 0;
    FUZZ_CHECK(v->count() >= 0);
    const auto ns = v->count();
    std::string frac = std::to_string(ns % 1'000'000'000);
    frac.insert(0, 9 - frac.size(), '0');
    const auto again = parse_decimal_seconds(std::to_string(ns / 1'000'000'000) + "." + frac);
    FUZZ_CHECK(again && *again == *v);
    return 0;
}
