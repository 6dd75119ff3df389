// SPDX-License-Identifier: MIT
// proctimes/filetime.hpp — Windows FILETIME values and std::chrono, both ways.
//
// A FILETIME is a count of 100 ns ticks. It is used for two different things,
// and this header keeps them apart, as abseil does for time vs duration:
//
//  * an INSTANT (creation, exit, system time): ticks since 1601-01-01 00:00:00
//    UTC, converted with filetime_from_time() / time_from_filetime();
//  * a DURATION (kernel time, user time): a plain count of ticks, converted with
//    filetime_from_duration() / duration_from_filetime().
//
// Range. Windows accepts FILETIME values 0 .. 0x7FFF'FFFF'FFFF'FFFF
// (1601-01-01 to 30828-09-14 02:48:05.4775807). A sys_time<nanoseconds> only
// spans 1677-09-21 .. 2262-04-11, so every conversion is checked and returns
// std::nullopt when the value is outside the range of its target. Nothing
// wraps, nothing is clamped.
//
// Rounding. Converting a finer value to FILETIME rounds toward negative
// infinity (floor) to a whole 100 ns tick, so an instant is never moved later
// than it was; converting FILETIME to a coarser std::chrono type also floors.
//
// std::chrono::file_clock is NOT FILETIME (libstdc++'s file_clock epoch is
// 2174-01-01) and is not used here.
//
// All functions are constexpr and noexcept; they accept durations with an
// integral representation of at most 64 bits.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <ratio>

namespace proctimes::inline v1 {

/// One FILETIME tick: 100 ns.
using filetime_duration = std::chrono::duration<std::int64_t, std::ratio<1, 10'000'000>>;

/// A point in time as the library reports it: nanoseconds since the Unix epoch.
using instant = std::chrono::sys_time<std::chrono::nanoseconds>;

/// Ticks between 1601-01-01 and 1970-01-01 (369 years, 89 of them leap years).
inline constexpr std::uint64_t filetime_unix_epoch = 116'444'736'000'000'000ULL;
/// The largest FILETIME Windows accepts: 30828-09-14 02:48:05.4775807 UTC.
inline constexpr std::uint64_t filetime_max = 0x7FFF'FFFF'FFFF'FFFFULL;

/// A raw FILETIME: 100 ns ticks, an instant since 1601 or a duration.
struct filetime {
    std::uint64_t ticks = 0;

    /// The two 32-bit halves, as the Win32 FILETIME struct stores them.
    [[nodiscard]] constexpr std::uint32_t low() const noexcept { return static_cast<std::uint32_t>(ticks); }
    [[nodiscard]] constexpr std::uint32_t high() const noexcept { return static_cast<std::uint32_t>(ticks >> 32); }
    [[nodiscard]] static constexpr filetime from_parts(std::uint32_t low, std::uint32_t high) noexcept {
        return filetime{(static_cast<std::uint64_t>(high) << 32) | low};
    }
    // clang-tidy 14 takes the literal 0 that a defaulted <=> compares its
    // comparison category with for a null pointer constant:
    // NOLINTNEXTLINE(modernize-use-nullptr)
    friend constexpr auto operator<=>(const filetime&, const filetime&) = default;
};

namespace detail {

// 128-bit integers make every conversion exact; __extension__ keeps -pedantic quiet.
__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

template <class D>
concept int64_duration = std::integral<typename D::rep> && sizeof(typename D::rep) <= 8;

// floor(a / b) for b > 0. Operands that fit in 64 bits (every conversion of
// a realistic value) take the 64-bit path: a 128-bit division is a library
// call costing tens of nanoseconds, which matters on hot paths such as
// GetThreadTimes(GetCurrentThread()).
constexpr detail::int128 floor_div(detail::int128 a, detail::int128 b) noexcept {
    constexpr detail::int128 lo = std::numeric_limits<std::int64_t>::min();
    constexpr detail::int128 hi = std::numeric_limits<std::int64_t>::max();
    if (a >= lo && a <= hi && b <= hi) {
        const auto x = static_cast<std::int64_t>(a);
        const auto y = static_cast<std::int64_t>(b);
        std::int64_t q64 = x / y;
        if ((x % y != 0) && (x < 0)) --q64;
        return q64;
    }
    detail::int128 q = a / b;
    if ((a % b != 0) && (a < 0)) --q;
    return q;
}

// Ticks per Duration unit as a reduced ratio (a compile error if it overflows).
template <class D>
using ticks_per_unit = std::ratio_multiply<typename D::period, std::ratio<10'000'000, 1>>;

// A count of Duration units → 100 ns ticks (floored), exact in 128 bits.
template <int64_duration D>
constexpr int128 to_ticks(D d) noexcept {
    using R = ticks_per_unit<D>;
    return floor_div(static_cast<int128>(d.count()) * R::num, R::den);
}

// 100 ns ticks → Duration (floored); nullopt when it does not fit in D::rep.
template <int64_duration D>
constexpr std::optional<D> from_ticks(int128 ticks) noexcept {
    using R = ticks_per_unit<D>;
    using Rep = typename D::rep;
    // |ticks| < 2^64 and R::den ≤ 2^63: the product fits in 128 bits.
    const int128 count = floor_div(ticks * R::den, R::num);
    if (count < static_cast<int128>(std::numeric_limits<Rep>::min()) ||
        count > static_cast<int128>(std::numeric_limits<Rep>::max()))
        return std::nullopt;
    return D{static_cast<Rep>(count)};
}

}  // namespace detail

// ---- instants ---------------------------------------------------------------

/// An instant → FILETIME (ticks since 1601). nullopt before 1601-01-01 or after
/// 30828-09-14 02:48:05.4775807 UTC. Floors to 100 ns.
template <detail::int64_duration D>
constexpr std::optional<filetime> filetime_from_time(std::chrono::sys_time<D> t) noexcept {
    const detail::int128 ticks = detail::to_ticks(t.time_since_epoch()) + filetime_unix_epoch;
    if (ticks < 0 || ticks > static_cast<detail::int128>(filetime_max)) return std::nullopt;
    return filetime{static_cast<std::uint64_t>(ticks)};
}

/// FILETIME (ticks since 1601) → an instant. nullopt when ft > filetime_max or
/// when the instant does not fit in sys_time<D> (for nanoseconds: outside
/// 1677-09-21 .. 2262-04-11). Floors when D is coarser than 100 ns.
template <detail::int64_duration D = std::chrono::nanoseconds>
constexpr std::optional<std::chrono::sys_time<D>> time_from_filetime(filetime ft) noexcept {
    if (ft.ticks > filetime_max) return std::nullopt;
    const detail::int128 since_unix = static_cast<detail::int128>(ft.ticks) - filetime_unix_epoch;
    auto d = detail::from_ticks<D>(since_unix);
    if (!d) return std::nullopt;
    return std::chrono::sys_time<D>{*d};
}

// ---- durations --------------------------------------------------------------

/// A duration → a FILETIME count of 100 ns ticks. nullopt when negative or
/// larger than filetime_max ticks. Floors to 100 ns.
template <detail::int64_duration D>
constexpr std::optional<filetime> filetime_from_duration(D d) noexcept {
    const detail::int128 ticks = detail::to_ticks(d);
    if (ticks < 0 || ticks > static_cast<detail::int128>(filetime_max)) return std::nullopt;
    return filetime{static_cast<std::uint64_t>(ticks)};
}

/// A FILETIME count of 100 ns ticks → a duration. nullopt when ft > filetime_max
/// or when it does not fit in D (nanoseconds hold at most ~292 years).
template <detail::int64_duration D = std::chrono::nanoseconds>
constexpr std::optional<D> duration_from_filetime(filetime ft) noexcept {
    if (ft.ticks > filetime_max) return std::nullopt;
    return detail::from_ticks<D>(static_cast<detail::int128>(ft.ticks));
}

}  // namespace proctimes::inline v1
