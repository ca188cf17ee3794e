#pragma once
// mesh::hash_map<K, V>: an open-addressing hash map in cached shared memory,
// for use inside shared objects (derive the object from
// mesh::sharing_aware<Object>), tracked like mesh::vector: a release writes
// back the 4 KB chunks its writer changed, a reader refreshes those.
//
//   struct dictionary : mesh::sharing_aware<dictionary> {
//       mesh::hash_map<mesh::string, std::uint32_t> ids;   // std::unordered_map<std::string, ...>
//   };
//   { auto w = mesh::write(d); w->ids.insert_or_assign("Cottbus", 7u); }
//   if (const std::uint32_t* id = mesh::read(d)->ids.find("Cottbus")) ...
//
// Layout: groups of 8 slots, each group led by a word of 8 control bytes
// (empty, deleted, or 7 bits of the key's hash), probed group by group with
// a quadratic step, the control bytes matched 8 at a time with word
// arithmetic. A lookup usually reads one control word and one slot, in one
// cache line pair; an insert changes one group, so it marks one chunk.
// Load factor at most 7/8; growth doubles.
//
// Keys and values are trivially copyable (they are copied between views byte
// by byte), except that K may be mesh::string: the map then keeps the key
// bytes in a pool of its own (a mesh::vector<char>) and looks up with
// std::string_view. An erased key's bytes stay in the pool until the pool is
// compacted: when the map grows, and at an insert when erased bytes outweigh
// the live ones (and the slots, which compaction visits), so that a map that
// churns through distinct keys keeps a pool about twice its live keys. Only
// inserts move key bytes, as before (a rehash always did): the key views an
// iteration gave stay valid through erases.
//
// Reading records nothing: find() const, contains, at() const, iteration.
// The mutating members record the chunks they change; a non-const find() or
// operator[] marks the slot's chunk changed, as the caller may write the value.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <mesh/containers/string.hpp>
#include <mesh/containers/vector.hpp>
#include <mesh/detail/checked.hpp>
#include <mesh/detail/parts.hpp>
#include <mesh/detail/tracked_storage.hpp>
#include <mesh/shared_members.hpp>

namespace mesh {

/// The default hash: integers, enums and pointers mixed (the map takes the
/// low 7 bits as a tag and the rest as the position, so identity hashes
/// would collide); strings through std::hash<std::string_view>; anything
/// else through std::hash<K>, mixed.
template <class K>
struct hash {
    static std::uint64_t mix(std::uint64_t x) noexcept { // a 64-bit finaliser (xor-shift-multiply)
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ULL;
        return x ^ (x >> 33);
    }
    std::uint64_t operator()(const K& k) const noexcept {
        if constexpr (std::is_integral_v<K> || std::is_enum_v<K>)
            return mix(std::uint64_t(k));
        else if constexpr (std::is_pointer_v<K>)
            return mix(std::uint64_t(reinterpret_cast<std::uintptr_t>(k)));
        else
            return mix(std::hash<K>{}(k));
    }
};
template <>
struct hash<string> {
    std::uint64_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

template <class K, class V, class Hash = mesh::hash<K>, class Eq = std::equal_to<>>
class hash_map {
    static constexpr bool string_keys = std::is_same_v<K, string>;
    static_assert(std::is_trivially_copyable_v<K> || string_keys,
                  "mesh::hash_map<K, V>: keys are copied between cores' views byte by byte, so K must be "
                  "trivially copyable, or mesh::string for string keys (not std::string, whose characters "
                  "live in one core's heap)");
    static_assert(std::is_trivially_copyable_v<V>,
                  "mesh::hash_map<K, V>: values are copied between cores' views byte by byte, so V must be "
                  "trivially copyable. For string values, keep the characters in a mesh::vector<char> and "
                  "store offsets; for a list per key, keep one mesh::vector of all elements and store "
                  "ranges of it");

public:
    using key_type = K;
    using mapped_type = V;
    using size_type = std::size_t;
    /// What lookups take: K, or std::string_view for mesh::string keys.
    using lookup_type = std::conditional_t<string_keys, std::string_view, K>;
    /// What iteration yields as the key.
    using key_view = std::conditional_t<string_keys, std::string_view, const K&>;

    hash_map() { enlist(); }
    explicit hash_map(size_type n) {
        enlist();
        reserve(n);
    }
    hash_map(const hash_map& o) : hash_map() { *this = o; }
    hash_map& operator=(const hash_map& o) {
        if (this == &o) return *this;
        reserve(o.size()); // first: a refused size leaves the map as it was
        clear();
        for (auto [k, v] : o) insert_or_assign(k, v);
        return *this;
    }
    /// Copies (the buffers stay with their containers: see tracked_storage).
    hash_map& operator=(hash_map&& o) {
        *this = std::as_const(o);
        o.clear();
        return *this;
    }
    hash_map(hash_map&& o) : hash_map(std::as_const(o)) { o.clear(); }

    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    /// Slots; the map grows when size() would pass 7/8 of them.
    size_type capacity() const noexcept { return groups_ * group_slots; }
    /// The most keys: 7/8 of the slots of the largest table a shared
    /// container's buffer may hold (more is refused with std::length_error,
    /// the map unchanged). String keys also share a pool of at most
    /// max_key_bytes bytes.
    static constexpr size_type max_size() noexcept { return max_load(max_groups); }
    static constexpr size_type max_key_bytes = std::numeric_limits<std::uint32_t>::max();

    // ---- reading (records nothing) ----
    const V* find(const lookup_type& k) const noexcept {
        const slot* s = locate(k);
        return s ? &s->value : nullptr;
    }
    bool contains(const lookup_type& k) const noexcept { return locate(k) != nullptr; }
    size_type count(const lookup_type& k) const noexcept { return contains(k) ? 1 : 0; }
    const V& at(const lookup_type& k) const {
        if (const V* v = find(k)) return *v;
        missing(k);
    }

    // ---- writing (records the chunks it changes) ----
    V* find(const lookup_type& k) noexcept {
        slot* s = const_cast<slot*>(locate(k));
        if (!s) return nullptr;
        touch_slot(s);
        return &s->value;
    }
    V& at(const lookup_type& k) {
        if (V* v = find(k)) return *v;
        missing(k);
    }
    /// The value at k, made V{} first if k is new.
    V& operator[](const lookup_type& k) { return *try_emplace(k).first; }
    /// Insert V(args...) at k unless k is there; returns the value and whether it was inserted.
    template <class... Args>
    std::pair<V*, bool> try_emplace(const lookup_type& k, Args&&... args) {
        const std::uint64_t h = hasher_(k);
        if (slot* s = const_cast<slot*>(locate(k, h))) {
            touch_slot(s);
            return {&s->value, false};
        }
        // Refusals first, so that a refused key changes nothing.
        if (size_ == max_size()) [[unlikely]]
            detail::throw_too_many("mesh::hash_map::try_emplace: size() + 1", size_ + 1, sizeof(slot), max_size());
        if constexpr (string_keys) {
            // A view of the pool's own bytes (an erased key's, read back):
            // compaction or a rehash would move them under it.
            const vector<char>& pool = keys_; // const: reading marks no chunk
            const std::less_equal<const char*> le;
            if (pool.capacity() && le(pool.data(), k.data()) && !le(pool.data() + pool.capacity(), k.data())) {
                const std::string copy(k);
                return try_emplace(std::string_view(copy), std::forward<Args>(args)...);
            }
            make_key_room(k.size());
        }
        const V made(std::forward<Args>(args)...); // args may point into the table, which claim may move
        slot* s = claim(h);
        store_key(s->key, k);
        ::new (&s->value) V(made);
        ++size_;
        return {&s->value, true};
    }
    std::pair<V*, bool> insert(const lookup_type& k, const V& v) { return try_emplace(k, v); }
    std::pair<V*, bool> insert_or_assign(const lookup_type& k, const V& v) {
        auto r = try_emplace(k, v);
        if (!r.second) *r.first = v;
        return r;
    }
    /// Remove k; false if it was not there.
    bool erase(const lookup_type& k) noexcept {
        const slot* s = locate(k);
        if (!s) return false;
        const std::size_t g = std::size_t(reinterpret_cast<const std::byte*>(s) - storage_.data()) / sizeof(group);
        const std::size_t i = std::size_t(s - groups()[g].slots);
        group& gr = groups()[g];
        // A group with an empty slot ended every probe that reached it, so
        // nothing lies beyond it on this group's account: the slot may be
        // empty again. Otherwise it stays deleted (a tombstone).
        if (match_empty(gr.ctrl)) {
            set_ctrl(gr, i, empty_slot);
            ++growth_left_;
        } else {
            set_ctrl(gr, i, deleted_slot);
        }
        --size_;
        if constexpr (string_keys) key_garbage_ += s->key.length; // reclaimed by a later insert
        return true;
    }
    void clear() {
        if (size_ == 0) return;
        for (std::size_t g = 0; g < groups_; ++g) groups()[g].ctrl = all_empty;
        storage_.touch(0, groups_ * sizeof(group));
        size_ = 0;
        growth_left_ = max_load(groups_);
        if constexpr (string_keys) {
            keys_.clear();
            key_garbage_ = 0;
        }
    }
    /// Room for n keys without growing.
    void reserve(size_type n) {
        detail::check_count(n, max_size(), sizeof(slot), "mesh::hash_map::reserve(n)");
        if (n > max_load(groups_)) rehash(groups_for(n));
    }

    // ---- iteration (const; in slot order) ----
    class const_iterator {
    public:
        using value_type = std::pair<key_view, const V&>;
        using difference_type = std::ptrdiff_t;
        using iterator_category = std::forward_iterator_tag;
        struct arrow {
            value_type v;
            const value_type* operator->() const noexcept { return &v; }
        };
        const_iterator() = default;
        value_type operator*() const noexcept {
            const slot& s = map_->groups()[g_].slots[i_];
            return {map_->key_of(s.key), s.value};
        }
        arrow operator->() const noexcept { return {**this}; }
        const_iterator& operator++() noexcept {
            ++i_;
            settle();
            return *this;
        }
        const_iterator operator++(int) noexcept {
            auto old = *this;
            ++*this;
            return old;
        }
        friend bool operator==(const const_iterator& a, const const_iterator& b) noexcept {
            return a.g_ == b.g_ && a.i_ == b.i_;
        }

    private:
        friend hash_map;
        const_iterator(const hash_map* m, std::size_t g) noexcept : map_(m), g_(g) { settle(); }
        void settle() noexcept { // on to the next full slot, or the end
            for (; g_ < map_->groups_; ++g_, i_ = 0)
                for (; i_ < group_slots; ++i_)
                    if (is_full(map_->groups()[g_].ctrl, i_)) return;
            i_ = 0;
        }
        const hash_map* map_ = nullptr;
        std::size_t g_ = 0, i_ = 0;
    };
    const_iterator begin() const noexcept { return const_iterator(this, 0); }
    const_iterator end() const noexcept { return const_iterator(this, groups_); }

private:
    template <class>
    friend struct detail::part_ops_of;

    struct string_ref {
        std::uint32_t offset, length;
    };
    using stored_key = std::conditional_t<string_keys, string_ref, K>;
    struct slot {
        stored_key key;
        V value;
    };
    static constexpr std::size_t group_slots = 8;
    struct group {
        std::uint64_t ctrl; ///< byte i (bits 8i..8i+7): slot i's control
        slot slots[group_slots];
    };

    // Control bytes: full = the hash's low 7 bits (high bit clear); empty
    // and deleted have the high bit set and differ in bits 0 and 1, which
    // the word tests below use to tell them apart 8 bytes at a time.
    static constexpr std::uint8_t empty_slot = 0x80, deleted_slot = 0xFE;
    static constexpr std::uint64_t lsbs = 0x0101010101010101ULL, msbs = 0x8080808080808080ULL;
    static constexpr std::uint64_t all_empty = lsbs * empty_slot;

    /// High bit of byte i set where byte i may equal tag (false positives
    /// possible next to a true match: keys are compared anyway).
    static std::uint64_t match(std::uint64_t ctrl, std::uint8_t tag) noexcept {
        const std::uint64_t x = ctrl ^ (lsbs * tag);
        return (x - lsbs) & ~x & msbs;
    }
    static std::uint64_t match_empty(std::uint64_t ctrl) noexcept { return ctrl & (~ctrl << 6) & msbs; }
    static std::uint64_t match_free(std::uint64_t ctrl) noexcept { return ctrl & (~ctrl << 7) & msbs; }
    static bool is_full(std::uint64_t ctrl, std::size_t i) noexcept { return !((ctrl >> (8 * i)) & 0x80); }
    static std::size_t first(std::uint64_t bits) noexcept { return std::size_t(std::countr_zero(bits)) / 8; }

    static constexpr std::size_t max_load(std::size_t groups) noexcept { return groups * group_slots * 7 / 8; }
    /// The largest table: a power of two of groups whose bytes a buffer may hold.
    static constexpr std::size_t max_groups = std::bit_floor(detail::tracked_storage::max_bytes / sizeof(group));
    /// Groups for n keys (n at most max_size(), so neither the product nor bit_ceil can overflow).
    static std::size_t groups_for(std::size_t n) noexcept {
        return std::min(max_groups, std::bit_ceil(std::max<std::size_t>(1, (n * 8 / 7 + group_slots) / group_slots)));
    }
    /// Erased key bytes below which the pool is not compacted (a chunk).
    static constexpr std::size_t min_compaction = detail::tracked_storage::chunk_bytes;

    group* groups() const noexcept { return std::launder(reinterpret_cast<group*>(storage_.data())); }
    void touch_slot(const slot* s) noexcept {
        const auto at = std::size_t(reinterpret_cast<const std::byte*>(s) - storage_.data());
        storage_.touch(at, sizeof(slot));
    }
    void set_ctrl(group& g, std::size_t i, std::uint8_t c) noexcept {
        g.ctrl = (g.ctrl & ~(std::uint64_t(0xFF) << (8 * i))) | (std::uint64_t(c) << (8 * i));
        storage_.touch(std::size_t(reinterpret_cast<std::byte*>(&g) - storage_.data()), sizeof(g.ctrl));
    }

    key_view key_of(const stored_key& k) const noexcept {
        if constexpr (string_keys)
            return {keys_.data() + k.offset, k.length};
        else
            return k;
    }
    bool equal(const stored_key& s, const lookup_type& k) const noexcept {
        if constexpr (string_keys)
            return s.length == k.size() && std::memcmp(keys_.data() + s.offset, k.data(), k.size()) == 0;
        else
            return eq_(s, k);
    }
    /// Before a new key of `bytes` is stored: the erased keys' bytes
    /// reclaimed when they dominate, and room for it in the pool, or the
    /// length_error that says there is none. Amortised: compaction visits
    /// every slot and moves the live bytes, paid for by at least as many
    /// erased bytes since the last.
    void make_key_room(std::size_t bytes) {
        const bool dominant = key_garbage_ >= std::max({keys_.size() - key_garbage_, capacity(), min_compaction});
        const bool no_room = bytes > max_key_bytes - keys_.size();
        if (key_garbage_ && (dominant || no_room)) compact_keys();
        if (bytes > max_key_bytes - keys_.size()) [[unlikely]]
            throw std::length_error("mesh::hash_map<mesh::string, V>: a key of " + std::to_string(bytes) +
                                    " bytes does not fit: the keys take " + std::to_string(keys_.size()) +
                                    " bytes of the " + std::to_string(max_key_bytes) +
                                    " a map's key pool may hold (its offsets are 32-bit)");
    }
    /// The caller made room (make_key_room).
    void store_key(stored_key& s, const lookup_type& k) {
        if constexpr (string_keys) {
            s = {std::uint32_t(keys_.size()), std::uint32_t(k.size())};
            keys_.append(k.begin(), k.end());
        } else {
            s = k;
        }
    }
    /// Move the live keys' bytes to the front of the pool, in pool order
    /// (each moves down, never over one not yet moved), and drop the rest.
    /// The pool keeps its buffer: readers refresh the chunks that changed.
    /// Nothing changes when the scratch list cannot be had (the insert goes
    /// on without it: the bytes are reclaimed at a later compaction, or by
    /// the next rehash).
    void compact_keys() noexcept {
        if constexpr (string_keys) {
            std::vector<slot*> live;
            try {
                live.reserve(size_);
            } catch (...) {
                return;
            }
            for (std::size_t g = 0; g < groups_; ++g)
                for (std::size_t i = 0; i < group_slots; ++i)
                    if (is_full(groups()[g].ctrl, i)) live.push_back(&groups()[g].slots[i]);
            std::sort(live.begin(), live.end(), [](const slot* a, const slot* b) { return a->key.offset < b->key.offset; });
            char* pool = keys_.data(); // marks the pool's chunks changed
            std::uint32_t at = 0;
            for (slot* s : live) {
                if (s->key.offset != at) {
                    std::memmove(pool + at, pool + s->key.offset, s->key.length);
                    s->key.offset = at;
                    touch_slot(s);
                }
                at += s->key.length;
            }
            keys_.resize(at);
            key_garbage_ = 0;
        }
    }

    const slot* locate(const lookup_type& k) const noexcept { return locate(k, hasher_(k)); }
    const slot* locate(const lookup_type& k, std::uint64_t h) const noexcept {
        if (!groups_) return nullptr;
        const std::uint8_t tag = std::uint8_t(h & 0x7F);
        const std::size_t mask = groups_ - 1;
        std::size_t g = std::size_t(h >> 7) & mask;
        // Triangular steps visit every group, and some group always has an
        // empty slot (only empty slots count against the 7/8 load), so the
        // probe ends.
        for (std::size_t step = 1;; g = (g + step++) & mask) {
            const group& gr = groups()[g];
            for (std::uint64_t bits = match(gr.ctrl, tag); bits; bits &= bits - 1)
                if (const slot& s = gr.slots[first(bits)]; equal(s.key, k)) return &s;
            if (match_empty(gr.ctrl)) return nullptr;
        }
    }
    /// A free slot for a new key with hash h (growing first if need be), marked full.
    /// The caller checked size() < max_size(): a table of max_groups then
    /// has tombstones to drop instead of growing.
    slot* claim(std::uint64_t h) {
        if (growth_left_ == 0)
            rehash(size_ + 1 > max_load(groups_) / 2 && groups_ < max_groups ? 2 * std::max<std::size_t>(groups_, 1)
                                                                             : groups_);
        const std::size_t mask = groups_ - 1;
        std::size_t g = std::size_t(h >> 7) & mask;
        for (std::size_t step = 1;; g = (g + step++) & mask) {
            group& gr = groups()[g];
            if (const std::uint64_t bits = match_free(gr.ctrl)) {
                const std::size_t i = first(bits);
                if (match_empty(gr.ctrl) & (std::uint64_t(0x80) << (8 * i))) --growth_left_;
                set_ctrl(gr, i, std::uint8_t(h & 0x7F));
                touch_slot(&gr.slots[i]);
                return &gr.slots[i];
            }
        }
    }
    /// Rebuild with `groups` groups (dropping tombstones; string keys compacted).
    void rehash(std::size_t count) {
        std::vector<group> old(groups_); // this core's heap: a scratch copy for the rebuild
        if (groups_) std::memcpy(static_cast<void*>(old.data()), storage_.data(), groups_ * sizeof(group));
        std::vector<char> old_keys;
        if constexpr (string_keys) old_keys.assign(keys_.cbegin(), keys_.cend());
        storage_.reallocate(count * sizeof(group), 0); // may fail: nothing has changed before it
        if constexpr (string_keys) {
            keys_.clear(); // the live keys go back into its buffer: no allocation
            key_garbage_ = 0;
        }
        for (std::size_t g = 0; g < count; ++g) groups()[g].ctrl = all_empty;
        groups_ = count;
        growth_left_ = max_load(count);
        for (const group& gr : old)
            for (std::size_t i = 0; i < group_slots; ++i) {
                if (!is_full(gr.ctrl, i)) continue;
                const slot& s = gr.slots[i];
                if constexpr (string_keys) {
                    const std::string_view k(old_keys.data() + s.key.offset, s.key.length);
                    slot* to = claim(hasher_(k));
                    store_key(to->key, k);
                    to->value = s.value;
                } else {
                    slot* to = claim(hasher_(s.key));
                    *to = s;
                }
            }
    }
    [[noreturn]] static void missing(const lookup_type& k) {
        if constexpr (string_keys)
            throw std::out_of_range("mesh::hash_map: no key \"" + std::string(k) + "\"");
        else if constexpr (std::is_arithmetic_v<K>)
            throw std::out_of_range("mesh::hash_map: no key " + std::to_string(k));
        else
            throw std::out_of_range("mesh::hash_map: no such key");
    }

    void enlist() { detail::register_part(this, &detail::part_ops_of<hash_map>::table); }

    detail::tracked_storage storage_;
    std::size_t groups_ = 0; ///< a power of two, or 0
    std::size_t size_ = 0;
    std::size_t growth_left_ = 0; ///< empty slots that may still be filled before a rehash
    std::size_t key_garbage_ = 0; ///< string keys: erased keys' bytes still in the pool
    [[no_unique_address]] Hash hasher_;
    [[no_unique_address]] Eq eq_;
    struct no_keys {};
    [[no_unique_address]] std::conditional_t<string_keys, vector<char>, no_keys> keys_;

public:
    // Slots and key pool in mesh::allocate'd memory, registered with the
    // object as a vector's buffer is (vector.hpp); the [[no_unique_address]]
    // members take no room of their own, which a declared list cannot model.
    using shared_members = mesh::trust_members<hash_map>;
};

} // namespace mesh
