// The runtime's arithmetic on the durations users hand it (taco::timeout,
// taco::deadline_in, taco::after): random counts near the limits of each
// unit, checked against exact 128-bit arithmetic. The result is the exact
// tick count where it fits on task_clock and the clock's end where it does
// not, never a wrapped value.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>

#include <taco/detail/clock_arithmetic.hpp>
#include <taco/invocation_options.hpp>

namespace {

using taco::task_clock;
using ticks = task_clock::duration;
__extension__ typedef __int128 wide;

constexpr wide tick_max = std::numeric_limits<ticks::rep>::max();
constexpr wide tick_min = std::numeric_limits<ticks::rep>::min();

/// The reference: count * num / den ticks, truncated toward zero as
/// duration_cast does, then clamped. Every product below fits in 128 bits.
template <class Period>
ticks expected(std::int64_t count) {
    using f = std::ratio_divide<Period, ticks::period>;
    const wide exact = wide(count) * f::num / f::den;
    if (exact > tick_max) return ticks::max();
    if (exact < tick_min) return ticks::min();
    return ticks(ticks::rep(exact));
}

/// Counts a wrap would hit: near zero, near the unit's overflow point for
/// ticks, near the integer's own limits, powers of two, and uniform ones.
template <class Period>
std::int64_t near_a_limit(std::mt19937_64& rng) {
    using f = std::ratio_divide<Period, ticks::period>;
    constexpr std::int64_t lim = std::numeric_limits<std::int64_t>::max();
    const std::int64_t edge = f::den == 1 ? lim / f::num : lim; // the largest count that still fits (about)
    const std::int64_t jitter = std::int64_t(rng() % 2001) - 1000;
    const bool negative = rng() % 4 == 0;
    std::int64_t c = 0;
    switch (rng() % 5) {
    case 0: c = jitter; break;
    case 1: c = edge - 1000 + std::int64_t(rng() % std::uint64_t(1001 + std::min<std::int64_t>(lim - edge, 1000))); break;
    case 2: c = lim - std::int64_t(rng() % 1000); break;
    case 3: c = std::int64_t(1) << (rng() % 63); break;
    default: c = std::int64_t(rng() >> 1); break;
    }
    return negative ? -c : c;
}

template <class Period>
void check_unit(std::mt19937_64& rng, int samples) {
    for (int i = 0; i < samples; ++i) {
        const std::int64_t count = near_a_limit<Period>(rng);
        INFO("count " << count << " of " << Period::num << "/" << Period::den << " s");
        REQUIRE(taco::detail::saturating_duration(std::chrono::duration<std::int64_t, Period>(count)) ==
                expected<Period>(count));
    }
}

} // namespace

TEST_CASE("durations become task_clock ticks exactly where they fit, and the clock's end where they do not",
          "[clock]") {
    // The seed is Catch's (--rng-seed): a failure prints it, and the same
    // seed repeats the run.
    std::mt19937_64 rng(Catch::rngSeed());
    constexpr int samples = 20'000;
    check_unit<std::ratio<3600>>(rng, samples);             // hours
    check_unit<std::ratio<1>>(rng, samples);                // seconds
    check_unit<std::milli>(rng, samples);
    check_unit<std::nano>(rng, samples);                    // the clock's own ticks
    check_unit<std::pico>(rng, samples);                    // finer than a tick
    check_unit<std::ratio<1, 3>>(rng, samples);             // an odd ratio
    check_unit<std::ratio<1'000'000'007, 3>>(rng, samples); // coarse and odd

    CHECK(taco::detail::saturating_duration(std::chrono::hours::max()) == ticks::max());
    CHECK(taco::detail::saturating_duration(std::chrono::hours::min()) == ticks::min());
    CHECK(taco::detail::saturating_duration(std::chrono::duration<double>(INFINITY)) == ticks::max());
    CHECK(taco::detail::saturating_duration(std::chrono::duration<double>(-INFINITY)) == ticks::min());
    CHECK(taco::detail::saturating_duration(std::chrono::duration<double>(1e300)) == ticks::max());
    CHECK(taco::detail::saturating_duration(std::chrono::duration<double, std::milli>(1.5)) == ticks(1'500'000));
    CHECK_THROWS_AS(taco::detail::saturating_duration(std::chrono::duration<double>(NAN)), taco::usage_error);
}

TEST_CASE("a due time is now plus the delay, or the end of the clock, never a wrapped point", "[clock]") {
    std::mt19937_64 rng(Catch::rngSeed());
    const auto now = task_clock::now();
    for (int i = 0; i < 20'000; ++i) {
        const auto d = ticks(std::int64_t(rng() >> (rng() % 64)) * (rng() % 2 ? 1 : -1));
        const wide exact = wide(now.time_since_epoch().count()) + d.count();
        const auto want = exact > tick_max   ? task_clock::time_point::max()
                          : exact < tick_min ? task_clock::time_point::min()
                                             : task_clock::time_point(ticks(ticks::rep(exact)));
        INFO("delay " << d.count() << " ns");
        REQUIRE(taco::detail::saturating_add(now, d) == want);
    }
    CHECK(taco::detail::due_in(std::chrono::nanoseconds::max()) == task_clock::time_point::max());
    CHECK(taco::detail::due_in(std::chrono::hours::max()) == task_clock::time_point::max());
    CHECK(taco::detail::due_in(std::chrono::seconds(1)) > task_clock::now());
    CHECK(taco::deadline_in(std::chrono::years::max()).at == task_clock::time_point::max());
    CHECK(taco::timeout(std::chrono::hours::max()).limit == ticks::max());
}
