#pragma once
// The staging part of the POSIX bulk transport (taco::bulk_endpoint): every
// core has a staging area in one MAP_SHARED mapping, at the same address in
// every core process (and thread), into which it copies a carried buffer once; the receiver
// reads it from there (the channel message names its address) and releases
// it. Only the sending core allocates from its area, the receivers only
// release, so allocation needs no lock: the area is a ring of blocks in
// allocation order, each with a header line whose `in_use` word the receiver
// clears, and the sender reclaims released blocks from the oldest on. A block
// released out of order (receivers take their time) waits for the older ones;
// when the area has no room the sender sends pieces instead (bulk.hpp), so a
// full area delays nothing and loses nothing.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include <tacomesh/posix/arena.hpp>

namespace tacomesh::posix::detail {

class staging_area {
public:
    /// One line before each block's bytes (which it keeps aligned to it).
    struct alignas(64) header {
        std::atomic<std::uint32_t> in_use; // 1 from allocation until the receiver's release
        std::uint64_t bytes;               // the whole block, header included
    };
    static constexpr std::size_t line = sizeof(header);

    staging_area() = default;
    /// [base, base + bytes): this core's area (bytes a multiple of a line).
    staging_area(std::byte* base, std::size_t bytes) noexcept : base_(base), capacity_(bytes / line * line) {}

    /// n bytes for a receiver, or nullptr: no room until receivers release.
    std::byte* allocate(std::size_t n) noexcept {
        const std::size_t need = round_up(n, line) + line;
        if (need > capacity_) return nullptr;
        reclaim();
        std::size_t at = std::size_t(head_ % capacity_);
        std::size_t skip = 0; // the end of the area, too short for the block: left as a released block
        if (at + need > capacity_) skip = capacity_ - at;
        if (head_ + skip + need - tail_ > capacity_) return nullptr;
        if (skip) {
            init(at, skip, 0);
            head_ += skip;
            at = 0;
        }
        // Relaxed: the receiver learns of the block through the channel
        // message, whose publish (a release) orders these stores and the
        // bytes before it.
        init(at, need, 1);
        head_ += need;
        return base_ + at + line;
    }

    /// The receiver is done with the block at p (any core).
    static void release(std::byte* p) noexcept {
        // release: our reads of the bytes come before the sender's reuse
        // (its acquire in reclaim).
        std::launder(reinterpret_cast<header*>(p - line))->in_use.store(0, std::memory_order_release);
    }

    /// Bytes allocated and not yet reclaimed (tests).
    std::size_t held() const noexcept { return std::size_t(head_ - tail_); }
    std::size_t capacity() const noexcept { return capacity_; }

private:
    void init(std::size_t at, std::size_t bytes, std::uint32_t in_use) noexcept {
        auto* h = ::new (base_ + at) header{};
        h->bytes = bytes;
        h->in_use.store(in_use, std::memory_order_relaxed);
    }
    void reclaim() noexcept {
        while (tail_ != head_) {
            const auto* h = std::launder(reinterpret_cast<const header*>(base_ + tail_ % capacity_));
            if (h->in_use.load(std::memory_order_acquire) != 0) return;
            tail_ += h->bytes;
        }
        // Empty: start over at the beginning, so that a block as large as
        // the area fits whenever nothing is held.
        head_ = tail_ = 0;
    }

    std::byte* base_ = nullptr;
    std::size_t capacity_ = 0;
    // Running totals of bytes allocated and reclaimed (the offsets modulo
    // the capacity): equal when empty, capacity apart when full. The
    // sender's own, so in its process-private endpoint.
    std::uint64_t head_ = 0, tail_ = 0;
};

} // namespace tacomesh::posix::detail
