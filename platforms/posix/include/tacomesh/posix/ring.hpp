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
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include <taco/core_id.hpp>

namespace tacomesh::posix::detail {

inline constexpr std::size_t cache_line = 64;

/// Two cache lines: a small invocation (handler + up to 48 bytes) touches
/// only the first; the second is there for larger argument lists.
struct alignas(cache_line) slot {
    static constexpr std::size_t bytes = 2 * cache_line - sizeof(std::uint64_t);
    std::atomic<std::uint64_t> seq;
    std::byte message[bytes];
};
static_assert(sizeof(slot) == 2 * cache_line);

struct alignas(cache_line) ring {
    // Consumer side only (the producer's tail lives with the producer).
    std::uint64_t head = 0;
    ring* next = nullptr;          // next incoming ring of the same destination
    std::uint64_t mask;
    taco::core_id source;
    slot slots[1];                 // really `capacity` slots, allocated in place

    static std::size_t bytes_for(std::uint32_t capacity) noexcept {
        return offsetof(ring, slots) + sizeof(slot) * capacity;
    }
    static ring* create(void* memory, std::uint32_t capacity, taco::core_id source) noexcept {
        auto* r = ::new (memory) ring{0, nullptr, capacity - 1u, source, {}};
        for (std::uint32_t i = 0; i < capacity; ++i)
            ::new (&r->slots[i].seq) std::atomic<std::uint64_t>(i);
        return r;
    }

    /// Producer: the slot for position `tail`, or nullptr when the ring is full.
    std::byte* try_acquire(std::uint64_t tail) noexcept {
        slot& s = slots[tail & mask];
        // acquire: the consumer's reads of the previous message in this slot
        // happen before we overwrite it.
        return s.seq.load(std::memory_order_acquire) == tail ? s.message : nullptr;
    }
    /// Producer: hand over the message written at position `tail`.
    void publish(std::uint64_t tail) noexcept {
        slots[tail & mask].seq.store(tail + 1, std::memory_order_release);
    }

    /// Consumer: run `handle(bytes)` on up to `budget` messages, in order.
    /// The head advances before the handler runs and the slot is released
    /// after it, so a handler may poll this ring again (nested waiting) while
    /// its own message stays intact.
    template <class Handler>
    std::size_t consume(Handler&& handle, std::size_t budget) {
        std::size_t n = 0;
        while (n < budget) {
            const std::uint64_t h = head;
            slot& s = slots[h & mask];
            if (s.seq.load(std::memory_order_acquire) != h + 1) break;
            head = h + 1;
            handle(s.message);
            s.seq.store(h + mask + 1, std::memory_order_release);
            ++n;
        }
        return n;
    }
    bool has_message() const noexcept {
        return slots[head & mask].seq.load(std::memory_order_acquire) == head + 1;
    }
};

} // namespace tacomesh::posix::detail
