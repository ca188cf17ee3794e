#pragma once
// Dictionary encoding: every distinct term (by its canonical N-Triples key,
// term.hpp) gets a dense 32-bit id, in order of first appearance. The keys
// live back to back in one text arena with an offset per id, and the hash
// index is an open-addressing table of ids (0 = empty, else id + 1): about
// key bytes + 4 + 8 bytes per term, nothing per triple.
//
// dictionary_builder grows while parsing; dictionary_view is what queries
// read, over either private vectors or a MESH shared object's parts
// (store.hpp), so the lookup code is the same for both.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rdf {

using term_id = std::uint32_t;
inline constexpr term_id no_term = std::numeric_limits<term_id>::max();

namespace detail {
/// 64-bit hash of a key: 8 bytes a step, multiply-xorshift mixing. Keys
/// here are IRIs sharing long prefixes, so every byte must reach the result.
inline std::uint64_t hash_key(std::string_view s) noexcept {
    constexpr std::uint64_t m = 0x9e3779b97f4a7c15ull;
    std::uint64_t h = s.size() * m;
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        h = (h ^ w) * m;
        h ^= h >> 29;
    }
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = (h ^ w) * m;
    h ^= h >> 32;
    return h * 0xbf58476d1ce4e5b9ull ^ (h >> 31);
}

/// Look `key` up in an open-addressing table of ids + 1 (power-of-two size,
/// at least one slot empty: the probe for a missing key ends there).
template <class KeyOf>
term_id probe(std::span<const std::uint32_t> table, std::string_view key, std::uint64_t h, KeyOf key_of) noexcept {
    if (table.empty()) return no_term;
    const std::size_t mask = table.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
        const std::uint32_t slot = table[i];
        if (slot == 0) return no_term;
        if (key_of(slot - 1) == key) return slot - 1;
    }
}
} // namespace detail

/// Read-only dictionary over spans (private or shared storage).
class dictionary_view {
public:
    dictionary_view() = default;
    dictionary_view(std::span<const char> text, std::span<const std::uint64_t> offsets,
                    std::span<const std::uint32_t> table)
        : text_(text), offsets_(offsets), table_(table) {}

    term_id size() const noexcept { return offsets_.empty() ? 0 : term_id(offsets_.size() - 1); }
    std::string_view key(term_id id) const noexcept {
        return {text_.data() + offsets_[id], std::size_t(offsets_[id + 1] - offsets_[id])};
    }
    /// The id of a canonical key, or no_term.
    term_id find(std::string_view k) const noexcept {
        return detail::probe(table_, k, detail::hash_key(k), [&](term_id id) { return key(id); });
    }
    std::size_t bytes() const noexcept { return text_.size() + offsets_.size_bytes() + table_.size_bytes(); }

private:
    std::span<const char> text_;
    std::span<const std::uint64_t> offsets_;
    std::span<const std::uint32_t> table_;
};

/// A growing dictionary: intern() returns the id of a key, adding it if new.
class dictionary_builder {
public:
    dictionary_builder() { offsets_.push_back(0); }
    /// Adopt stored parts (a store file): `table` must be the hash index of
    /// exactly these keys, each id once where a probe for its key finds it,
    /// with an empty slot left, where a probe for a missing key stops
    /// (store_file.hpp checks all that before it gets here).
    dictionary_builder(std::string text, std::vector<std::uint64_t> offsets, std::vector<std::uint32_t> table)
        : text_(std::move(text)), offsets_(std::move(offsets)), table_(std::move(table)) {}

    term_id size() const noexcept { return term_id(offsets_.size() - 1); }
    std::string_view key(term_id id) const noexcept {
        return {text_.data() + offsets_[id], std::size_t(offsets_[id + 1] - offsets_[id])};
    }
    term_id find(std::string_view k) const noexcept { return view().find(k); }

    term_id intern(std::string_view k) {
        const std::uint64_t h = detail::hash_key(k);
        if (2 * (std::size_t(size()) + 1) > table_.size()) grow();
        const std::size_t mask = table_.size() - 1;
        std::size_t i = h & mask;
        for (; table_[i] != 0; i = (i + 1) & mask)
            if (key(table_[i] - 1) == k) return table_[i] - 1;
        if (size() == no_term - 1)
            throw std::length_error("rdf: more than 2^32 - 2 distinct terms; ids are 32-bit");
        const term_id id = size();
        text_.append(k);
        offsets_.push_back(text_.size());
        table_[i] = id + 1;
        return id;
    }

    /// Forget the ids from `n` on (a failed load's terms): the text and the
    /// offsets shrink, and the hash index is rebuilt without them (open
    /// addressing cannot just empty their slots: a later key's probe may pass
    /// through one).
    void truncate(term_id n) {
        if (n >= size()) return;
        text_.resize(offsets_[n]);
        offsets_.resize(std::size_t(n) + 1);
        std::fill(table_.begin(), table_.end(), 0u);
        rehash_into(table_);
    }

    dictionary_view view() const noexcept { return {text_, offsets_, table_}; }
    const std::string& text() const noexcept { return text_; }
    const std::vector<std::uint64_t>& offsets() const noexcept { return offsets_; }
    const std::vector<std::uint32_t>& table() const noexcept { return table_; }
    void reserve(std::size_t terms, std::size_t text_bytes) {
        offsets_.reserve(terms + 1);
        text_.reserve(text_bytes);
        while (table_.size() < 2 * terms) grow();
    }

private:
    void grow() {
        std::vector<std::uint32_t> t(std::max<std::size_t>(64, table_.size() * 2), 0);
        rehash_into(t);
        table_ = std::move(t);
    }
    void rehash_into(std::vector<std::uint32_t>& t) const {
        const std::size_t mask = t.size() - 1;
        for (term_id id = 0; id < size(); ++id) {
            std::size_t i = detail::hash_key(key(id)) & mask;
            while (t[i] != 0) i = (i + 1) & mask;
            t[i] = id + 1;
        }
    }

    std::string text_;
    std::vector<std::uint64_t> offsets_;
    std::vector<std::uint32_t> table_;
};

} // namespace rdf
