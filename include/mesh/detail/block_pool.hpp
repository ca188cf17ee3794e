#pragma once
// Fixed-size blocks over the pieces of a platform's on-chip memory
// (taco::on_chip_memory_endpoint): a few hundred bytes per core, too small
// and too scattered for the range allocator, and only ever asked for one
// size (a control block). Like the range allocator it runs on MESH's home
// core only and keeps its bookkeeping in that core's heap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mesh::detail {

/// Whether p lies in one of the pieces.
inline bool in_pieces(std::span<const std::span<std::byte>> pieces, const void* p) noexcept {
    const auto* b = static_cast<const std::byte*>(p);
    return std::any_of(pieces.begin(), pieces.end(),
                       [b](std::span<std::byte> r) { return b >= r.data() && b < r.data() + r.size(); });
}

/// Keeps the platform's pieces, which outlive it (they are the run's).
class block_pool {
public:
    block_pool() = default;
    /// Every whole, `block_bytes`-aligned block of the pieces.
    block_pool(std::span<const std::span<std::byte>> pieces, std::size_t block_bytes) : pieces_(pieces) {
        for (const std::span<std::byte> piece : pieces) {
            const auto begin = reinterpret_cast<std::uintptr_t>(piece.data());
            const auto end = begin + piece.size();
            const std::uintptr_t first = (begin + block_bytes - 1) / block_bytes * block_bytes;
            for (std::uintptr_t b = first; b + block_bytes <= end; b += block_bytes)
                free_.push_back(reinterpret_cast<std::byte*>(b));
        }
        capacity_ = free_.size();
        // Hand out the first piece's blocks first (free_ is taken from its back).
        std::reverse(free_.begin(), free_.end());
    }

    /// nullptr when every block is in use.
    std::byte* allocate() {
        if (free_.empty()) return nullptr;
        std::byte* b = free_.back();
        free_.pop_back();
        return b;
    }
    /// false when p is not a block of this pool.
    bool deallocate(const void* p) {
        if (!in_pieces(pieces_, p)) return false;
        free_.push_back(static_cast<std::byte*>(const_cast<void*>(p)));
        return true;
    }
    std::size_t capacity() const noexcept { return capacity_; }
    std::size_t in_use() const noexcept { return capacity_ - free_.size(); }

private:
    std::span<const std::span<std::byte>> pieces_;
    std::vector<std::byte*> free_;
    std::size_t capacity_ = 0;
};

} // namespace mesh::detail
