#pragma once
// The compact binary store (tacomesh-rdf load): the dictionary and the
// index arrays as they are in memory, so that opening one is a few reads,
// no parsing and no sorting. Little-endian, versioned.
//
// A store file is input like any other: a truncated, foreign or damaged
// one must be refused on open with an error naming it, never become a
// store on which a lookup loops or reads out of bounds. So open checks
// every invariant the readers rely on (open_store lists them), and a store
// it accepts is one the loader could have made.
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <zlib.h>

#include <rdf/store.hpp>

namespace rdf {

inline constexpr char store_magic[8] = {'T', 'M', 'R', 'D', 'F', 'S', 'T', '1'};
/// 2: a CRC-32 of the dictionary's arrays in the header (version 1 had none).
inline constexpr std::uint32_t store_version = 2;
/// Magic, version, byte order, the dictionary's CRC-32: where the arrays start.
inline constexpr std::size_t store_header_bytes = 20;

/// Whether the file starts as a store file does.
inline bool is_store_file(const std::string& path) {
    std::unique_ptr<FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    char m[8] = {};
    return f && std::fread(m, 1, 8, f.get()) == 8 && std::memcmp(m, store_magic, 8) == 0;
}

namespace detail {
/// CRC-32 (zlib's) of bytes, continuing from `crc`.
inline std::uint32_t crc32_of(std::uint32_t crc, const void* p, std::size_t n) noexcept {
    // (Not called for nothing: an empty vector's data() may be null, and
    // zlib answers a null buffer with the initial value, dropping `crc`.)
    if (n == 0) return crc;
    return std::uint32_t(::crc32_z(crc, static_cast<const Bytef*>(p), n));
}

/// The checksum of the dictionary's three arrays as a store file holds them
/// (each its 8-byte length, then its elements). The shape checks on open
/// catch most damage to the keys, but not a flipped bit that turns one
/// well-formed key into another (<http://e/a> into <http://e/c>): the
/// indexes are checked against each other, the keys against nothing else.
/// On LUBM(1) it adds about 1% to an open (apps/rdf/README.md).
template <class Text, class Offsets, class Table>
std::uint32_t dictionary_crc(const Text& text, const Offsets& offsets, const Table& table) noexcept {
    std::uint32_t crc = 0;
    auto add = [&](const auto& v) {
        const std::uint64_t n = v.size();
        crc = crc32_of(crc, &n, 8);
        crc = crc32_of(crc, v.data(), n * sizeof(v[0]));
    };
    add(text);
    add(offsets);
    add(table);
    return crc;
}

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
/// Reads a store file's bytes from a FILE or from memory, never past the
/// size it was given: lengths read from the file are checked against it
/// before anything is allocated.
struct file_reader {
    const std::string& path;
    std::uint64_t remaining;
    FILE* f = nullptr;
    const char* memory = nullptr;
    bool summing = false; ///< add what is read to crc
    std::uint32_t crc = 0;
    void bytes(void* p, std::size_t n) {
        if (n > remaining) throw load_error(path, 0, 0, "truncated store file (made by another version, or cut short?)");
        if (n && f && std::fread(p, 1, n, f) != n)
            throw load_error(path, 0, 0,
                             std::string("cannot read: ") + (std::ferror(f) ? std::strerror(errno) : "the file shrank"));
        if (n && !f) {
            std::memcpy(p, memory, n);
            memory += n;
        }
        remaining -= n;
        if (summing) crc = crc32_of(crc, p, n);
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

/// What is wrong with a dictionary key, measured against the form
/// append_key (term.hpp) gives every term, or nullptr if nothing: <iri>,
/// "lexical" with an optional @lang or ^^<datatype>, _:label, all valid
/// UTF-8. Only what no loader can produce is refused: raptor passes IRIs
/// with spaces and '<', and language tags as xml:lang wrote them, so those
/// are not checked; a raw line end (a row is a line), an unescaped '>' in
/// an IRI or '"' in a literal, an escape append_key never writes, a
/// missing closing '>' or '"' are. `at` is set to the offending byte.
inline const char* key_shape_error(std::string_view k, std::size_t& at) noexcept {
    // The body of an IRI from `from`: up to its closing '>', which must end the key.
    auto iri_body = [&](std::size_t from) -> const char* {
        for (at = from; at < k.size();) {
            if (at + 8 <= k.size() && !word_may_hold<'>', '\\', '\n', '\r', '\0'>(k.data() + at)) {
                at += 8;
                continue;
            }
            const char c = k[at];
            if (c == '>') return at + 1 == k.size() ? nullptr : "characters after the IRI's closing '>'";
            if (c == '\n' || c == '\r' || c == '\0') return "a raw line end or NUL in an IRI";
            if (c != '\\') {
                ++at;
                continue;
            }
            const std::string_view e = k.substr(at + 1);
            if (e.starts_with('\\') || e.starts_with('n') || e.starts_with('r')) at += 2;
            else if (e.starts_with("u003E")) at += 6;
            else return "an escape in an IRI that the loader never writes";
        }
        return "an IRI without its closing '>'";
    };
    at = 0;
    if (k.empty()) return "an empty key";
    if (const std::size_t bad = invalid_utf8_at(k); bad != std::string_view::npos) {
        at = bad;
        return "not valid UTF-8";
    }
    if (k.front() == '<') return iri_body(1);
    if (k.starts_with("_:")) {
        if (k.size() == 2) return "a blank node without a label";
        for (at = 2; at < k.size(); ++at) {
            const auto c = static_cast<unsigned char>(k[at]);
            if (c <= 0x20 || c == '<' || c == '>' || c == '"') return "a blank node label with a space, control character, '<', '>' or '\"'";
        }
        return nullptr;
    }
    if (k.front() != '"') return "neither an IRI '<...>', a literal '\"...\"' nor a blank node '_:...'";
    for (at = 1; at < k.size();) {
        if (at + 8 <= k.size() && !word_may_hold<'"', '\\', '\n', '\r'>(k.data() + at)) {
            at += 8;
            continue;
        }
        const char c = k[at];
        if (c == '"') break;
        if (c == '\n' || c == '\r') return "a raw line end in a literal";
        if (c != '\\') {
            ++at;
            continue;
        }
        if (at + 1 < k.size() && (k[at + 1] == '"' || k[at + 1] == '\\' || k[at + 1] == 'n' || k[at + 1] == 'r')) at += 2;
        else return "an escape in a literal that the loader never writes";
    }
    if (at >= k.size()) return at = k.size() - 1, "a literal without its closing '\"'";
    const std::string_view rest = k.substr(++at);
    if (rest.empty()) return nullptr;
    if (rest.front() == '@') {
        if (rest.size() == 1) return "an empty language tag";
        for (++at; at < k.size(); ++at) {
            const auto c = static_cast<unsigned char>(k[at]);
            if (c < 0x20 || c == '"' || c == '<' || c == '>' || c == '@' || c == '\\')
                return "a language tag with a control character or one of \" < > @ \\";
        }
        return nullptr;
    }
    if (rest.starts_with("^^<")) return iri_body(at + 3);
    return "characters after a literal's closing '\"' that are neither @lang nor ^^<datatype>";
}

/// A key for a message: at most 60 bytes, control and non-ASCII bytes as \xHH.
inline std::string shown_key(std::string_view k) {
    std::string out;
    for (const char ch : k.substr(0, 60)) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7f) {
            out += ch;
        } else {
            constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return k.size() > 60 ? out + "..." : out;
}

/// The store in a file's bytes, every invariant checked (see open_store).
inline store read_checked_store(file_reader& r) {
    const std::string& path = r.path;
    auto corrupt = [&](const std::string& what) { return load_error(path, 0, 0, "corrupt store file: " + what); };
    char magic[8];
    r.bytes(magic, 8);
    if (std::memcmp(magic, store_magic, 8) != 0) throw load_error(path, 0, 0, "not a tacomesh-rdf store file");
    std::uint32_t version = 0, endian = 0;
    r.bytes(&version, 4);
    r.bytes(&endian, 4);
    if (version != store_version)
        throw load_error(path, 0, 0, "store file version " + std::to_string(version) + ", this tacomesh-rdf reads " +
                                         std::to_string(store_version) +
                                         ": make it again from the data with tacomesh-rdf load");
    if (endian != 0x01020304) throw load_error(path, 0, 0, "store file from a machine of the other byte order");
    std::uint32_t stored_crc = 0;
    r.bytes(&stored_crc, 4);
    r.summing = true;
    const auto text_bytes = r.array<char>();
    std::string text(text_bytes.begin(), text_bytes.end());
    auto offsets = r.array<std::uint64_t>();
    auto table = r.array<std::uint32_t>();
    r.summing = false;
    index_parts<std_vector> ix;
    for (std::size_t i = 0; i < order_count; ++i) {
        ix.offsets[i] = r.array<std::uint32_t>();
        ix.second[i] = r.array<term_id>();
        ix.third[i] = r.array<term_id>();
    }
    ix.predicates = r.array<predicate_stat>();
    if (r.remaining != 0) throw corrupt("bytes after the last array");

    // The dictionary: key(id) reads text[offsets[id], offsets[id + 1]).
    if (offsets.empty() || offsets.front() != 0 || offsets.back() != text.size()) throw corrupt("dictionary offsets");
    for (std::size_t i = 1; i < offsets.size(); ++i)
        if (offsets[i] < offsets[i - 1]) throw corrupt("dictionary offsets not ascending");
    if (offsets.size() - 1 >= no_term) throw corrupt("more terms than 32-bit ids can number");
    const term_id terms = term_id(offsets.size() - 1);
    // Every key whole: TSV prints keys as they are, and JSON output and
    // parse_key take them apart by their quotes and brackets.
    for (term_id t = 0; t < terms; ++t) {
        const std::string_view k(text.data() + offsets[t], std::size_t(offsets[t + 1] - offsets[t]));
        std::size_t at = 0;
        if (const char* why = key_shape_error(k, at))
            throw corrupt("dictionary key " + std::to_string(t) + " is not an N-Triples term: " + why + " at byte " +
                          std::to_string(store_header_bytes + 8 + offsets[t] + at) + " of the file, in " +
                          shown_key(k) + " (a damaged copy? make the store again with tacomesh-rdf load)");
    }
    // The hash table: a probe stops only at its key or an empty slot, so
    // there must be an empty slot; each id once, each where a probe for its
    // key finds it (which also makes the keys distinct).
    if ((table.size() & (table.size() - 1)) != 0) throw corrupt("dictionary hash table size is not a power of two");
    std::size_t used = 0;
    for (const std::uint32_t slot : table) {
        if (slot > terms) throw corrupt("dictionary hash table entry past the last term");
        used += slot != 0;
    }
    if (used != terms)
        throw corrupt("dictionary hash table holds " + std::to_string(used) + " ids for " + std::to_string(terms) + " terms");
    if (used == table.size() && terms != 0) throw corrupt("dictionary hash table has no empty slot");
    dictionary_builder dict(std::move(text), std::move(offsets), std::move(table));
    for (term_id t = 0; t < terms; ++t)
        if (dict.find(dict.key(t)) != t) throw corrupt("dictionary hash table does not match its keys");

    // The indexes. Positions are 32-bit; an empty store has no arrays at all.
    const std::size_t n = ix.second[0].size();
    if (n >= std::numeric_limits<std::uint32_t>::max()) throw corrupt("more triples than 32-bit positions can number");
    for (std::size_t i = 0; i < order_count; ++i)
        if (ix.second[i].size() != n || ix.third[i].size() != n) throw corrupt(std::string(name(order(i))) + " length");
    if (n == 0) {
        for (std::size_t i = 0; i < order_count; ++i)
            if (!ix.offsets[i].empty())
                throw corrupt(std::string(name(order(i))) + " offsets in a store without triples");
        if (!ix.predicates.empty()) throw corrupt("predicate statistics in a store without triples");
        if (r.crc != stored_crc) throw corrupt("the dictionary's checksum does not match its bytes");
        return store(std::move(dict), std::move(ix));
    }
    // SPO, the order the others are made from: a CSR over subject ids whose
    // buckets are sorted by (p, o) without repeats, every id a term's.
    const auto& off = ix.offsets[std::size_t(order::spo)];
    const auto& sec = ix.second[std::size_t(order::spo)];
    const auto& thi = ix.third[std::size_t(order::spo)];
    if (off.size() < 2 || off.front() != 0 || off.back() != n || off.size() > std::size_t(terms) + 1)
        throw corrupt("SPO offsets");
    for (std::size_t k = 1; k < off.size(); ++k)
        if (off[k] < off[k - 1]) throw corrupt("SPO offsets not ascending");
    for (std::size_t k = 0; k < n; ++k)
        if (sec[k] >= terms || thi[k] >= terms) throw corrupt("SPO ids past the last term");
    for (std::size_t a = 0; a + 1 < off.size(); ++a)
        for (std::size_t k = std::size_t(off[a]) + 1; k < off[a + 1]; ++k)
            if (std::pair(sec[k - 1], thi[k - 1]) >= std::pair(sec[k], thi[k])) throw corrupt("SPO not sorted");
    // The other orders and the statistics must be exactly what the loader
    // makes of these triples: merge joins and the data-parallel split read
    // several orders as one set, and the plans trust the statistics.
    std::vector<triple> triples;
    triples.reserve(n);
    detail::enumerate(ix, order::spo)([&](const std::array<term_id, 3>& t) { triples.push_back({t[0], t[1], t[2]}); });
    index_parts<std_vector> made;
    build_indexes(made, triples);
    // (SPO itself differs only if its offsets run past its last subject.)
    for (std::size_t i = 0; i < order_count; ++i)
        if (made.offsets[i] != ix.offsets[i] || made.second[i] != ix.second[i] || made.third[i] != ix.third[i])
            throw corrupt(i == 0 ? std::string("SPO offsets past the last subject")
                                 : std::string(name(order(i))) + " does not hold the triples of SPO");
    auto same = [](const predicate_stat& a, const predicate_stat& b) {
        return a.p == b.p && a.triples == b.triples && a.subjects == b.subjects && a.objects == b.objects;
    };
    if (!std::equal(made.predicates.begin(), made.predicates.end(), ix.predicates.begin(), ix.predicates.end(), same))
        throw corrupt("predicate statistics do not match the triples");
    // Last, so that every check above names what it finds (and fuzzing,
    // which cannot forge a checksum, still reaches them).
    if (r.crc != stored_crc)
        throw corrupt("the dictionary's checksum does not match its bytes: a term was changed after the store was "
                      "written (a damaged copy? make the store again with tacomesh-rdf load)");
    return store(std::move(dict), std::move(ix));
}
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
        const std::uint32_t crc = detail::dictionary_crc(d.text(), d.offsets(), d.table());
        w.bytes(&crc, 4);
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

/// Open a store file. Refused with a load_error naming the file unless
/// every invariant holds that lookups and queries rely on:
/// - magic, version and byte order; every array within the file, and
///   nothing after the last; last of all, the dictionary's CRC-32;
/// - dictionary: offsets start at 0, ascend, end at the text's size; fewer
///   terms than 32-bit ids; every key valid UTF-8 and whole, as append_key
///   writes it (key_shape_error);
/// - hash table: a power-of-two size, entries at most the term count, each
///   id exactly once and found by a probe for its key, an empty slot left
///   (a probe for a missing key stops there);
/// - indexes: all twelve columns of one length below 2^32 - 1; none at all
///   without triples; SPO a CSR over subject ids (offsets from 0 to the
///   length, ascending, at most one per term), ids below the term count,
///   each bucket strictly sorted by (p, o) (lookups binary-search it); PSO,
///   POS, OSP and the predicate statistics exactly what the loader builds
///   from SPO's triples.
inline store open_store(const std::string& path) {
    std::unique_ptr<FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw load_error(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fileno(f.get()), &st) != 0)
        throw load_error(path, 0, 0, std::string("cannot read: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw load_error(path, 0, 0, "not a regular file (a directory?)");
    detail::file_reader r{path, std::uint64_t(st.st_size), f.get()};
    return detail::read_checked_store(r);
}

/// A store file's bytes already in memory (`name` for messages): the checks
/// of open_store.
inline store read_store(std::string_view bytes, const std::string& name) {
    detail::file_reader r{name, bytes.size(), nullptr, bytes.data()};
    return detail::read_checked_store(r);
}

} // namespace rdf
