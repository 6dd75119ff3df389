// SPDX-License-Identifier: MIT
// The machine-wide parsers (parse/machine.hpp) on any text: no crash, and
// what they accept prints back to text they parse to the same values.
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "parse/machine.hpp"

using namespace proctimes::parse;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    if (const auto load = parse_load_averages(text)) {
        for (double v : *load) FUZZ_CHECK(v >= 0 && v <= 1'000'000'001.0);
    }

    const auto mem = parse_meminfo_totals(text);
    if (mem.total_bytes) FUZZ_CHECK(*mem.total_bytes % 1024 == 0);
    if (mem.available_bytes) FUZZ_CHECK(*mem.available_bytes % 1024 == 0);
    if (mem.total_bytes || mem.available_bytes) {
        std::string again;
        if (mem.total_bytes) again += "MemTotal: " + std::to_string(*mem.total_bytes / 1024) + " kB\n";
        if (mem.available_bytes) again += "MemAvailable: " + std::to_string(*mem.available_bytes / 1024) + " kB\n";
        const auto m2 = parse_meminfo_totals(again);
        FUZZ_CHECK(m2.total_bytes == mem.total_bytes && m2.available_bytes == mem.available_bytes);
    }

    const auto cpus = parse_proc_stat_per_cpu(text);
    std::string again;
    for (const auto& c : cpus) {
        FUZZ_CHECK(c.cpu >= 0 && c.cpu <= (1 << 20));
        again += "cpu" + std::to_string(c.cpu);
        for (auto v : c.ticks) again += " " + std::to_string(v);
        again += "\n";
    }
    const auto cpus2 = parse_proc_stat_per_cpu(again);
    FUZZ_CHECK(cpus2.size() == cpus.size());
    for (std::size_t i = 0; i < cpus.size() && i < cpus2.size(); ++i)
        FUZZ_CHECK(cpus2[i].cpu == cpus[i].cpu && cpus2[i].ticks == cpus[i].ticks);
    return 0;
}
