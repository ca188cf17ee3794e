#pragma once
// The triple store: a dictionary and four sorted permutation indexes with
// per-predicate statistics.
//
// Each permutation (SPO, PSO, POS, OSP) is a CSR over its first component:
// offsets[a] .. offsets[a + 1] delimit a's triples, whose second and third
// components sit in two columns sorted by (second, third). So a lookup on
// a bound first component costs one array read, a bound second one a binary
// search over a column of 4-byte ids, and every variable comes out sorted
// after the bound prefix (what merge joins need). Four orders cover every
// bound prefix: s (SPO), p (PSO or POS, sorted by s or o), o (OSP), sp
// (SPO), po (POS), os (OSP). SOP and OPS would only add sort orders for
// patterns with an unbound predicate, which LUBM and most workloads do not
// have: 16 bytes per triple saved.
//
// The store owns private vectors; store_view reads spans, so evaluation
// runs unchanged over a MESH shared object's parts (shared_store.hpp).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <thread>
#include <memory>
#include <type_traits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <rdf/dictionary.hpp>
#include <rdf/ntriples.hpp>
#include <rdf/rdf_xml.hpp>
#include <rdf/triple_runs.hpp>

namespace rdf {

enum class order : std::uint8_t { spo, pso, pos, osp };
inline constexpr std::size_t order_count = 4;
inline const char* name(order o) {
    constexpr const char* names[] = {"SPO", "PSO", "POS", "OSP"};
    return names[std::size_t(o)];
}
/// Positions (0 = s, 1 = p, 2 = o) of an order's first, second and third component.
inline constexpr std::array<std::array<int, 3>, order_count> order_positions{
    {{0, 1, 2}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}}};

/// Per predicate: triples, distinct subjects, distinct objects (for join estimates).
struct predicate_stat {
    term_id p;
    std::uint32_t triples, subjects, objects;
};

/// Half-open range of positions in a permutation's columns.
struct index_range {
    std::uint32_t begin = 0, end = 0;
    std::uint32_t size() const noexcept { return end - begin; }
    bool empty() const noexcept { return begin == end; }
};

namespace detail {

/// The run of `x` in sorted col[begin, end). A bind join asks this once per
/// row, mostly of a subject's dozen triples: there a forward scan, whose
/// branch the predictor learns, replaces a binary search's unpredictable
/// ones (LUBM Q8's lookups: 1.30 M -> 1.16 M instructions a core, callgrind);
/// long ranges (a predicate's or a class's members) are searched.
inline index_range equal_run(std::span<const term_id> col, std::uint32_t begin, std::uint32_t end, term_id x) noexcept {
    constexpr std::uint32_t scan_below = 16;
    std::uint32_t lo = begin;
    if (end - begin <= scan_below) {
        while (lo < end && col[lo] < x) ++lo;
        std::uint32_t hi = lo;
        while (hi < end && col[hi] == x) ++hi;
        return {lo, hi};
    }
    const auto first = col.begin() + begin, last = col.begin() + end;
    const auto l = std::lower_bound(first, last, x);
    const auto h = std::upper_bound(l, last, x);
    return {std::uint32_t(l - col.begin()), std::uint32_t(h - col.begin())};
}

} // namespace detail

struct permutation_view {
    std::span<const std::uint32_t> offsets;
    std::span<const term_id> second, third;

    index_range of(term_id a) const noexcept {
        if (std::size_t(a) + 1 >= offsets.size()) return {};
        return {offsets[a], offsets[a + 1]};
    }
    /// The part of `r` whose second component is b.
    index_range of(index_range r, term_id b) const noexcept { return detail::equal_run(second, r.begin, r.end, b); }
    /// The part of `r` (one (first, second) pair's) whose third component is c: at most one.
    index_range third_of(index_range r, term_id c) const noexcept { return detail::equal_run(third, r.begin, r.end, c); }
    bool contains(term_id a, term_id b, term_id c) const noexcept { return !third_of(of(of(a), b), c).empty(); }
};

struct store_view {
    dictionary_view dict;
    std::array<permutation_view, order_count> perms;
    std::span<const predicate_stat> predicates;

    const permutation_view& operator[](order o) const noexcept { return perms[std::size_t(o)]; }
    std::uint64_t triple_count() const noexcept { return perms[0].second.size(); }
    const predicate_stat* stat(term_id p) const noexcept {
        auto it = std::lower_bound(predicates.begin(), predicates.end(), p,
                                   [](const predicate_stat& s, term_id x) { return s.p < x; });
        return it != predicates.end() && it->p == p ? &*it : nullptr;
    }
};

/// The index parts, in any vector type with data() and size() (std::vector
/// here, mesh::vector in shared_store.hpp).
/// A read-only span over a std::vector or a mesh::vector (through const
/// begin(), which records no change in a shared one).
template <class V>
auto span_of(const V& v) {
    using T = std::remove_cvref_t<decltype(*v.begin())>;
    return std::span<const T>(v.size() ? std::to_address(v.begin()) : nullptr, v.size());
}

template <template <class> class Vec>
struct index_parts {
    std::array<Vec<std::uint32_t>, order_count> offsets;
    std::array<Vec<term_id>, order_count> second, third;
    Vec<predicate_stat> predicates;

    std::array<permutation_view, order_count> perm_views() const {
        std::array<permutation_view, order_count> out;
        for (std::size_t i = 0; i < order_count; ++i)
            out[i] = {span_of(offsets[i]), span_of(second[i]), span_of(third[i])};
        return out;
    }
    std::size_t bytes() const {
        std::size_t b = predicates.size() * sizeof(predicate_stat);
        for (std::size_t i = 0; i < order_count; ++i)
            b += (offsets[i].size() + second[i].size() + third[i].size()) * sizeof(std::uint32_t);
        return b;
    }
};

template <class T>
using std_vector = std::vector<T>;

namespace detail {
/// Build permutation `o` from triples listed in an order whose (second,
/// third) sort is what o needs inside each first-component bucket: a
/// stable counting scatter by the first component keeps it (store.hpp's
/// build() chains the orders so one sort feeds all four).
template <class Parts, class Source>
void scatter(Parts& parts, order o, term_id max_first, Source&& source) {
    const auto& pos = order_positions[std::size_t(o)];
    const int a = pos[0], b = pos[1], c = pos[2]; // not a structured binding: the lambdas below capture them
    auto& off = parts.offsets[std::size_t(o)];
    auto& sec = parts.second[std::size_t(o)];
    auto& thi = parts.third[std::size_t(o)];
    std::vector<std::uint32_t> count(std::size_t(max_first) + 2, 0);
    source([&](const std::array<term_id, 3>& t) { ++count[std::size_t(t[a]) + 1]; });
    std::partial_sum(count.begin(), count.end(), count.begin());
    const std::size_t n = count.back();
    off.assign(count.begin(), count.end());
    sec.resize(n);
    thi.resize(n);
    source([&](const std::array<term_id, 3>& t) {
        const std::uint32_t at = count[t[a]]++;
        sec[at] = t[b];
        thi[at] = t[c];
    });
}

/// Enumerate permutation o's triples in its order, as (s, p, o).
template <class Parts>
auto enumerate(const Parts& parts, order o) {
    return [&parts, o](auto&& visit) {
        const auto& pos = order_positions[std::size_t(o)];
        const int a = pos[0], b = pos[1], c = pos[2];
        const auto& off = parts.offsets[std::size_t(o)];
        const auto& sec = parts.second[std::size_t(o)];
        const auto& thi = parts.third[std::size_t(o)];
        std::array<term_id, 3> t;
        for (std::size_t x = 0; x + 1 < off.size(); ++x)
            for (std::uint32_t i = off[x]; i < off[x + 1]; ++i) {
                t[a] = term_id(x);
                t[b] = sec[i];
                t[c] = thi[i];
                visit(t);
            }
    };
}

/// The per-predicate statistics, from the built PSO and POS orders.
template <class Parts>
void build_statistics(Parts& parts) {
    std::vector<predicate_stat> stats;
    const auto& pso_off = parts.offsets[std::size_t(order::pso)];
    const auto& pso_s = parts.second[std::size_t(order::pso)];
    const auto& pos_off = parts.offsets[std::size_t(order::pos)];
    const auto& pos_o = parts.second[std::size_t(order::pos)];
    auto distinct = [](const auto& col, std::uint32_t b, std::uint32_t e) {
        std::uint32_t d = 0;
        for (std::uint32_t i = b; i < e; ++i) d += i == b || col[i] != col[i - 1];
        return d;
    };
    for (std::size_t p = 0; p + 1 < pso_off.size(); ++p)
        if (pso_off[p + 1] > pso_off[p])
            stats.push_back({term_id(p), pso_off[p + 1] - pso_off[p], distinct(pso_s, pso_off[p], pso_off[p + 1]),
                             distinct(pos_o, pos_off[p], pos_off[p + 1])});
    parts.predicates.assign(stats.begin(), stats.end());
}

} // namespace detail

/// Build all four permutations and the statistics from triples in SPO order
/// without duplicates: `spo_sorted(visit)` calls visit(std::array<term_id, 3>)
/// for each, and is called twice; the max_ arguments bound their ids.
template <class Parts, class Source>
void build_indexes(Parts& parts, Source&& spo_sorted, term_id max_s, term_id max_p, term_id max_o) {
    // SPO order feeds PSO (by p: s, o ascending) and OSP (by o: s, p).
    detail::scatter(parts, order::pso, max_p, spo_sorted);
    detail::scatter(parts, order::osp, max_o, spo_sorted);
    // OSP order feeds POS (by p: o, s); POS order feeds SPO (by s: p, o).
    detail::scatter(parts, order::pos, max_p, detail::enumerate(parts, order::osp));
    detail::scatter(parts, order::spo, max_s, detail::enumerate(parts, order::pos));
    detail::build_statistics(parts);
}

/// The same from a list of triples sorted in SPO order without duplicates.
template <class Parts>
void build_indexes(Parts& parts, const std::vector<triple>& spo_sorted) {
    if (spo_sorted.size() >= std::numeric_limits<std::uint32_t>::max())
        throw std::length_error("rdf: more than 2^32 - 1 triples in one store; positions are 32-bit");
    term_id max_s = 0, max_p = 0, max_o = 0;
    for (const triple& t : spo_sorted) {
        max_s = std::max(max_s, t.s);
        max_p = std::max(max_p, t.p);
        max_o = std::max(max_o, t.o);
    }
    build_indexes(
        parts,
        [&](auto&& visit) {
            for (const triple& t : spo_sorted) visit(std::array<term_id, 3>{t.s, t.p, t.o});
        },
        max_s, max_p, max_o);
}

/// How far a load is, for a progress display.
struct load_progress {
    std::uint64_t file_bytes_read = 0, file_bytes = 0; ///< of the file on disk (compressed bytes for gzip)
    std::uint64_t statements = 0;                      ///< parsed so far
};

struct load_options {
    static load_options chunked(std::size_t bytes) {
        load_options o;
        o.chunk_bytes = bytes;
        return o;
    }
    /// Called after each block.
    std::function<void(const load_progress&)> progress;
    /// N-Triples text in memory at once: a block of whole lines (the file is
    /// read as it is parsed), cut into chunks of chunk_bytes for the threads.
    /// A block's new terms join the store's dictionary before the next is
    /// read.
    std::size_t block_bytes = std::size_t(16) << 20;
    std::size_t chunk_bytes = std::size_t(4) << 20;
    /// The parsed triples' buffer (12 bytes a triple): past it they go to a
    /// temporary file in sorted runs, merged as they are indexed
    /// (triple_runs.hpp). With the blocks, a load's memory is the store plus
    /// this and about two blocks, whatever the file's size.
    std::size_t memory_bytes = std::size_t(64) << 20;
    /// Threads parsing chunks at once (0: one per CPU). Loading comes before
    /// any core runs, and its chunks are independent: a fork-join of plain
    /// threads, each with its own dictionary, folded after each block.
    unsigned threads = 0;
};

struct load_report {
    std::uint64_t statements = 0; ///< triples in the file
    std::uint64_t added = 0;      ///< new to the store (duplicates and known triples removed)
    std::uint64_t bytes = 0;      ///< text bytes (after decompression)
    /// Wall seconds of the N-Triples load's phases: reading (and
    /// decompressing) the blocks, parsing them on the threads, folding their
    /// dictionaries into the store's, sorting and indexing.
    double read_seconds = 0, parse_seconds = 0, fold_seconds = 0, index_seconds = 0;
};

/// A triple store in private memory: load files, then read through view().
class store {
public:
    store() = default;
    store(dictionary_builder dict, index_parts<std_vector> index) : dict_(std::move(dict)), index_(std::move(index)) {}

    /// Parse an RDF file (plain or gzip) and add its triples: N-Triples by
    /// the line scanner and serd (ntriples.hpp), read block by block as it
    /// is parsed, RDF/XML (.owl, .rdf, .xml)
    /// and Turtle (.ttl) by raptor, read whole (ontologies and small
    /// files). Throws load_error on malformed input, leaving the store as it
    /// was.
    load_report load_file(const std::string& path, const load_options& o = {}) {
        if (const std::string syntax = raptor_syntax_for(path); !syntax.empty() && syntax != "ntriples") {
            std::string text = read_text_file(path);
            raptor_reader reader(path, syntax, blank_prefix());
            reader.parse(text);
            if (o.progress) o.progress({text.size(), text.size(), reader.triples().size()});
            load_report r{reader.triples().size(), 0, text.size()};
            r.added = add(reader.dictionary(), std::move(reader.triples()));
            ++loads_;
            return r;
        }
        line_block_reader in(path, o.block_bytes);
        return load_blocks(path, o, [&](std::string& block, std::uint64_t& first_line, load_progress& p) {
            const bool more = in.next(block, first_line);
            p.file_bytes_read = in.file_bytes_read();
            p.file_bytes = in.file_bytes();
            return more;
        });
    }

    /// As load_file, from N-Triples text in memory, one block (`name` is used
    /// in messages). The text is changed while it is parsed, and restored.
    load_report load_text(std::string& text, const std::string& name, const load_options& o = {}) {
        bool given = false;
        return load_blocks(name, o, [&](std::string& block, std::uint64_t& first_line, load_progress& p) {
            if (given) return false;
            given = true;
            block.swap(text); // handed back below, as the caller's
            first_line = 1;
            p.file_bytes_read = p.file_bytes = block.size();
            return true;
        }, &text);
    }

    /// Add triples whose ids are `local`'s; returns how many were new.
    std::uint64_t add(const dictionary_builder& local, std::vector<triple> triples) {
        std::vector<term_id> to_global(local.size());
        const bool fresh = dict_.size() == 0;
        for (term_id i = 0; i < local.size(); ++i) to_global[i] = fresh ? i : dict_.intern(local.key(i));
        if (fresh) dict_ = local; // ids kept
        else
            for (triple& t : triples) t = {to_global[t.s], to_global[t.p], to_global[t.o]};
        return add_encoded(std::move(triples));
    }

    /// Add the triples of `runs`, in this store's ids; returns how many were new.
    std::uint64_t add_runs(triple_runs& runs) {
        const std::uint64_t before = triple_count();
        if (before) // the store's own triples join the stream (a second file)
            detail::enumerate(index_, order::spo)([&](const std::array<term_id, 3>& t) { runs.push({t[0], t[1], t[2]}); });
        if (runs.pushed() >= std::numeric_limits<std::uint32_t>::max())
            throw std::length_error("rdf: more than 2^32 - 1 triples in one store; positions are 32-bit");
        runs.finish();
        index_parts<std_vector> fresh;
        build_indexes(
            fresh, [&](auto&& visit) { runs.merge([&](const triple& t) { visit(std::array<term_id, 3>{t.s, t.p, t.o}); }); },
            runs.max_s(), runs.max_p(), runs.max_o());
        const std::uint64_t added = fresh.second[0].size() - before;
        if (added) index_ = std::move(fresh);
        return added;
    }

    /// Add triples already in this store's ids; returns how many were new.
    std::uint64_t add_encoded(std::vector<triple> triples) {
        const std::uint64_t before = triple_count();
        if (before) {
            triples.reserve(triples.size() + before);
            detail::enumerate(index_, order::spo)([&](const std::array<term_id, 3>& t) { triples.push_back({t[0], t[1], t[2]}); });
        }
        std::sort(triples.begin(), triples.end());
        triples.erase(std::unique(triples.begin(), triples.end()), triples.end());
        if (triples.size() == before) return 0;
        index_parts<std_vector> fresh;
        build_indexes(fresh, triples);
        index_ = std::move(fresh);
        return triples.size() - before;
    }

    dictionary_builder& dictionary() noexcept { return dict_; }
    const dictionary_builder& dictionary() const noexcept { return dict_; }
    const index_parts<std_vector>& index() const noexcept { return index_; }
    std::uint64_t triple_count() const noexcept { return index_.second[0].size(); }
    store_view view() const { return {dict_.view(), index_.perm_views(), span_of(index_.predicates)}; }
    /// Bytes of the dictionary and the indexes.
    std::size_t bytes() const { return dict_.view().bytes() + index_.bytes(); }
    std::size_t index_bytes() const { return index_.bytes(); }

private:
    /// The N-Triples load: blocks from `next` (block, first line, progress),
    /// each cut into chunks that up to `o.threads` threads parse. A parser
    /// looks each term up in the store's dictionary, which no one writes
    /// while they parse, and keeps only the terms it lacks, in a dictionary
    /// of its own; these are folded into the store's in the file's order, so
    /// ids come in order of first appearance whatever the block, chunk and
    /// thread counts, and no term is held twice but a block's new ones. The
    /// triples, in store ids, wait in runs (triple_runs.hpp) until the end,
    /// when they are indexed. Staged: on an error the dictionary is cut back
    /// to its size before the load and the indexes are untouched.
    /// `own_text`: the caller's text that `next` swapped in, to hand back.
    template <class NextBlock>
    load_report load_blocks(const std::string& name, const load_options& o, NextBlock&& next,
                            std::string* own_text = nullptr) {
        const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
        const std::size_t threads = o.threads ? o.threads : hw;
        const std::string prefix = blank_prefix();
        std::vector<ntriples_parser> parsers; // one a chunk, kept from block to block
        const term_id terms_before = dict_.size();
        load_report r;
        load_progress progress;
        triple_runs triples(o.memory_bytes);
        std::vector<term_id> to_store;
        std::string block;
        std::uint64_t first_line = 1;
        using clock = std::chrono::steady_clock;
        auto lap = [t = clock::now()](double& into) mutable {
            const auto now = clock::now();
            into += std::chrono::duration<double>(now - t).count();
            t = now;
        };
        try {
            while (next(block, first_line, progress)) {
                lap(r.read_seconds);
                r.bytes += block.size();
                const auto chunks = split_lines(block, std::max<std::size_t>(o.chunk_bytes, 1), first_line);
                while (parsers.size() < chunks.size()) parsers.emplace_back(name, prefix, &dict_);
                const std::size_t n = std::min(threads, chunks.size());
                std::vector<std::optional<load_error>> errors(chunks.size());
                // Thread t takes chunks t, t + n, ...: equal shares without a queue.
                auto work = [&](std::size_t t) {
                    for (std::size_t c = t; c < chunks.size(); c += n) try {
                            parsers[c].parse(block, chunks[c]);
                        } catch (const load_error& e) {
                            errors[c] = e;
                            return;
                        }
                };
                {
                    std::vector<std::jthread> helpers;
                    for (std::size_t t = 1; t < n; ++t) helpers.emplace_back(work, t);
                    work(0);
                }
                // The error to report is the first in the file: chunks are in its order.
                for (const auto& e : errors)
                    if (e) throw *e;
                lap(r.parse_seconds);
                // The parsers looked terms up in dict_ as it was before this
                // block: ids below `known` are store ids, those above are fresh
                // (fresh_id is its own inverse).
                const term_id known = dict_.size();
                for (std::size_t c = 0; c < chunks.size(); ++c) {
                    const dictionary_builder& local = parsers[c].dictionary();
                    to_store.resize(local.size());
                    for (term_id i = 0; i < local.size(); ++i) to_store[i] = dict_.intern(local.key(i));
                    auto id = [&](term_id x) { return x < known ? x : to_store[ntriples_parser::fresh_id(x)]; };
                    for (const triple& x : parsers[c].triples()) triples.push({id(x.s), id(x.p), id(x.o)});
                    parsers[c].clear();
                }
                if (own_text) block.swap(*own_text);
                progress.statements = triples.pushed();
                if (o.progress) o.progress(progress);
                lap(r.fold_seconds);
            }
            lap(r.read_seconds);
            r.statements = triples.pushed();
            r.added = add_runs(triples);
            lap(r.index_seconds);
        } catch (...) {
            if (own_text && own_text->empty() && !block.empty()) block.swap(*own_text);
            dict_.truncate(terms_before);
            throw;
        }
        ++loads_;
        return r;
    }

    // The prefix for the blank node labels of the next file. An RDF merge
    // keeps each document's blank nodes apart, so the next file's labels
    // must meet none in the store: they get a prefix that no label in the
    // store starts with (a fixed "f1_" would take a first file's own _:f1_x
    // for a second file's _:x). Prefixing with it is injective, and keeps
    // the new labels off the old ones whatever labels the files use; a
    // store with no blank nodes yet (the usual one file) keeps its labels.
    std::string blank_prefix() const {
        const dictionary_builder& d = dict_;
        auto taken = [&](std::string_view prefix) {
            for (term_id i = 0; i < d.size(); ++i)
                if (const std::string_view k = d.key(i); k.starts_with("_:") && (prefix.empty() || k.substr(2).starts_with(prefix)))
                    return true;
            return false;
        };
        if (!taken({})) return {};
        // Longer with each try, so it ends past the longest label.
        std::string prefix = "f" + std::to_string(loads_) + "_";
        while (taken(prefix)) prefix += '_';
        return prefix;
    }

    dictionary_builder dict_;
    index_parts<std_vector> index_;
    unsigned loads_ = 0;
};

} // namespace rdf
