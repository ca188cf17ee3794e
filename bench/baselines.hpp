#pragma once
// The raw baselines taco is measured against: a minimal SPSC ring and a futex
// ping-pong. They are written to be as fast as a careful hand-rolled channel
// between two threads can be, so that a ratio near 1 means taco adds little,
// not that the baseline is slow.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace bench {

inline constexpr std::size_t cache_line = 64;

/// Spin-wait hint, the same one taco's polling idle uses, so neither side
/// gets an edge from a tighter (and SMT-unfriendly) spin.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

/// The message body of the raw ring. Slot = 8-byte sequence + this = 64
/// bytes, one cache line: the same line a small taco invocation occupies
/// (its slot is sequence + handler + request in the first line). A 64-byte
/// body plus a separate sequence word would need two lines per message and
/// make the baseline slower than it has to be.
struct payload {
    std::uint64_t words[7];
};

/// Bounded single-producer single-consumer ring with a sequence word per
/// slot (Vyukov's bounded queue, specialised to one producer and one
/// consumer):
///   slot i is free for the producer at position p   when seq == p
///   slot i holds the message of position p           when seq == p + 1
///   after consuming position p the consumer sets seq  = p + Slots
/// Head and tail stay private to their side, each on its own line, so a
/// message costs the transfer of its own slot line and nothing else: the
/// line goes to the consumer with the message and comes back to the producer
/// with the release. Measured here against a variant with a shared head index
/// that the producer caches (the consumer then never writes a slot): equal in
/// a ping-pong, and this one streams ~3x faster, so this is the honest
/// baseline.
template <std::uint32_t Slots>
class spsc_ring {
    static_assert(std::has_single_bit(Slots), "ring size must be a power of two");

public:
    spsc_ring() noexcept {
        for (std::uint32_t i = 0; i < Slots; ++i) slots_[i].seq.store(i, std::memory_order_relaxed);
    }
    spsc_ring(const spsc_ring&) = delete;
    spsc_ring& operator=(const spsc_ring&) = delete;

    // ---- producer ----
    bool try_push(const payload& p) noexcept {
        slot& s = slots_[tail_ & mask];
        // acquire: the consumer's read of the slot's previous message happens
        // before we overwrite it.
        if (s.seq.load(std::memory_order_acquire) != tail_) return false;
        s.body = p;
        // release: the body is visible before the sequence says "full".
        s.seq.store(tail_ + 1, std::memory_order_release);
        ++tail_;
        return true;
    }
    void push(const payload& p) noexcept {
        while (!try_push(p)) cpu_relax();
    }

    // ---- consumer ----
    bool try_pop(payload& out) noexcept {
        slot& s = slots_[head_ & mask];
        // acquire: pairs with the producer's release of this position.
        if (s.seq.load(std::memory_order_acquire) != head_ + 1) return false;
        out = s.body;
        // release: our read of the body happens before the producer reuses the slot.
        s.seq.store(head_ + Slots, std::memory_order_release);
        ++head_;
        return true;
    }
    payload pop() noexcept {
        payload p;
        while (!try_pop(p)) cpu_relax();
        return p;
    }

private:
    static constexpr std::uint64_t mask = Slots - 1;
    struct alignas(cache_line) slot {
        std::atomic<std::uint64_t> seq;
        payload body{};
    };
    static_assert(sizeof(slot) == cache_line);

    alignas(cache_line) std::uint64_t tail_ = 0; // producer-private line
    alignas(cache_line) std::uint64_t head_ = 0; // consumer-private line
    alignas(cache_line) slot slots_[Slots];
};

/// Same slot count as taco's default ring (config::ring_slots).
inline constexpr std::uint32_t ring_slots = 64;

/// One ring per direction, as taco has for a pair of cores.
struct ring_pair {
    spsc_ring<ring_slots> forward; // pinger / producer -> echo / consumer
    spsc_ring<ring_slots> back;

    // The "server" side runs on the other core, inside a taco invocation.

    /// Answer n requests, each with the request body, its first word + 1.
    void echo(std::size_t n) noexcept {
        for (std::size_t i = 0; i < n; ++i) {
            payload p = forward.pop();
            ++p.words[0];
            back.push(p);
        }
    }
    /// Client side of one round trip.
    std::uint64_t round_trip(std::uint64_t v) noexcept {
        payload p{};
        p.words[0] = v;
        forward.push(p);
        return back.pop().words[0];
    }

    /// Handshake (one round trip), then consume n messages and answer with
    /// the sum of their first words: the producer's clock stops on that
    /// answer, so the rate counts messages actually consumed.
    void drain(std::size_t n) noexcept {
        echo(1);
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < n; ++i) sum += forward.pop().words[0];
        payload done{};
        done.words[0] = sum;
        back.push(done);
    }
};

// ---- futex ping-pong --------------------------------------------------------

inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr,
              0);
}
inline void futex_wake(std::atomic<std::uint32_t>& word) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

/// Two futex words, one per direction. Each side sleeps in FUTEX_WAIT until
/// its word is set and the other side always wakes it with FUTEX_WAKE: no
/// spinning, so a round trip costs two sleep/wake cycles, like taco with
/// idle_policy::sleep.
struct futex_pair {
    alignas(cache_line) std::atomic<std::uint32_t> to_echo{0};
    alignas(cache_line) std::atomic<std::uint32_t> to_ping{0};

    static void await(std::atomic<std::uint32_t>& w) noexcept {
        // FUTEX_WAIT returns at once if the word is no longer 0, so a wake
        // that comes before we sleep is not lost.
        while (w.load(std::memory_order_acquire) == 0) futex_wait(w, 0);
        // Relaxed is enough: the peer sets this word again only after our
        // next signal, whose release orders this reset before it.
        w.store(0, std::memory_order_relaxed);
    }
    static void signal(std::atomic<std::uint32_t>& w) noexcept {
        w.store(1, std::memory_order_release);
        futex_wake(w);
    }

    void echo(std::size_t n) noexcept {
        for (std::size_t i = 0; i < n; ++i) {
            await(to_echo);
            signal(to_ping);
        }
    }
    void round_trip() noexcept {
        signal(to_echo);
        await(to_ping);
    }
};

} // namespace bench
