#pragma once
// Write-back of only what changed, for objects whose extra memory is split
// in chunks (chunked maps, shared containers): one stamp per chunk, in
// non-cached memory, holding the version at which the chunk was last written
// back. A reader whose view was current at version v refreshes the chunks
// stamped after v; a writer's release writes back the chunks it touched and
// stamps them. Changing one element of a 4 MiB map then moves one 4 KB chunk
// each way instead of the whole map (the MESH paper's chunked maps keep
// flushes small the same way, by memory mode instead of by stamp).
//
// A reader would still look at every stamp; a second level of stamps, one per
// group of 64 chunks holding the newest stamp in the group, lets it skip
// groups nothing changed in (a 4 MiB map: 16 group stamps, then 64 chunk
// stamps per changed group, instead of 1024).
//
// Growing allocates a larger stamp array; the old one is kept, chained from
// the new one's first word, until release() (the owner's destructor): a
// reader still refreshing from before the growth reads the old array, whose
// stamps are right for the memory it copies (and its version check then
// sends it round again). Arrays grow by at least half, so the old ones take
// at most twice the current one.
//
// Protocol with the controllers' seqlock (controller.hpp): stamps are
// written only by the single writer. touch() marks a chunk while the writer
// works by setting the stamp's low bit (versions are even); a reader that
// sees the mark refreshes that chunk from memory, which still holds the
// last published data: an extra copy, never a stale one. take_changes()
// stores the new version during the write-back (the version is odd then, so
// a reader that read stamps meanwhile retries).
//
// Where each core has a view of non-cached memory (cluster ranks:
// detail/shared_word.hpp), the stamps are fetched and sent like object
// memory: a reader fetches the group stamps, then the chunk stamps of the
// groups that changed; take_changes sends each stamp it sets (within the
// write-back, so ordered before the version that ends it); grow sends the
// new stamps, or a new array whole (memory's stamps, with the writer's
// marks). A view of the stamps may be older than memory's, so only the
// writer's marks in it count: a reader drops the marks it fetches.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <mesh/detail/shared_word.hpp>
#include <mesh/memory.hpp>
#include <mesh/shared_members.hpp>

namespace mesh {

class change_stamps {
public:
    /// Chunks the writer lists as it touches them; beyond, take_changes scans all stamps.
    static constexpr std::size_t listed = 30;

    change_stamps() = default;
    change_stamps(const change_stamps&) = delete;
    change_stamps& operator=(const change_stamps&) = delete;

    /// Grow to `chunks` stamps; the new chunks count as touched (a new chunk
    /// is written back with the release that made it). The array grows by
    /// half at least.
    void grow(std::size_t chunks) {
        if (chunks <= chunks_) return;
        const bool moved = chunks > capacity_;
        if (moved) reallocate(std::max(chunks, capacity_ + capacity_ / 2));
        for (std::size_t i = chunks_; i < chunks; ++i) {
            chunk_stamp(i).store(1, std::memory_order_relaxed);
            list(i);
        }
        if (detail::views_of_non_cached()) {
            // Only the new stamps: this view's others may be older than memory's.
            if (moved) write_back(stamps_ - 1, (1 + groups_ + capacity_) * sizeof(std::uint64_t));
            else write_back(&chunk_stamp(chunks_), (chunks - chunks_) * sizeof(std::uint64_t));
        }
        chunks_ = chunks;
    }
    /// Frees the stamps, current and retired (the owner's destructor).
    void release() {
        for (auto* block = stamps_ ? stamps_ - 1 : nullptr; block;) {
            if (detail::views_of_non_cached()) invalidate(block, sizeof *block); // chained by another core?
            auto* older = reinterpret_cast<std::atomic<std::uint64_t>*>(std::uintptr_t(load(block[0])));
            detail::deallocate_bookkeeping(block);
            block = older;
        }
        stamps_ = nullptr;
        chunks_ = capacity_ = groups_ = touched_ = 0;
    }

    /// The writer is changing chunk i.
    void touch(std::size_t i) noexcept {
        std::atomic<std::uint64_t>& s = chunk_stamp(i);
        const std::uint64_t v = load(s);
        if (v & 1) return; // marked already
        s.store(v | 1, std::memory_order_relaxed);
        list(i);
    }

    /// visit(i) for each chunk written back after `version` (or, marked,
    /// being written, where its group says so).
    template <class Visit>
    void changed_since(std::uint64_t version, Visit&& visit) const {
        const bool fetch = detail::views_of_non_cached();
        if (fetch && chunks_) invalidate(stamps_, groups_for(chunks_) * sizeof(std::uint64_t));
        for (std::size_t g = 0; g * group < chunks_; ++g) {
            if (load(group_stamp(g)) <= version) continue;
            const std::size_t end = std::min(chunks_, (g + 1) * group);
            if (fetch) {
                invalidate(&chunk_stamp(g * group), (end - g * group) * sizeof(std::uint64_t));
                // A mark fetched from memory is the writer's (a grow's): in
                // this view, should this core write next, marks are its own.
                for (std::size_t i = g * group; i < end; ++i)
                    chunk_stamp(i).store(load(chunk_stamp(i)) & ~std::uint64_t(1), std::memory_order_relaxed);
            }
            for (std::size_t i = g * group; i < end; ++i)
                if (load(chunk_stamp(i)) > version) visit(i);
        }
    }

    /// visit(i) for each touched chunk, now stamped `version` (and its group).
    template <class Visit>
    void take_changes(std::uint64_t version, Visit&& visit) {
        auto take = [&](std::size_t i) {
            std::atomic<std::uint64_t>& s = chunk_stamp(i);
            if (!(load(s) & 1)) return; // listed twice (a grow after a touch)
            s.store(version, std::memory_order_relaxed);
            group_stamp(i / group).store(version, std::memory_order_relaxed);
            if (detail::views_of_non_cached()) {
                write_back(&s, sizeof s);
                write_back(&group_stamp(i / group), sizeof s);
            }
            visit(i);
        };
        if (touched_ <= listed) {
            for (std::size_t k = 0; k < touched_; ++k) take(touched_list_[k]);
        } else {
            for (std::size_t i = 0; i < chunks_; ++i) take(i);
        }
        touched_ = 0;
    }

private:
    void reallocate(std::size_t capacity) {
        const std::size_t groups = groups_for(capacity);
        auto* block = static_cast<std::atomic<std::uint64_t>*>(
            detail::allocate_bookkeeping((1 + groups + capacity) * sizeof(std::uint64_t), alignof(std::uint64_t)));
        ::new (&block[0]) std::atomic<std::uint64_t>(reinterpret_cast<std::uintptr_t>(stamps_ ? stamps_ - 1 : nullptr));
        std::atomic<std::uint64_t>* fresh = block + 1;
        // Where this view of the stamps may be stale, memory's go into the
        // new array, with this writer's marks (which only its view holds).
        std::vector<bool> marked;
        if (detail::views_of_non_cached() && stamps_) {
            for (std::size_t i = 0; i < chunks_; ++i) marked.push_back(load(chunk_stamp(i)) & 1);
            invalidate(stamps_, (groups_ + chunks_) * sizeof(std::uint64_t));
            for (std::size_t i = 0; i < chunks_; ++i)
                if (marked[i]) chunk_stamp(i).store(load(chunk_stamp(i)) | 1, std::memory_order_relaxed);
        }
        for (std::size_t g = 0; g < groups; ++g)
            ::new (&fresh[g]) std::atomic<std::uint64_t>(g < groups_ ? load(group_stamp(g)) : 0);
        for (std::size_t i = 0; i < capacity; ++i)
            ::new (&fresh[groups + i]) std::atomic<std::uint64_t>(i < chunks_ ? load(chunk_stamp(i)) : 0);
        stamps_ = fresh; // the old array stays, chained, until release()
        groups_ = groups;
        capacity_ = capacity;
    }

    static constexpr std::size_t group = 64;
    static std::size_t groups_for(std::size_t chunks) noexcept { return (chunks + group - 1) / group; }
    static std::uint64_t load(const std::atomic<std::uint64_t>& s) noexcept {
        return s.load(std::memory_order_relaxed);
    }
    std::atomic<std::uint64_t>& group_stamp(std::size_t g) const noexcept { return stamps_[g]; }
    std::atomic<std::uint64_t>& chunk_stamp(std::size_t i) const noexcept { return stamps_[groups_ + i]; }

    void list(std::size_t i) noexcept {
        if (touched_ < listed) touched_list_[touched_] = std::uint32_t(i);
        if (touched_ <= listed) ++touched_;
    }

    /// groups_ group stamps, then chunks_ chunk stamps; stamps_[-1] chains the retired arrays.
    std::atomic<std::uint64_t>* stamps_ = nullptr;
    std::size_t chunks_ = 0;
    std::size_t capacity_ = 0; ///< chunk stamps allocated
    std::size_t groups_ = 0;   ///< group stamps allocated (for capacity_)
    std::size_t touched_ = 0; ///< listed + 1: more than the list holds
    std::uint32_t touched_list_[listed]{};

public:
    // stamps_ leads into non-cached memory, the same on every core.
    using shared_members = mesh::trust_members<change_stamps>;
};

} // namespace mesh
