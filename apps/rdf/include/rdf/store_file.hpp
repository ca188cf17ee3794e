#pragma once
// The compact binary store (tacomesh-rdf load): the dictionary and the
// index arrays as they are in memory, so that opening one is a few reads,
// no parsing and no sorting. Little-endian, versioned; every array is
// checked on open (sizes, offsets monotonic and in range, ids below the
// term count), so a truncated or foreign file is a clear error, never a
// store that crashes a query later.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <cerrno>
#include <vector>

#include <rdf/store.hpp>

namespace rdf {

inline constexpr char store_magic[8] = {'T', 'M', 'R', 'D', 'F', 'S', 'T', '1'};
inline constexpr std::uint32_t store_version = 1;

/// Whether the file starts as a store file does.
inline bool is_store_file(const std::string& path) {
    std::unique_ptr<FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    char m[8] = {};
    return f && std::fread(m, 1, 8, f.get()) == 8 && std::memcmp(m, store_magic, 8) == 0;
}

namespace detail {
struct file_writer {
    FILE* f;
    const std::string& path;
    void bytes(const void* p, std::size_t n) {
        if (n && std::fwrite(p, 1, n, f) != n) throw load_error(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
    }
    template <class V>
    void array(const V& v) {
        const std::uint64_t n = v.size();
        bytes(&n, 8);
        bytes(v.data(), n * sizeof(v[0]));
    }
};
struct file_reader {
    FILE* f;
    const std::string& path;
    std::uint64_t remaining;
    void bytes(void* p, std::size_t n) {
        if (n > remaining || (n && std::fread(p, 1, n, f) != n))
            throw load_error(path, 0, 0, "truncated store file (made by another version, or cut short?)");
        remaining -= n;
    }
    template <class T>
    std::vector<T> array() {
        std::uint64_t n = 0;
        bytes(&n, 8);
        if (n > remaining / sizeof(T)) throw load_error(path, 0, 0, "corrupt store file: an array is longer than the file");
        std::vector<T> v(n);
        bytes(v.data(), n * sizeof(T));
        return v;
    }
};
} // namespace detail

inline void save_store(const store& s, const std::string& path) {
    const std::string tmp = path + ".tmp";
    {
        std::unique_ptr<FILE, decltype(&std::fclose)> f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
        if (!f) throw load_error(path, 0, 0, std::string("cannot create: ") + std::strerror(errno));
        detail::file_writer w{f.get(), path};
        w.bytes(store_magic, 8);
        w.bytes(&store_version, 4);
        const std::uint32_t endian = 0x01020304;
        w.bytes(&endian, 4);
        const dictionary_builder& d = s.dictionary();
        w.array(d.text());
        w.array(d.offsets());
        w.array(d.table());
        const auto& ix = s.index();
        for (std::size_t i = 0; i < order_count; ++i) {
            w.array(ix.offsets[i]);
            w.array(ix.second[i]);
            w.array(ix.third[i]);
        }
        w.array(ix.predicates);
        if (std::fflush(f.get()) != 0) throw load_error(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
    }
    // Whole or not at all: a reader never sees half a store.
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw load_error(path, 0, 0, std::string("cannot replace: ") + std::strerror(errno));
    }
}

inline store open_store(const std::string& path) {
    std::unique_ptr<FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw load_error(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
    std::fseek(f.get(), 0, SEEK_END);
    const long size = std::ftell(f.get());
    std::fseek(f.get(), 0, SEEK_SET);
    detail::file_reader r{f.get(), path, std::uint64_t(size < 0 ? 0 : size)};
    char magic[8];
    r.bytes(magic, 8);
    if (std::memcmp(magic, store_magic, 8) != 0) throw load_error(path, 0, 0, "not a tacomesh-rdf store file");
    std::uint32_t version = 0, endian = 0;
    r.bytes(&version, 4);
    r.bytes(&endian, 4);
    if (version != store_version)
        throw load_error(path, 0, 0, "store file version " + std::to_string(version) + ", this tacomesh-rdf reads " +
                                         std::to_string(store_version) + ": load the data again");
    if (endian != 0x01020304) throw load_error(path, 0, 0, "store file from a machine of the other byte order");
    const auto text_bytes = r.array<char>();
    std::string text(text_bytes.begin(), text_bytes.end());
    auto offsets = r.array<std::uint64_t>();
    auto table = r.array<std::uint32_t>();
    index_parts<std_vector> ix;
    for (std::size_t i = 0; i < order_count; ++i) {
        ix.offsets[i] = r.array<std::uint32_t>();
        ix.second[i] = r.array<term_id>();
        ix.third[i] = r.array<term_id>();
    }
    ix.predicates = r.array<predicate_stat>();
    auto corrupt = [&](const std::string& what) { return load_error(path, 0, 0, "corrupt store file: " + what); };
    if (r.remaining != 0) throw corrupt("bytes after the last array");
    if (offsets.empty() || offsets.front() != 0 || offsets.back() != text.size()) throw corrupt("dictionary offsets");
    for (std::size_t i = 1; i < offsets.size(); ++i)
        if (offsets[i] < offsets[i - 1]) throw corrupt("dictionary offsets not ascending");
    const std::uint64_t terms = offsets.size() - 1;
    if ((table.size() & (table.size() - 1)) != 0 || table.size() < terms) throw corrupt("dictionary hash table size");
    for (std::uint32_t slot : table)
        if (slot > terms) throw corrupt("dictionary hash table entry");
    const std::size_t n = ix.second[0].size();
    for (std::size_t i = 0; i < order_count; ++i) {
        const auto& off = ix.offsets[i];
        if (ix.second[i].size() != n || ix.third[i].size() != n) throw corrupt(std::string(name(order(i))) + " length");
        if (off.empty() || off.front() != 0 || off.back() != n || off.size() > terms + 1)
            throw corrupt(std::string(name(order(i))) + " offsets");
        for (std::size_t k = 1; k < off.size(); ++k)
            if (off[k] < off[k - 1]) throw corrupt(std::string(name(order(i))) + " offsets not ascending");
        for (std::size_t k = 0; k < n; ++k)
            if (ix.second[i][k] >= terms || ix.third[i][k] >= terms) throw corrupt(std::string(name(order(i))) + " ids");
        // Lookups binary-search each bucket: it must be sorted.
        for (std::size_t a = 0; a + 1 < off.size(); ++a)
            for (std::size_t k = std::size_t(off[a]) + 1; k < off[a + 1]; ++k)
                if (std::pair(ix.second[i][k - 1], ix.third[i][k - 1]) >= std::pair(ix.second[i][k], ix.third[i][k]))
                    throw corrupt(std::string(name(order(i))) + " not sorted");
    }
    for (std::size_t k = 0; k < ix.predicates.size(); ++k)
        if (ix.predicates[k].p >= terms || (k && ix.predicates[k - 1].p >= ix.predicates[k].p)) throw corrupt("predicate statistics");
    // Each table's keys must hash to where they are found, or lookups of
    // query constants would silently miss: check by looking every key up.
    dictionary_builder dict(std::move(text), std::move(offsets), std::move(table));
    for (term_id t = 0; t < terms; ++t)
        if (dict.find(dict.key(t)) != t) throw corrupt("dictionary hash table does not match its keys");
    return store(std::move(dict), std::move(ix));
}

} // namespace rdf
