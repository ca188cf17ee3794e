#pragma once
// What may follow an m2f-bound call in taco::async / call / sync (and the
// collectives): at most one completion and any of the options, in any order.
//
//   completions  future<R>& f                 the result assigns f (on this core)
//                taco::then(gp, &U::m, b...)  gp->m(b..., result) on gp's core
//                taco::then(core, fn, b...)   fn(b..., result) on `core`
//                taco::channel<R> ch          the result is written to ch's sink (channel.hpp)
//   options      taco::as_activity{}          run as a task on arrival (scheduled by the
//                taco::as_coroutine{}           core's policy); a coroutine may block
//                taco::with_priority{p}       task priority (implies a task)
//                taco::with_deadline{t}       task deadline (implies a task)
//                taco::deadline_in(d)         ... d from now
//                taco::with_tier{k}           the tier of a hierarchical scheduler (implies a task)
//                taco::urgent                 wake the receiver, raise its urgent flag
//                taco::timeout(d)             give up waiting after d (needs a future)
//
// Everything is checked at compile time; a misuse is a static_assert that
// says how to write the call instead.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <taco/future.hpp>
#include <taco/detail/clock_arithmetic.hpp>
#include <taco/task.hpp>

namespace taco {

/// Run the invocation on arrival as an activity (a task that runs to completion).
struct as_activity {};
/// Run the invocation on arrival as a coroutine, so that it may block (sync, future::get).
struct as_coroutine {};
/// Task priority of the invocation on arrival (priority policy: higher first).
struct with_priority {
    int value;
};
/// Absolute deadline of the invocation on arrival (EDF policy: earlier first).
struct with_deadline {
    task_clock::time_point at;
};
/// The tier of the receiver's hierarchical scheduler the invocation's task
/// goes to (run_options::tiers; one beyond the last: the last). Other
/// schedulers ignore it.
struct with_tier {
    std::uint8_t value;
};
/// A deadline `d` from now.
template <class Rep, class Period>
with_deadline deadline_in(std::chrono::duration<Rep, Period> d) {
    return {detail::due_in(d)};
}
/// Mark the invocation urgent (the CCI paper's preemptive invocations, as far
/// as POSIX allows): it is sent like any other, and the receiver is woken if
/// it sleeps and its urgent flag is raised, so long-running code there that
/// calls taco::urgent_point() runs it ahead of queued tasks. Nothing
/// interrupts code that makes no such call. If the channel is full, the
/// message waits in the sender's queue and runs at the receiver's next
/// ordinary scheduling point.
struct urgent_t {};
inline constexpr urgent_t urgent{};
/// Stop waiting for the result after `limit`: the future then throws
/// taco::timeout_error, and a late result is dropped (counted in
/// core_stats::late_results).
struct timeout {
    task_clock::duration limit;
    template <class Rep, class Period>
    explicit timeout(std::chrono::duration<Rep, Period> d)
        : limit(detail::saturating_duration(d)) {}
};

namespace detail {

/// Continuations made by taco::then (continuation.hpp) say so.
template <class C>
inline constexpr bool is_then_v = requires { requires C::is_taco_continuation; };

template <class X>
using bare = std::remove_cvref_t<X>;

template <class X>
inline constexpr bool is_completion_v =
    is_future_v<bare<X>> || is_then_v<bare<X>> || requires { requires bare<X>::is_taco_channel; };
template <class X>
inline constexpr bool is_task_kind_v = std::is_same_v<bare<X>, as_activity> || std::is_same_v<bare<X>, as_coroutine>;
template <class X>
inline constexpr bool is_schedule_v = std::is_same_v<bare<X>, with_priority> || std::is_same_v<bare<X>, with_deadline> ||
                                      std::is_same_v<bare<X>, with_tier>;
template <class X>
inline constexpr bool is_option_v =
    is_task_kind_v<X> || is_schedule_v<X> || std::is_same_v<bare<X>, urgent_t> || std::is_same_v<bare<X>, timeout>;
template <class X>
inline constexpr bool is_modifier_v = is_completion_v<X> || is_option_v<X>;

/// The options of one invocation, gathered from the modifiers.
struct option_set {
    task_spec spec{};
    task_clock::duration limit{};
};
inline void apply_option(option_set& o, as_activity) { o.spec.kind = task_kind::activity; }
inline void apply_option(option_set& o, as_coroutine) { o.spec.kind = task_kind::coroutine; }
inline void apply_option(option_set& o, with_priority p) { o.spec.sched.priority = p.value; }
inline void apply_option(option_set& o, with_deadline d) { o.spec.sched.deadline = d.at; }
inline void apply_option(option_set& o, with_tier t) { o.spec.sched.tier = t.value; }
inline void apply_option(option_set&, urgent_t) {}
inline void apply_option(option_set& o, timeout t) { o.limit = t.limit; }

/// A checked set of modifiers (see the top of this file): what they ask
/// for, and valid(), whose static_asserts say what to write instead.
template <class... M>
struct modifiers {
    static constexpr std::size_t completions = (std::size_t(0) + ... + std::size_t(is_completion_v<M>));
    static constexpr bool as_task = (false || ... || (is_task_kind_v<M> || is_schedule_v<M>));
    static constexpr bool is_urgent = (false || ... || std::is_same_v<bare<M>, urgent_t>);
    static constexpr bool has_timeout = (false || ... || std::is_same_v<bare<M>, timeout>);

    static constexpr bool valid() {
        static_assert((is_modifier_v<M> && ...),
                      "taco: after an m2f-bound call come only a completion (a future variable, taco::then(...)) "
                      "and options (taco::as_activity{}, taco::as_coroutine{}, taco::with_priority{p}, "
                      "taco::with_deadline{t}, taco::deadline_in(d), taco::with_tier{k}, taco::urgent, taco::timeout(d)); method "
                      "arguments go inside "
                      "taco::m2f(method, args...)");
        static_assert(completions <= 1, "taco: an invocation has at most one completion (one future or one taco::then)");
        static_assert((std::size_t(0) + ... + std::size_t(is_task_kind_v<M>)) <= 1,
                      "taco: give at most one task kind (taco::as_activity{} or taco::as_coroutine{})");
        static_assert((std::size_t(0) + ... + std::size_t(std::is_same_v<bare<M>, timeout>)) <= 1,
                      "taco: give at most one taco::timeout");
        static_assert(!(is_future_v<bare<M>> || ...) ||
                          ((!is_future_v<bare<M>> || std::is_lvalue_reference_v<M>) && ...),
                      "taco: pass the future variable itself (an lvalue): its result is delivered to it later");
        return true;
    }
};

} // namespace detail
} // namespace taco
