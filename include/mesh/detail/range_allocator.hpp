#pragma once
// First-fit allocator over one address range, with coalescing. Runs only on
// MESH's home core (memory.hpp), so it needs no synchronisation; its
// bookkeeping lives in that core's private heap, never in the range itself,
// so the managed memory holds nothing but user data.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <unordered_map>

#include <mesh/detail/checked.hpp>

namespace mesh::detail {

class range_allocator {
public:
    range_allocator(std::byte* base, std::size_t bytes) : base_(base), size_(bytes) {
        if (bytes) free_.emplace(0, bytes);
    }

    /// nullptr when no free block is large enough (also for a size or an
    /// alignment so large that rounding it would wrap: no block is).
    std::byte* allocate(std::size_t bytes, std::size_t align) {
        const std::optional<std::size_t> rounded = checked_round_up(bytes == 0 ? 1 : bytes, granule);
        if (!rounded || *rounded > size_) return nullptr;
        bytes = *rounded;
        align = align < granule ? granule : align;
        for (auto it = free_.begin(); it != free_.end(); ++it) {
            // The address is aligned, not the offset (the range's base is
            // only page-aligned); an alignment past the range fails here.
            const auto base = reinterpret_cast<std::uintptr_t>(base_);
            const std::optional<std::size_t> aligned = checked_round_up(base + it->first, align);
            const std::size_t end = it->first + it->second; // within the range: cannot wrap
            if (!aligned || *aligned - base > end || bytes > end - (*aligned - base)) continue;
            const std::size_t start = *aligned - base;
            const std::size_t head = start - it->first, tail = end - (start + bytes);
            if (head) it->second = head; else free_.erase(it);
            if (tail) free_.emplace(start + bytes, tail);
            used_.emplace(start, bytes);
            in_use_ += bytes;
            return base_ + start;
        }
        return nullptr;
    }

    /// false when p was not allocated here (or was freed already).
    bool deallocate(const void* p) {
        const auto* b = static_cast<const std::byte*>(p);
        if (b < base_ || b >= base_ + size_) return false;
        const auto u = used_.find(std::size_t(b - base_));
        if (u == used_.end()) return false;
        std::size_t start = u->first, bytes = u->second;
        used_.erase(u);
        in_use_ -= bytes;
        auto next = free_.lower_bound(start);
        if (next != free_.end() && start + bytes == next->first) {
            bytes += next->second;
            next = free_.erase(next);
        }
        if (next != free_.begin()) {
            auto prev = std::prev(next);
            if (prev->first + prev->second == start) {
                prev->second += bytes;
                return true;
            }
        }
        free_.emplace(start, bytes);
        return true;
    }

    bool contains(const void* p) const noexcept {
        auto* b = static_cast<const std::byte*>(p);
        return b >= base_ && b < base_ + size_;
    }
    std::size_t bytes_in_use() const noexcept { return in_use_; }
    std::size_t largest_free() const noexcept {
        std::size_t m = 0;
        for (auto& [o, n] : free_) m = n > m ? n : m;
        return m;
    }

    /// Cache-line granularity: two objects never share a line, so writing
    /// one back can never overwrite a neighbour's newer bytes on hardware
    /// that writes back whole lines (the SCC).
    static constexpr std::size_t granule = 64;

private:
    std::byte* base_;
    std::size_t size_;
    std::map<std::size_t, std::size_t> free_;           // offset -> bytes, coalesced
    std::unordered_map<std::size_t, std::size_t> used_; // offset -> bytes
    std::size_t in_use_ = 0;
};

} // namespace mesh::detail
