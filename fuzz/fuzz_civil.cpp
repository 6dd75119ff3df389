// SPDX-License-Identifier: MIT
// Calendar and DOS conversions behind FileTimeToSystemTime,
// SystemTimeToFileTime, FileTimeToDosDateTime and DosDateTimeToFileTime.
#include <cstdint>
#include <cstring>

#include "check.hpp"
#include "proctimes/civil.hpp"

using namespace proctimes;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 12) return 0;
    std::uint64_t raw;
    std::memcpy(&raw, data, 8);
    const filetime ft{raw};

    // FILETIME → fields → FILETIME keeps every whole millisecond.
    if (auto c = civil_from_filetime(ft)) {
        FUZZ_CHECK(ft.ticks <= filetime_max);
        FUZZ_CHECK(c->month >= 1 && c->month <= 12 && c->day >= 1 && c->day <= 31);
        FUZZ_CHECK(c->day_of_week >= 0 && c->day_of_week <= 6);
        auto back = filetime_from_civil(*c);
        FUZZ_CHECK(back && back->ticks == ft.ticks / 10'000 * 10'000);
    } else {
        FUZZ_CHECK(ft.ticks > filetime_max);
    }
    // Arbitrary fields: either rejected or a FILETIME whose fields are the input.
    civil_time in;
    std::int16_t v[2];
    std::memcpy(v, data + 8, 4);
    in.year = 1601 + (raw % 29300);
    in.month = static_cast<int>((raw >> 16) % 14);
    in.day = static_cast<int>((raw >> 24) % 33);
    in.hour = static_cast<int>((raw >> 32) % 26);
    in.minute = static_cast<int>((raw >> 40) % 62);
    in.second = static_cast<int>((raw >> 48) % 62);
    in.millisecond = v[0];
    in.day_of_week = v[1];
    if (auto f = filetime_from_civil(in)) {
        auto c = civil_from_filetime(*f);
        FUZZ_CHECK(c);
        civil_time expect = in;
        expect.day_of_week = c->day_of_week;  // ignored as input
        FUZZ_CHECK(*c == expect);
    }
    // DOS words: a valid pair converts to a FILETIME and back unchanged.
    std::uint16_t date, time;
    std::memcpy(&date, data + 8, 2);
    std::memcpy(&time, data + 10, 2);
    if (auto f = filetime_from_dos(date, time)) {
        auto d = dos_from_filetime(*f);
        FUZZ_CHECK(d && d->date == date && d->time == time);
    }
    if (auto d = dos_from_filetime(ft)) FUZZ_CHECK(filetime_from_dos(d->date, d->time).has_value());
    return 0;
}
