#pragma once
// ChunkedMap (MESH paper, section III.C): a mapping from indices 0..size()-1
// to values, its data in 4 KB chunks reached through a small lookup table,
// so it grows by adding chunks without moving data. A shared object; the
// lookup table is cached memory like the object, the chunks are in the
// memory mode of the variant (the paper's three):
//
//   dcm  chunks cached: a writer's release writes back the chunks it
//        changed, a reader's acquire refreshes the chunks changed since its
//        view was current (change stamps, change_stamps.hpp), so changing
//        one value of a 4 MiB map moves one 4 KB chunk each way;
//   ncm  chunks not cached: every access goes to shared memory, so values
//        need no consistency events at all (writes are seen at once, also
//        by readers holding a proxy); only growth is released;
//   wt   chunks write-through: each set reaches shared memory at once (the
//        SCC's MPBT+WT pages; on POSIX cached memory and a write-back of
//        the value), but readers' views may be stale, so a release stamps
//        the chunks it changed without writing them back, and readers
//        refresh those. As with ncm, a reader may see a writer's values
//        before its release (never a torn value: a set is one copy).
//
//   auto m = mesh::make_shared_object<mesh::chunked_map<std::uint32_t, double>>(n);
//   { auto w = mesh::write(m); w.set(7, 1.5); w.grow_to(2 * n); }
//   double x = mesh::read(m).get(7);
//
// Access goes through the map's own proxies (the paper's specialised
// proxies): mesh::read gives a reader_proxy (get, size, chunk), mesh::write a
// writer_proxy that also sets values and grows, and records which chunks it
// changed; the ncm and wt proxies skip the events their memory does not need.
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <mesh/change_stamps.hpp>
#include <mesh/detail/tracked_storage.hpp>
#include <mesh/memory.hpp>
#include <mesh/proxy.hpp>
#include <mesh/sharing_aware.hpp>

namespace mesh {

/// Where a chunked map keeps its chunks (the MESH paper's map variants).
enum class map_memory { dcm, ncm, wt };

template <std::unsigned_integral K, class V, map_memory Memory = map_memory::dcm>
class chunked_map : public sharing_aware<chunked_map<K, V, Memory>> {
    static_assert(std::is_trivially_copyable_v<V>,
                  "mesh::chunked_map: values are copied between cores' views byte by byte, so V must be "
                  "trivially copyable (for strings or vectors per index, keep a chunked_map of offsets into "
                  "another chunked_map)");

public:
    using key_type = K;
    using value_type = V;
    static constexpr std::size_t chunk_bytes = 4096;
    static_assert(sizeof(V) <= chunk_bytes, "mesh::chunked_map: a value larger than a chunk (4 KB)");
    static constexpr std::size_t per_chunk = chunk_bytes / sizeof(V);
    static constexpr map_memory memory = Memory;
    /// The map's own bytes (make_shared_object): beside its chunks where
    /// those are written through, since a set changes them too (the chunk's
    /// stamp), and publishing them should not take the L2 flush routine.
    static memory_mode object_memory() { return Memory == map_memory::wt ? chunk_memory() : memory_mode::cached; }

    /// n values, each `init`; growth fills new indices with `init` too.
    explicit chunked_map(std::size_t n = 0, const V& init = V{}) : fill_(init) { grow_to(n, init); }
    ~chunked_map() { // table_ frees itself and the tables it outgrew
        for (std::size_t c = 0; c < chunks_; ++c) deallocate(lookup()[c], chunk_memory());
        stamps_.release();
    }
    chunked_map(const chunked_map&) = delete;
    chunked_map& operator=(const chunked_map&) = delete;

    std::size_t size() const noexcept { return size_; }
    /// Values it holds without adding a chunk.
    std::size_t capacity() const noexcept { return chunks_ * per_chunk; }
    /// The most values: every key of K (2^64 - 1 for 64-bit keys, the last
    /// index a std::size_t size can end at), and no more chunks than the
    /// lookup table's buffer may hold. More is refused with std::length_error,
    /// the map unchanged.
    static constexpr std::size_t max_size() noexcept {
        constexpr std::size_t keys = std::numeric_limits<K>::max() >= std::numeric_limits<std::size_t>::max()
                                         ? std::numeric_limits<std::size_t>::max()
                                         : std::size_t(std::numeric_limits<K>::max()) + 1;
        constexpr std::size_t table_chunks = detail::tracked_storage::max_bytes / sizeof(V*);
        return table_chunks > keys / per_chunk ? keys : table_chunks * per_chunk;
    }
    const V& get(K k) const {
        check(k);
        return lookup()[k / per_chunk][k % per_chunk];
    }
    const V& operator[](K k) const { return get(k); }
    /// Chunks holding the values: value k is chunk(k / per_chunk)[k % per_chunk].
    std::size_t chunk_count() const noexcept { return size_ / per_chunk + (size_ % per_chunk != 0); }
    /// The values of chunk c, contiguous (per_chunk of them, fewer in the
    /// last): for loops that read long runs of values, which through get
    /// pay a table lookup and a bounds check each. Valid while the proxy it
    /// came through is held.
    std::span<const V> chunk(std::size_t c) const {
        if (c >= chunk_count()) [[unlikely]]
            throw std::out_of_range("mesh::chunked_map: chunk " + std::to_string(c) + " of a map of " +
                                    std::to_string(chunk_count()) + " chunks");
        return {lookup()[c], std::min(per_chunk, size_ - c * per_chunk)};
    }

    // SharingAware: the lookup table (tracked storage: its changed parts,
    // and the tables it outgrew kept for readers refreshing from before),
    // and the chunks, stamp c for chunk c (ncm chunks need neither).
    template <class Visit>
    void extra_ranges(Visit&& visit) const {
        table_.extra_ranges(visit);
        if constexpr (Memory != map_memory::ncm)
            for (std::size_t c = 0; c < chunks_; ++c) visit(lookup()[c], chunk_bytes);
    }
    template <class Visit>
    void changed_since(std::uint64_t version, Visit&& visit) const {
        table_.changed_since(version, visit);
        stamps_.changed_since(version, [&](std::size_t c) { visit(lookup()[c], chunk_bytes); });
    }
    template <class Visit>
    void take_changes(std::uint64_t version, Visit&& visit) {
        table_.take_changes(version, visit);
        stamps_.take_changes(version, [&](std::size_t c) {
            // wt: the values went through at each set; a new chunk's still go.
            if (Memory == map_memory::dcm || !written_through(c)) visit(lookup()[c], chunk_bytes);
        });
        through_from_ = chunks_;
    }

    /// Write access: get, set, ref and growth; records the chunks it changes.
    class writer_proxy {
    public:
        explicit writer_proxy(const sharing_ptr<chunked_map>& p) : w_(p) {}
        std::size_t size() const noexcept { return w_.peek().size(); }
        const V& get(K k) const { return w_.peek().get(k); }
        void set(K k, const V& v) {
            if constexpr (Memory == map_memory::dcm) {
                ref(k) = v;
            } else {
                // No write-back at release: ncm values are in shared memory,
                // wt values are written through now (and, on this core, the
                // view keeps them). Only wt readers need telling (a stamp).
                chunked_map& m = Memory == map_memory::ncm ? const_cast<chunked_map&>(w_.peek()) : *w_;
                m.check(k);
                V* p = &m.lookup()[k / per_chunk][k % per_chunk];
                *p = v;
                if constexpr (Memory == map_memory::wt) {
                    m.stamps_.touch(k / per_chunk);
                    mesh::write_back(p, sizeof(V));
                }
            }
        }
        /// values[i] at first + i, as set would write each, a chunk at a
        /// time: one bounds check, one copy, stamp and (wt) write-back per
        /// chunk instead of per value. For whole clusterings and tables,
        /// which through set cost a lookup, a check and a stamp each.
        void set(K first, std::span<const V> values) {
            if (values.empty()) return;
            chunked_map& m = Memory == map_memory::ncm ? const_cast<chunked_map&>(w_.peek()) : *w_;
            if (std::size_t(first) > m.size_ || values.size() > m.size_ - std::size_t(first)) [[unlikely]]
                throw std::out_of_range("mesh::chunked_map: " + std::to_string(values.size()) + " values from index " +
                                        std::to_string(first) + " into a map of size " + std::to_string(m.size_));
            std::size_t k = first;
            for (std::size_t done = 0; done < values.size();) {
                const std::size_t c = k / per_chunk, at = k % per_chunk;
                const std::size_t run = std::min(per_chunk - at, values.size() - done);
                V* p = &m.lookup()[c][at];
                std::memcpy(static_cast<void*>(p), values.data() + done, run * sizeof(V));
                if constexpr (Memory != map_memory::ncm) m.stamps_.touch(c);
                if constexpr (Memory == map_memory::wt) mesh::write_back(p, run * sizeof(V));
                done += run;
                k += run;
            }
        }
        /// The value at k, to change in place (dcm only: the other variants
        /// must see each write, so use set).
        V& ref(K k)
            requires(Memory == map_memory::dcm)
        {
            chunked_map& m = *w_;
            m.check(k);
            m.stamps_.touch(k / per_chunk);
            return m.lookup()[k / per_chunk][k % per_chunk];
        }
        /// Grow to n values (new ones the map's fill value, or `init`);
        /// existing values do not move.
        void grow_to(std::size_t n) { w_->grow_to(n, w_.peek().fill_); }
        void grow_to(std::size_t n, const V& init) { w_->grow_to(n, init); }
        /// Release now, reporting a failed release (see mesh::writer::release).
        void release() { w_.release(); }

    private:
        writer<chunked_map> w_;
    };

    /// Read access (const): get and size.
    class reader_proxy {
    public:
        explicit reader_proxy(const sharing_ptr<chunked_map>& p) : r_(p) {}
        std::size_t size() const noexcept { return r_->size(); }
        const V& get(K k) const { return r_->get(k); }
        const V& operator[](K k) const { return r_->get(k); }
        std::size_t chunk_count() const noexcept { return r_->chunk_count(); }
        std::span<const V> chunk(std::size_t c) const { return r_->chunk(c); }

    private:
        reader<chunked_map> r_;
    };

private:
    void check(K k) const {
        if (std::size_t(k) >= size_) [[unlikely]]
            throw std::out_of_range("mesh::chunked_map: index " + std::to_string(k) + " of a map of size " +
                                    std::to_string(size_));
    }

    V** lookup() const noexcept { return reinterpret_cast<V**>(table_.data()); }

    /// wt: chunk c existed at the last release, so its values went through.
    bool written_through(std::size_t c) const noexcept { return c < through_from_; }

    /// wt chunks go to the platform's write-through memory where it has
    /// its own (the SCC's MPBT+WT pages: a value's write-back is a WCB
    /// flush, a refresh CL1INVMB), else to cached memory, written through
    /// value by value (POSIX).
    static memory_mode chunk_memory() {
        if constexpr (Memory == map_memory::ncm) return memory_mode::non_cached;
        else if constexpr (Memory == map_memory::wt)
            return detail::write_through_kind() == detail::region_kind::write_through ? memory_mode::write_through
                                                                                      : memory_mode::cached;
        else return memory_mode::cached;
    }

    void grow_to(std::size_t n, const V& init) {
        if (n > max_size())
            throw std::length_error("mesh::chunked_map::grow_to(n): n = " + std::to_string(n) +
                                    " is more than max_size() = " + std::to_string(max_size()) +
                                    " (the keys of its key type, or the chunks its lookup table may hold)");
        if (n <= size_) return;
        const std::size_t chunks = n / per_chunk + (n % per_chunk != 0); // n + per_chunk - 1 may wrap
        if (chunks * sizeof(V*) > table_.capacity()) { // tables double: the retired ones take at most as much
            constexpr std::size_t max_table = detail::tracked_storage::max_bytes / sizeof(V*);
            const std::size_t doubled = std::min(max_table, 2 * (table_.capacity() / sizeof(V*)));
            table_.reallocate(std::max<std::size_t>({chunks, doubled, 8}) * sizeof(V*), chunks_ * sizeof(V*));
        }
        // A chunk refused (out of memory) leaves the size as it was; the
        // chunks made before it are kept (counted, freed with the map).
        table_.touch(chunks_ * sizeof(V*), (chunks - chunks_) * sizeof(V*));
        try {
            for (; chunks_ < chunks; ++chunks_)
                lookup()[chunks_] = static_cast<V*>(allocate(chunk_bytes, chunk_memory()));
        } catch (...) {
            if constexpr (Memory != map_memory::ncm) stamps_.grow(chunks_);
            throw;
        }
        if constexpr (Memory != map_memory::ncm) stamps_.grow(chunks); // new chunks count as changed
        for (std::size_t i = size_; i < n; ++i) {
            if constexpr (Memory != map_memory::ncm) stamps_.touch(i / per_chunk);
            V* p = ::new (&lookup()[i / per_chunk][i % per_chunk]) V(init);
            // wt: a chunk that existed at the last release is not written
            // back by the next (its values went through): nor may new ones.
            if constexpr (Memory == map_memory::wt)
                if (written_through(i / per_chunk)) write_back(p, sizeof(V));
        }
        size_ = n;
    }

    detail::tracked_storage table_; ///< the lookup table: chunk c at lookup()[c]; cached, a view per core
    std::size_t chunks_ = 0;
    std::size_t size_ = 0;
    V fill_;
    std::size_t through_from_ = 0; ///< wt: chunks made since the last release (their values are only in the view)
    change_stamps stamps_;

public:
    using shared_members = mesh::members<&chunked_map::table_, &chunked_map::chunks_, &chunked_map::size_,
                                         &chunked_map::fill_, &chunked_map::through_from_, &chunked_map::stamps_>;
};

} // namespace mesh
