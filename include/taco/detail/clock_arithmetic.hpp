#pragma once
// Durations a user hands the runtime (timeouts, deadlines, timer delays)
// become points on task_clock, whose ticks are nanoseconds in a signed 64-bit
// count: about 292 years either way. A plain duration_cast of hours::max(),
// or now() + nanoseconds::max(), overflows, and the wrapped time point lies in
// the past, so a timeout meant as "never" fires at once. Here every such
// conversion saturates instead: a delay too long to represent means "at the
// end of the clock", which no timer reaches; a NaN delay is refused.
#include <chrono>
#include <cmath>
#include <limits>
#include <ratio>
#include <type_traits>
#include <utility>

#include <taco/task.hpp>
#include <taco/usage_error.hpp>

namespace taco::detail {

/// `d` in task_clock ticks, rounded toward zero like duration_cast, and
/// clamped to the clock's range instead of wrapping.
template <class Rep, class Period>
constexpr task_clock::duration saturating_duration(std::chrono::duration<Rep, Period> d) {
    using out = task_clock::duration;
    using out_rep = out::rep;
    constexpr out_rep hi = std::numeric_limits<out_rep>::max(), lo = std::numeric_limits<out_rep>::min();
    using factor = std::ratio_divide<Period, out::period>; // ticks per unit of d
    if constexpr (std::is_floating_point_v<Rep>) {
        if (std::isnan(d.count())) throw usage_error("taco: a duration (timeout, deadline or delay) is NaN");
        const long double ticks = static_cast<long double>(d.count()) * factor::num / factor::den;
        // out_rep's limits as long double are exact powers of two; anything at
        // or beyond them (inf included) is the end of the clock.
        if (ticks >= static_cast<long double>(hi)) return out::max();
        if (ticks <= static_cast<long double>(lo)) return out::min();
        return out(static_cast<out_rep>(ticks));
    } else if constexpr (factor::den == 1) {
        // Coarser than a tick (seconds, hours): one multiplication, checked.
        out_rep r{};
        if (__builtin_mul_overflow(d.count(), factor::num, &r)) return d.count() < 0 ? out::min() : out::max();
        return out(r);
    } else if constexpr (factor::num == 1) {
        // Finer than a tick (picoseconds): division cannot overflow, only
        // the source's own range can exceed ours.
        const auto q = d.count() / factor::den;
        if (std::cmp_greater(q, hi)) return out::max();
        if (std::cmp_less(q, lo)) return out::min();
        return out(static_cast<out_rep>(q));
    } else {
        // An odd ratio (thirds of a second). With 128 bits the product of two
        // 64-bit factors is exact, so the result is duration_cast's wherever
        // that fits; without them (32-bit targets), long double's 64-bit
        // mantissa is exact up to 2^64 and off by at most a tick beyond.
#ifdef __SIZEOF_INT128__
        __extension__ typedef __int128 wide; // a GNU extension, in g++ and clang alike
        const wide ticks = static_cast<wide>(d.count()) * factor::num / factor::den;
        if (ticks > hi) return out::max();
        if (ticks < lo) return out::min();
#else
        const long double ticks = static_cast<long double>(d.count()) * factor::num / factor::den;
        if (ticks >= static_cast<long double>(hi)) return out::max();
        if (ticks <= static_cast<long double>(lo)) return out::min();
#endif
        return out(static_cast<out_rep>(ticks));
    }
}

/// `from + d` on task_clock, clamped to the clock's first and last points.
inline constexpr task_clock::time_point saturating_add(task_clock::time_point from, task_clock::duration d) noexcept {
    task_clock::rep r{};
    if (__builtin_add_overflow(from.time_since_epoch().count(), d.count(), &r))
        return d.count() < 0 ? task_clock::time_point::min() : task_clock::time_point::max();
    return task_clock::time_point(task_clock::duration(r));
}

/// The point `d` from now: the due time of a timer, deadline or timeout.
template <class Rep, class Period>
task_clock::time_point due_in(std::chrono::duration<Rep, Period> d) {
    return saturating_add(task_clock::now(), saturating_duration(d));
}

} // namespace taco::detail
