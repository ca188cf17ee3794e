#pragma once
// The compact binary store (tacomesh-rdf load): the dictionary and the
// index arrays as they are in memory, each at a multiple of 8 bytes, so
// that a store file is opened by mapping it: no parsing and no sorting, and
// a mapped_store's queries read the arrays where they lie in the file
// (only the pages a query touches are read; a store larger than memory
// answers). Little-endian, versioned.
//
// A store file is input like any other: a truncated, foreign or damaged
// one must be refused on open with an error naming it, never become a
// store on which a lookup loops or reads out of bounds. So open checks
// every invariant the readers rely on (open_store lists them), and a store
// it accepts is one the loader could have made. (A mapped open may skip the
// checks for a file it checked before and that has not changed since:
// checked_stores.hpp.)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <zlib.h>

#include <rdf/checked_stores.hpp>
#include <rdf/store.hpp>

namespace rdf {

inline constexpr char store_magic[8] = {'T', 'M', 'R', 'D', 'F', 'S', 'T', '1'};
/// 2: a CRC-32 of the dictionary's arrays in the header (version 1 had none).
/// 3: every array at a multiple of 8 bytes (mapped in place), and a CRC-32
///    of the index arrays beside the dictionary's.
inline constexpr std::uint32_t store_version = 3;
/// Magic, version, byte order, the dictionary's and the indexes' CRC-32:
/// where the arrays start.
inline constexpr std::size_t store_header_bytes = 24;

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

/// The checksum of arrays as a store file holds them (each its 8-byte
/// length, then its elements; not the padding), continuing from `crc`.
template <class... Arrays>
std::uint32_t arrays_crc(std::uint32_t crc, const Arrays&... v) noexcept {
    auto add = [&](const auto& a) {
        const std::uint64_t n = a.size();
        crc = crc32_of(crc, &n, 8);
        crc = crc32_of(crc, a.data(), n * sizeof(a[0]));
    };
    (add(v), ...);
    return crc;
}

/// The checksum of the dictionary's three arrays. The shape checks on open
/// catch most damage to the keys, but not a flipped bit that turns one
/// well-formed key into another (<http://e/a> into <http://e/c>): the
/// indexes are checked against each other, the keys against nothing else.
/// On LUBM(1) it adds about 1% to an open (apps/rdf/README.md).
template <class Text, class Offsets, class Table>
std::uint32_t dictionary_crc(const Text& text, const Offsets& offsets, const Table& table) noexcept {
    return arrays_crc(0, text, offsets, table);
}

/// The checksum of the index arrays, in the file's order (each order's
/// offsets, second and third columns; the predicate statistics). A mapped
/// store's open checks every id and bucket for the readers' sake but does
/// not rebuild the orders from SPO to compare them, as open_store does: a
/// damaged id that stays in range and in order is caught here.
template <class Parts>
std::uint32_t index_crc(const Parts& ix) noexcept {
    std::uint32_t crc = 0;
    for (std::size_t i = 0; i < order_count; ++i) crc = arrays_crc(crc, ix.offsets[i], ix.second[i], ix.third[i]);
    return arrays_crc(crc, ix.predicates);
}

inline constexpr std::size_t padding_to_8(std::size_t bytes) noexcept { return (8 - bytes % 8) % 8; }

struct file_writer {
    FILE* f;
    const std::string& path;
    void bytes(const void* p, std::size_t n) {
        if (n && std::fwrite(p, 1, n, f) != n) throw load_error(path, 0, 0, std::string("cannot write: ") + std::strerror(errno));
    }
    template <class V>
    void array(const V& v) {
        static constexpr char zeros[8] = {};
        const std::uint64_t n = v.size();
        bytes(&n, 8);
        bytes(v.data(), n * sizeof(v[0]));
        bytes(zeros, padding_to_8(n * sizeof(v[0])));
    }
};

template <class T>
using const_span = std::span<const T>;

/// A store's arrays as spans: where they lie in a store file's bytes (or in
/// a store's vectors, to be written).
struct store_arrays {
    std::uint32_t dictionary_crc = 0, index_crc = 0; ///< as the file's header has them
    std::span<const char> text;
    std::span<const std::uint64_t> offsets;
    std::span<const std::uint32_t> table;
    index_parts<const_span> index;

    store_view view() const noexcept {
        return {dictionary_view(text, offsets, table), index.perm_views(), index.predicates};
    }
};

/// Where each array lies in a store file's `bytes`, which start at a
/// multiple of 8 (a mapping, or an aligned copy): the header must be this
/// version's, each array within the bytes, nothing after the last.
/// Nothing is copied; the values are checked by check_arrays.
inline store_arrays locate_arrays(std::span<const char> bytes, const std::string& path) {
    std::size_t at = 0;
    auto take = [&](void* into, std::size_t n) {
        if (n > bytes.size() - at) throw load_error(path, 0, 0, "truncated store file (made by another version, or cut short?)");
        std::memcpy(into, bytes.data() + at, n);
        at += n;
    };
    char magic[8] = {};
    take(magic, 8);
    if (std::memcmp(magic, store_magic, 8) != 0) throw load_error(path, 0, 0, "not a tacomesh-rdf store file");
    std::uint32_t version = 0, endian = 0;
    take(&version, 4);
    take(&endian, 4);
    if (version != store_version)
        throw load_error(path, 0, 0, "store file version " + std::to_string(version) + ", this tacomesh-rdf reads " +
                                         std::to_string(store_version) +
                                         ": make it again from the data with tacomesh-rdf load");
    if (endian != 0x01020304) throw load_error(path, 0, 0, "store file from a machine of the other byte order");
    store_arrays a;
    take(&a.dictionary_crc, 4);
    take(&a.index_crc, 4);
    auto array = [&]<class T>(std::span<const T>& out) {
        std::uint64_t n = 0;
        take(&n, 8);
        if (n > (bytes.size() - at) / sizeof(T))
            throw load_error(path, 0, 0, "corrupt store file: an array is longer than the file");
        // The format puts every array at a multiple of 8 and the bytes
        // start at one: the elements are aligned where they lie.
        out = std::span<const T>(reinterpret_cast<const T*>(bytes.data() + at), std::size_t(n));
        at += std::size_t(n) * sizeof(T);
        const std::size_t pad = padding_to_8(at);
        if (pad > bytes.size() - at) throw load_error(path, 0, 0, "truncated store file (made by another version, or cut short?)");
        at += pad;
    };
    array(a.text);
    array(a.offsets);
    array(a.table);
    for (std::size_t i = 0; i < order_count; ++i) {
        array(a.index.offsets[i]);
        array(a.index.second[i]);
        array(a.index.third[i]);
    }
    array(a.index.predicates);
    if (at != bytes.size()) throw load_error(path, 0, 0, "corrupt store file: bytes after the last array");
    return a;
}

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

/// Runs the checks, on all the machine's threads if `parallel`, and throws
/// what the first of them in the given order to fail threw: what running
/// them one after another would have thrown.
inline void run_in_order(const std::vector<std::function<void()>>& checks, bool parallel) {
    if (!parallel) {
        for (const auto& c : checks) c();
        return;
    }
    std::vector<std::exception_ptr> failed(checks.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < checks.size();) try {
                checks[i]();
            } catch (...) {
                failed[i] = std::current_exception();
            }
    };
    {
        const std::size_t threads = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), checks.size());
        std::vector<std::jthread> helpers;
        for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
        work();
    } // joined: their writes to `failed` are visible here
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
}

/// How much of a store file open checks.
/// - bounds: everything a reader relies on not to read out of bounds or
///   loop, in one pass over the arrays, and both checksums: a mapped store.
/// - full: that, and the orders and statistics rebuilt from SPO and
///   compared, and every key found where a probe looks: open_store.
enum class store_check { bounds, full };

/// Throws load_error (naming the file and what is wrong) unless the arrays
/// hold a store the loader could have made, to the level asked for. The
/// checksums come last, so that every check before them names what it
/// finds; `checksums` false skips them (the store fuzzer's way past them,
/// to the readers).
inline void check_arrays(const store_arrays& a, const std::string& path, store_check level, bool checksums = true) {
    auto corrupt = [&](const std::string& what) { return load_error(path, 0, 0, "corrupt store file: " + what); };
    const auto& text = a.text;
    const auto& offsets = a.offsets;
    const auto& table = a.table;
    const auto& ix = a.index;

    // The dictionary: key(id) reads text[offsets[id], offsets[id + 1]).
    if (offsets.empty() || offsets.front() != 0 || offsets.back() != text.size()) throw corrupt("dictionary offsets");
    for (std::size_t i = 1; i < offsets.size(); ++i)
        if (offsets[i] < offsets[i - 1]) throw corrupt("dictionary offsets not ascending");
    if (offsets.size() - 1 >= no_term) throw corrupt("more terms than 32-bit ids can number");
    const term_id terms = term_id(offsets.size() - 1);
    // The indexes' lengths, which every pass below reads within. Positions
    // are 32-bit; an empty store has no arrays at all.
    const std::size_t n = ix.second[0].size();
    if (n >= std::numeric_limits<std::uint32_t>::max()) throw corrupt("more triples than 32-bit positions can number");
    for (std::size_t i = 0; i < order_count; ++i)
        if (ix.second[i].size() != n || ix.third[i].size() != n) throw corrupt(std::string(name(order(i))) + " length");

    // The passes over the arrays, in the order their findings are reported.
    std::vector<std::function<void()>> checks;
    // Every key whole: TSV prints keys as they are, and JSON output and
    // parse_key take them apart by their quotes and brackets. In parts, so
    // that threads share the pass (the first bad key is still the one named).
    const std::size_t key_chunks = level == store_check::bounds ? 16 : 1;
    for (std::size_t part = 0; part < key_chunks; ++part)
        checks.push_back([&, lo = term_id(terms * part / key_chunks), hi = term_id(terms * (part + 1) / key_chunks)] {
            for (term_id t = lo; t < hi; ++t) {
                const std::string_view k(text.data() + offsets[t], std::size_t(offsets[t + 1] - offsets[t]));
                std::size_t at = 0;
                if (const char* why = key_shape_error(k, at))
                    throw corrupt("dictionary key " + std::to_string(t) + " is not an N-Triples term: " + why + " at byte " +
                                  std::to_string(store_header_bytes + 8 + offsets[t] + at) + " of the file, in " +
                                  shown_key(k) + " (a damaged copy? make the store again with tacomesh-rdf load)");
            }
        });
    // The hash table: a probe stops only at its key or an empty slot, so
    // there must be an empty slot; each id once, each where a probe for its
    // key finds it (which also makes the keys distinct).
    checks.push_back([&] {
        if ((table.size() & (table.size() - 1)) != 0) throw corrupt("dictionary hash table size is not a power of two");
        std::size_t used = 0;
        for (const std::uint32_t slot : table) {
            if (slot > terms) throw corrupt("dictionary hash table entry past the last term");
            used += slot != 0;
        }
        if (used != terms)
            throw corrupt("dictionary hash table holds " + std::to_string(used) + " ids for " + std::to_string(terms) + " terms");
        if (used == table.size() && terms != 0) throw corrupt("dictionary hash table has no empty slot");
    });
    if (level == store_check::full) // (run after the pass above: a probe needs the empty slot)
        checks.push_back([&] {
            const dictionary_view dict(text, offsets, table);
            for (term_id t = 0; t < terms; ++t)
                if (dict.find(dict.key(t)) != t) throw corrupt("dictionary hash table does not match its keys");
        });

    // An order: a CSR over its first component whose buckets are sorted by
    // (second, third) without repeats, every id a term's. SPO, the order
    // the others are made from, is checked so at either level.
    auto check_order = [&](order o) {
        const auto& off = ix.offsets[std::size_t(o)];
        const auto& sec = ix.second[std::size_t(o)];
        const auto& thi = ix.third[std::size_t(o)];
        const std::string nm = name(o);
        if (off.size() < 2 || off.front() != 0 || off.back() != n || off.size() > std::size_t(terms) + 1)
            throw corrupt(nm + " offsets");
        for (std::size_t k = 1; k < off.size(); ++k)
            if (off[k] < off[k - 1]) throw corrupt(nm + " offsets not ascending");
        for (std::size_t k = 0; k < n; ++k)
            if (sec[k] >= terms || thi[k] >= terms) throw corrupt(nm + " ids past the last term");
        for (std::size_t x = 0; x + 1 < off.size(); ++x)
            for (std::size_t k = std::size_t(off[x]) + 1; k < off[x + 1]; ++k)
                if (std::pair(sec[k - 1], thi[k - 1]) >= std::pair(sec[k], thi[k])) throw corrupt(nm + " not sorted");
    };
    if (n == 0) {
        checks.push_back([&] {
            for (std::size_t i = 0; i < order_count; ++i)
                if (!ix.offsets[i].empty())
                    throw corrupt(std::string(name(order(i))) + " offsets in a store without triples");
            if (!ix.predicates.empty()) throw corrupt("predicate statistics in a store without triples");
        });
    } else if (level == store_check::full) {
        checks.push_back([&] { check_order(order::spo); });
        // The other orders and the statistics must be exactly what the
        // loader makes of these triples: merge joins and the data-parallel
        // split read several orders as one set, and the plans trust the
        // statistics. (After SPO's pass: they are made from it.)
        checks.push_back([&] {
            std::vector<triple> triples;
            triples.reserve(n);
            enumerate(ix, order::spo)([&](const std::array<term_id, 3>& t) { triples.push_back({t[0], t[1], t[2]}); });
            index_parts<std_vector> made;
            build_indexes(made, triples);
            auto same_array = [](const auto& x, const auto& y) { return std::equal(x.begin(), x.end(), y.begin(), y.end()); };
            // (SPO itself differs only if its offsets run past its last subject.)
            for (std::size_t i = 0; i < order_count; ++i)
                if (!same_array(made.offsets[i], ix.offsets[i]) || !same_array(made.second[i], ix.second[i]) ||
                    !same_array(made.third[i], ix.third[i]))
                    throw corrupt(i == 0 ? std::string("SPO offsets past the last subject")
                                         : std::string(name(order(i))) + " does not hold the triples of SPO");
            auto same = [](const predicate_stat& x, const predicate_stat& y) {
                return x.p == y.p && x.triples == y.triples && x.subjects == y.subjects && x.objects == y.objects;
            };
            if (!std::equal(made.predicates.begin(), made.predicates.end(), ix.predicates.begin(), ix.predicates.end(), same))
                throw corrupt("predicate statistics do not match the triples");
        });
    } else {
        // Each order on its own (the readers bound every range by them),
        // and statistics within the counts they estimate from (plans size
        // their tables by them).
        for (const order o : {order::spo, order::pso, order::pos, order::osp}) checks.push_back([&, o] { check_order(o); });
        checks.push_back([&] {
            for (std::size_t k = 0; k < ix.predicates.size(); ++k) {
                const predicate_stat& st = ix.predicates[k];
                if (st.p >= terms || (k && st.p <= ix.predicates[k - 1].p) || st.triples > n ||
                    st.subjects > st.triples || st.objects > st.triples)
                    throw corrupt("predicate statistics out of range or order");
            }
        });
    }
    // Last, so that every check above names what it finds (and fuzzing,
    // which cannot forge a checksum, still reaches them).
    if (checksums) {
        checks.push_back([&] {
            if (arrays_crc(0, text, offsets, table) != a.dictionary_crc)
                throw corrupt("the dictionary's checksum does not match its bytes: a term was changed after the store "
                              "was written (a damaged copy? make the store again with tacomesh-rdf load)");
        });
        checks.push_back([&] {
            if (index_crc(ix) != a.index_crc)
                throw corrupt("the indexes' checksum does not match their bytes: a triple was changed after the store "
                              "was written (a damaged copy? make the store again with tacomesh-rdf load)");
        });
    }
    // The mapped open's passes are independent of each other (each needs
    // only the sizes checked above) and run on all the machine's threads:
    // at 90 M triples they are the open, and the open is most of a one-shot
    // query. Below 1 MB starting threads costs more than the passes.
    // The full checks run in order: the probe needs the hash table's pass,
    // the rebuild SPO's.
    constexpr std::size_t parallel_from_bytes = std::size_t(1) << 20;
    run_in_order(checks, level == store_check::bounds && text.size() + n * 24 >= parallel_from_bytes);
}

/// A private copy of a checked store file's arrays.
inline store copy_store(const store_arrays& a) {
    dictionary_builder dict(std::string(a.text.begin(), a.text.end()),
                            std::vector<std::uint64_t>(a.offsets.begin(), a.offsets.end()),
                            std::vector<std::uint32_t>(a.table.begin(), a.table.end()));
    index_parts<std_vector> ix;
    for (std::size_t i = 0; i < order_count; ++i) {
        ix.offsets[i].assign(a.index.offsets[i].begin(), a.index.offsets[i].end());
        ix.second[i].assign(a.index.second[i].begin(), a.index.second[i].end());
        ix.third[i].assign(a.index.third[i].begin(), a.index.third[i].end());
    }
    ix.predicates.assign(a.index.predicates.begin(), a.index.predicates.end());
    return store(std::move(dict), std::move(ix));
}

/// A file mapped read-only (an empty file is no mapping and no bytes).
/// Stores are replaced by renaming a new file over the old (save_store),
/// so a mapping keeps reading the file it was made of.
class file_mapping {
public:
    explicit file_mapping(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw load_error(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            const int e = errno;
            ::close(fd);
            throw load_error(path, 0, 0, S_ISREG(st.st_mode) || st.st_mode == 0 ? std::string("cannot read: ") + std::strerror(e)
                                                                              : "not a regular file (a directory?)");
        }
        status_ = st;
        size_ = std::size_t(st.st_size);
        if (size_ != 0) {
            void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) {
                const int e = errno;
                ::close(fd);
                throw load_error(path, 0, 0, std::string("cannot map: ") + std::strerror(e));
            }
            data_ = static_cast<const char*>(p);
        }
        ::close(fd); // the mapping keeps the file
    }
    file_mapping(file_mapping&& o) noexcept
        : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), status_(o.status_) {}
    file_mapping& operator=(file_mapping&& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        std::swap(status_, o.status_);
        return *this;
    }
    ~file_mapping() {
        if (data_) ::munmap(const_cast<char*>(data_), size_);
    }
    std::span<const char> bytes() const noexcept { return {data_, size_}; }
    /// The file's status when mapped (fstat of the descriptor mapped, not of
    /// the path, which a rename may have pointed elsewhere since).
    const struct stat& status() const noexcept { return status_; }

private:
    const char* data_ = nullptr;
    std::size_t size_ = 0;
    struct stat status_ {};
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
        const auto& ix = s.index();
        const std::uint32_t dictionary_crc = detail::dictionary_crc(d.text(), d.offsets(), d.table());
        const std::uint32_t index_crc = detail::index_crc(ix);
        w.bytes(&dictionary_crc, 4);
        w.bytes(&index_crc, 4);
        w.array(d.text());
        w.array(d.offsets());
        w.array(d.table());
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

/// Open a store file into private memory. Refused with a load_error naming
/// the file unless every invariant holds that lookups and queries rely on:
/// - magic, version and byte order; every array within the file, and
///   nothing after the last; last of all, the dictionary's and the
///   indexes' CRC-32;
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
    const detail::file_mapping m(path);
    const detail::store_arrays a = detail::locate_arrays(m.bytes(), path);
    detail::check_arrays(a, path, detail::store_check::full);
    return detail::copy_store(a);
}

namespace detail {
/// Bytes copied to the start of fresh storage (operator new's alignment):
/// a store file's arrays are read in place at multiples of 8.
struct aligned_bytes {
    explicit aligned_bytes(std::string_view b) : p(static_cast<char*>(::operator new(b.size() + 1))), n(b.size()) {
        std::memcpy(p.get(), b.data(), b.size());
    }
    struct release {
        void operator()(char* q) const noexcept { ::operator delete(q); }
    };
    std::unique_ptr<char, release> p;
    std::size_t n;
    std::span<const char> bytes() const noexcept { return {p.get(), n}; }
};
} // namespace detail

/// A store file's bytes already in memory (`name` for messages): the checks
/// of open_store.
inline store read_store(std::string_view bytes, const std::string& name) {
    const detail::aligned_bytes copy(bytes);
    const detail::store_arrays a = detail::locate_arrays(copy.bytes(), name);
    detail::check_arrays(a, name, detail::store_check::full);
    return detail::copy_store(a);
}

/// A store file read where it lies: mapped read-only, its arrays handed to
/// queries as spans into the mapping, so a query reads only the pages it
/// touches and a store larger than memory answers (the kernel pages it in
/// and out). The open checks everything a reader relies on not to read out
/// of bounds or loop, and both checksums, in one pass over the file
/// (store_check::bounds); it does not rebuild the orders from SPO, which
/// would cost a sort of every triple and memory beside the store.
/// With a `record` (checked_stores.hpp), a file the record holds as checked
/// and unchanged since is not checked again (unless `check_anyway`), and a
/// file checked now is added to it.
class mapped_store {
public:
    explicit mapped_store(const std::string& path, const checked_stores* record = nullptr, bool check_anyway = false)
        : map_(path), arrays_(detail::locate_arrays(map_.bytes(), path)) {
        const store_identity id = identity_of(map_.status(), arrays_.dictionary_crc, arrays_.index_crc);
        if (record && !check_anyway && record->holds(id)) return;
        detail::check_arrays(arrays_, path, detail::store_check::bounds);
        checked_ = true;
        if (record) record->add(id);
    }

    /// Whether this open checked the file (else the record held it as checked).
    bool checked() const noexcept { return checked_; }

    store_view view() const noexcept { return arrays_.view(); }
    std::uint64_t triple_count() const noexcept { return arrays_.index.second[0].size(); }
    /// The arrays' bytes, as store::bytes() counts them (the file less its header and lengths).
    std::size_t bytes() const noexcept { return view().dict.bytes() + index_bytes(); }
    std::size_t index_bytes() const noexcept { return arrays_.index.bytes(); }
    /// A private copy (for what changes a store or shares it between cores).
    store copy() const { return detail::copy_store(arrays_); }

private:
    detail::file_mapping map_;
    detail::store_arrays arrays_;
    bool checked_ = false;
};

} // namespace rdf
