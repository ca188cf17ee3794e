#pragma once
// The channel of one (source, destination) pair: a bounded single-producer
// single-consumer ring of cache-line-aligned message slots.
//
// Each slot carries its own sequence number (as in Vyukov's bounded queue),
// instead of shared head/tail indices: the consumer polls the sequence word
// in the very line that holds the message, so a message costs one cache-line
// transfer, not two (index line + data line). Head and tail stay private to
// their side.
//   slot i is free for the producer at position p   when seq == p
//   slot i holds the message of position p           when seq == p + 1
//   after consuming position p the consumer sets seq  = p + capacity
// (sequence numbers are compared modulo 2^32; capacities are far smaller).
//
// The consumer copies a message out (exactly its length: a small invocation
// stays within the slot's first line) and releases the slot *before* running
// it. Running in place would keep the slot busy while a handler waits on a
// future and polls again; with nesting deeper than the ring, two cores would
// each hold the other's ring full and deadlock.
//
// In-place execution (the CCI paper, section V: messages "executed directly
// from the communication memory without any copying") was built and
// measured here, and does not pay on this platform. The copy is a few
// register moves of a line the consumer has just read. Run in place and
// released after the handler, messages stall their channel behind any
// handler that waits (the producer fills slots in order and stops at the
// busy one: the MESH litmus test hung), for at most the same instruction
// count (callgrind: 157.4 vs 157.2 per one-way invocation, 423.7 vs 412.0
// per round trip). Released by the runtime as soon as a message no longer
// needs its slot (a result moved into its future; an invocation copied out
// first), it is safe, and slower: 187.7 vs 157.2 and 458 vs 412, the
// bookkeeping costing more than the copy it saves.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include <taco/core_id.hpp>

namespace tacomesh::posix::detail {

inline constexpr std::size_t cache_line = 64;

/// Two cache lines: a small invocation (handler + up to 48 bytes) touches
/// only the first; the second is there for larger argument lists.
struct alignas(cache_line) slot {
    static constexpr std::size_t bytes = 2 * cache_line - 2 * sizeof(std::uint32_t);
    std::atomic<std::uint32_t> seq;
    std::uint32_t length; // bytes of message used; written before seq is published
    alignas(8) std::byte message[bytes];
};
static_assert(sizeof(slot) == 2 * cache_line);
inline constexpr std::size_t first_line_bytes = cache_line - offsetof(slot, message);

/// Where the producer of a ring not created yet points: a slot that is never
/// free (its seq is 1, the producer's tail stays 0), so the first
/// try_acquire fails and the sender connects on its slow path. The hot path
/// then needs no separate "connected?" test. Only ever read.
inline constinit slot unconnected_slot{{1u}, 0, {}};

struct alignas(cache_line) ring {
    // Consumer side only: the producer keeps its tail, and its own copy of
    // the slot address and mask (see producer below), so it never reads this
    // line, which the consumer writes on every message (no false sharing).
    // Atomic (relaxed: a plain mov) only because the launcher's liveness
    // watch reads it to see whether the consumer still takes messages.
    std::atomic<std::uint64_t> head = 0;
    ring* next = nullptr;          // next incoming ring of the same destination
    std::uint64_t mask;
    taco::core_id source;          // the producer's core (for failure reports)
    slot slots[1];                 // really `capacity` slots, allocated in place

    static std::size_t bytes_for(std::uint32_t capacity) noexcept {
        return offsetof(ring, slots) + sizeof(slot) * capacity;
    }
    static ring* create(void* memory, std::uint32_t capacity, taco::core_id source) noexcept {
        auto* r = ::new (memory) ring{0, nullptr, capacity - 1u, source, {}};
        for (std::uint32_t i = 0; i < capacity; ++i)
            ::new (&r->slots[i].seq) std::atomic<std::uint32_t>(i);
        return r;
    }

    /// The producer's end, private to the sending core. It keeps the address
    /// of the slot at `tail` (`next`), so that acquiring and publishing do not
    /// each recompute it from tail and mask: once per message, in publish.
    struct producer {
        slot* slots = &unconnected_slot;
        std::uint64_t mask = 0;
        std::uint64_t tail = 0;
        slot* next = &unconnected_slot; // slots[tail & mask]

        bool connected() const noexcept { return slots != &unconnected_slot; }
        /// The next free slot, or nullptr when the ring is full.
        std::byte* try_acquire() const noexcept {
            // acquire: the consumer's copy of the previous message in this
            // slot happens before we overwrite it.
            return next->seq.load(std::memory_order_acquire) == std::uint32_t(tail) ? next->message : nullptr;
        }
        /// Hand over the first `length` bytes written into the acquired slot.
        void publish(std::size_t length) noexcept {
            slot& s = *next;
            const std::uint64_t t = ++tail;
            next = &slots[t & mask];
            s.length = std::uint32_t(length);
            // Last: the compiler treats the atomic store as a barrier and
            // would reload tail and the fields above after it.
            s.seq.store(std::uint32_t(t), std::memory_order_release);
        }
    };
    producer make_producer() noexcept { return {slots, mask, 0, &slots[0]}; }

    /// Consumer: run `handle(bytes)` on up to `budget` messages, in order.
    /// Each message is copied out and its slot released before the handler
    /// runs, so a handler may poll this ring again (nested waiting).
    template <class Handler>
    std::size_t consume(Handler&& handle, std::size_t budget) {
        std::size_t n = 0;
        while (n < budget) {
            const std::uint64_t h = head.load(std::memory_order_relaxed);
            slot& s = slots[h & mask];
            const std::uint32_t published = std::uint32_t(h + 1);
            if (s.seq.load(std::memory_order_acquire) != published) break;
            alignas(16) std::byte copy[slot::bytes];
            // Fixed-size copy of the first line (inlined moves, no libc call);
            // the second line only for long messages.
            std::memcpy(copy, s.message, first_line_bytes);
            if (s.length > first_line_bytes) [[unlikely]]
                std::memcpy(copy + first_line_bytes, s.message + first_line_bytes, s.length - first_line_bytes);
            head.store(h + 1, std::memory_order_relaxed);
            // release: our reads of the message happen before the producer reuses the slot.
            s.seq.store(published + std::uint32_t(mask), std::memory_order_release); // h + capacity
            handle(copy);
            ++n;
        }
        return n;
    }
    bool has_message() const noexcept { return waiting_at(head.load(std::memory_order_relaxed)); }
    /// Whether the message at position h is published (consumer, or a watcher that read head).
    bool waiting_at(std::uint64_t h) const noexcept {
        return slots[h & mask].seq.load(std::memory_order_acquire) == std::uint32_t(h + 1);
    }
    /// Messages published and not taken, as a watcher sees them (a snapshot).
    std::uint64_t waiting() const noexcept {
        const std::uint64_t h = head.load(std::memory_order_relaxed);
        std::uint64_t n = 0;
        while (n <= mask && waiting_at(h + n)) ++n;
        return n;
    }
};

} // namespace tacomesh::posix::detail
