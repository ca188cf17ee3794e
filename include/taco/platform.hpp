#pragma once
// What TACO needs from a platform (DESIGN.md section 4), as concepts. Nothing
// in taco/ names a platform: a platform header binds itself with
// TACO_BIND_PLATFORM, and taco's templates look the binding up when they are
// instantiated, so the hot path (send, poll) is dispatched statically.
#include <chrono>
#include <concepts>
#include <cstddef>
#include <type_traits>

#include <taco/core_id.hpp>

namespace taco {

/// Signature of the function that runs a received message in place. The
/// message bytes stay in the channel until it returns (CCI paper, section V:
/// "executed directly from the communication memory without any copying").
using message_handler = void (*)(std::byte* message);

/// One core's view of the channels: the part of a platform used on the hot path.
///
/// - `try_acquire(d)` returns the next free message slot towards core `d`, or
///   nullptr when that channel is full (the caller keeps the message and
///   retries later: it is never dropped). `publish(d, length)` hands the
///   first `length` bytes of the slot over.
///   Messages from one source to one destination arrive in publish order.
/// - `poll(h)` runs `h(bytes)` on received messages, in order per source, and
///   returns how many it ran; `h` may itself send and poll (nested waiting),
///   so the platform must not keep the message's channel space busy while
///   `h` runs (copy it out first, as a small MPB protocol would).
/// - `idle()` is called when there was nothing to do: it pauses, yields or
///   sleeps until a message may have arrived (the wake-up is the sender's job,
///   inside `publish`), or until `limit` has passed (the core's next timer;
///   nanoseconds::max(): no limit). `pause()` is a short wait that never sleeps (used while
///   the core's own sends wait for room, when nobody would wake it).
///   Both may throw when the platform cannot go on (a core has died): the
///   core then stops, and its waits unwind with that exception.
/// - `signal_urgent(d)` (after a publish to d) raises d's urgent flag and
///   wakes d if it sleeps; `take_urgent()` tests and clears the own flag: a
///   cheap check that long-running code makes at its scheduling points
///   (the CCI paper's interrupt status register, section V).
template <class E>
concept channel_endpoint = requires(E& e, const E& ce, core_id dest, std::size_t length,
                                    void (*handler)(std::byte*), std::chrono::nanoseconds limit) {
    { ce.id() } -> std::same_as<core_id>;
    { ce.core_count() } -> std::same_as<core_id>;
    { e.try_acquire(dest) } -> std::same_as<std::byte*>;
    { e.publish(dest, length) } -> std::same_as<void>;
    { e.poll(handler) } -> std::same_as<std::size_t>;
    { e.idle(limit) } -> std::same_as<void>;
    { e.pause() } -> std::same_as<void>;
    { e.signal_urgent(dest) } -> std::same_as<void>;
    { e.take_urgent() } -> std::same_as<bool>;
};

/// A platform: a message size, a per-core endpoint, a configuration and a way
/// to start a function on every core (`launch(config, entry)` calls
/// `entry(endpoint&)` once on each core and returns when all have returned).
template <class P>
concept platform = requires {
    typename P::endpoint;
    typename P::config;
    { P::message_bytes } -> std::convertible_to<std::size_t>;
    { P::message_align } -> std::convertible_to<std::size_t>;
} && channel_endpoint<typename P::endpoint>
  && requires(const typename P::config& cfg, void (*entry)(typename P::endpoint&, void*), void* arg) {
    { P::launch(cfg, entry, arg) } -> std::same_as<void>;
};

/// The platform this program runs on; specialised by TACO_BIND_PLATFORM.
template <class = void>
struct platform_binding;

namespace detail {
// Dependent on Dep so that the lookup happens at instantiation, after the
// platform header has bound itself.
template <class Dep>
using bound_platform = typename platform_binding<std::conditional_t<true, void, Dep>>::type;
} // namespace detail

} // namespace taco

/// Bind the platform of this program (exactly once, in the platform's umbrella
/// header). Binding two platforms in one program is a redefinition error.
#define TACO_BIND_PLATFORM(P)                                                                  \
    template <>                                                                                \
    struct taco::platform_binding<void> {                                                      \
        static_assert(::taco::platform<P>, #P " does not satisfy taco::platform");             \
        using type = P;                                                                        \
    }
