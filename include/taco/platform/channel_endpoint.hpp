#pragma once
// What TACO needs from a platform to move invocations between cores
// (docs/architecture.md, section 1; CCI paper, section V): one core's ends of its
// channels. The runtime reaches it only through platform_core<P>
// (runtime/platform_core.hpp), which calls these statically.
#include <chrono>
#include <concepts>
#include <cstddef>

#include <taco/core_id.hpp>

namespace taco {

/// Bytes of one invocation message, the same on every platform: a platform
/// whose slots are larger still carries at most this much, so a program that
/// compiles for one platform compiles for all (the fixed-size message of
/// MyThOS's tasklets). Two cache lines minus the POSIX slot header.
inline constexpr std::size_t message_bytes = 120;
/// Alignment of a message in its slot; arguments aligned beyond it are rejected.
inline constexpr std::size_t message_align = 8;

/// One core's view of the channels: the part of a platform used on the hot path.
///
/// - `try_acquire(d)` returns the next free message slot towards core `d`
///   (at least taco::message_bytes, aligned to taco::message_align), or
///   nullptr when that channel is full (the caller keeps the message and
///   retries later: it is never dropped). `publish(d, length)` hands the
///   first `length` bytes of that slot over; it always follows the
///   try_acquire(d) that returned the slot, with no other try_acquire in
///   between (the runtime only writes the message there), so an endpoint
///   may keep the acquired slot instead of looking it up again. Messages
///   from one source to one destination arrive in publish order.
/// - `poll(h)` runs `h(bytes)` on received messages, in order per source, and
///   returns how many it ran; `h` may itself send and poll (nested waiting),
///   so the platform must not keep the message's channel space busy while
///   `h` runs (copy it out first, as a small MPB protocol would).
/// - `idle(limit)` is called when there was nothing to do: it pauses, yields
///   or sleeps until a message may have arrived (the wake-up is the sender's
///   job, inside `publish`), or until `limit` has passed (the core's next
///   timer; nanoseconds::max(): no limit). `pause()` is a short wait that
///   never sleeps (used while the core's own sends wait for room, when nobody
///   would wake it). Both may throw when the platform cannot go on (a core
///   has died): the core then stops, and its waits unwind with that exception.
/// - `signal_urgent(d)` (after a publish to d) raises d's urgent flag and
///   wakes d if it sleeps; `take_urgent()` tests and clears the own flag: a
///   cheap check that long-running code makes at its scheduling points (the
///   CCI paper's interrupt status register, section V).
/// Optional, for bounded back-pressure (runtime/core.hpp, apply_backpressure):
/// - `waiting_for(d, backlog)` announces that this core waits for `d` to take
///   its queued messages, `backlog` of them (taco::no_core: it no longer
///   waits); called again as the backlog changes;
/// - `must_poll(p, backlog)`: whether this core, so waiting with `backlog`
///   messages queued, must still take p's messages: p waits too (for any
///   core) with at least as many queued, or has ended its part;
/// - `poll_except(h, p)`: poll as `poll(h)` does, but not p's channel.
/// Without them a core that waits for room polls every channel, and a peer
/// that keeps sending it requests can grow its local queue of replies
/// without bound.
template <class E>
concept backpressure_endpoint = requires(E& e, core_id peer, std::size_t backlog, void (*handler)(std::byte*)) {
    { e.waiting_for(peer, backlog) } -> std::same_as<void>;
    { e.must_poll(peer, backlog) } -> std::same_as<bool>;
    { e.poll_except(handler, peer) } -> std::same_as<std::size_t>;
};

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

} // namespace taco
