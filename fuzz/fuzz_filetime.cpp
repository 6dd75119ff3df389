// SPDX-License-Identifier: MIT
// FILETIME conversions: range checks and round trips for instants and
// durations in several std::chrono units.
#include <chrono>
#include <cstdint>
#include <cstring>

#include "check.hpp"
#include "proctimes/filetime.hpp"

using namespace std::chrono;
using namespace proctimes;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 8) return 0;
    std::uint64_t raw;
    std::memcpy(&raw, data, 8);
    const filetime ft{raw};

    // FILETIME → instant → FILETIME is the identity where the instant fits.
    if (auto t = time_from_filetime<nanoseconds>(ft)) {
        FUZZ_CHECK(ft.ticks <= filetime_max);
        auto back = filetime_from_time(*t);
        FUZZ_CHECK(back && *back == ft);
    }
    if (auto t = time_from_filetime<filetime_duration>(ft)) {
        auto back = filetime_from_time(*t);
        FUZZ_CHECK(back && *back == ft);
    } else {
        FUZZ_CHECK(ft.ticks > filetime_max);
    }
    // Coarser units floor: the result is never later than the FILETIME.
    if (auto s = time_from_filetime<seconds>(ft)) {
        auto back = filetime_from_time(*s);
        FUZZ_CHECK(back && back->ticks <= ft.ticks && ft.ticks - back->ticks < 10'000'000);
    }
    // Durations.
    if (auto d = duration_from_filetime<nanoseconds>(ft)) {
        FUZZ_CHECK(d->count() >= 0);
        FUZZ_CHECK(filetime_from_duration(*d) == ft);
    }
    if (auto d = duration_from_filetime<microseconds>(ft)) {
        auto back = filetime_from_duration(*d);
        FUZZ_CHECK(back && back->ticks <= ft.ticks && ft.ticks - back->ticks < 10);
    }
    // Any int64 count of nanoseconds as an instant converts (1677..2262 is
    // inside 1601..30828) and floors.
    const sys_time<nanoseconds> t{nanoseconds{static_cast<std::int64_t>(raw)}};
    auto f = filetime_from_time(t);
    FUZZ_CHECK(f.has_value());
    auto back = time_from_filetime<nanoseconds>(*f);
    if (back) FUZZ_CHECK(*back <= t && t - *back < nanoseconds{100});
    // Negative durations are rejected, others convert.
    const nanoseconds d{static_cast<std::int64_t>(raw)};
    FUZZ_CHECK(filetime_from_duration(d).has_value() == (d.count() >= 0));
    return 0;
}
