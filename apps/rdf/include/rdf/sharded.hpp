#pragma once
// The store sharded over the cores (MPI ranks, or any TACO platform's
// cores), for data that one machine's memory does not hold: each core keeps
// its METIS regions' part of the triples (the RDF-on-the-SCC paper's
// buckets, section III.D) in private memory, and a query's rows travel to
// the core that holds what their next pattern needs. parallel.hpp's models
// share one whole store; here no core holds it.
//
// Placement. The regions (partition.hpp) are dealt to the cores, which makes
// every term an owner. A triple is kept twice, by two owners:
// - its subject's owner keeps it in the S-led orders (SPO, PSO);
// - its object's owner keeps it in the O-led orders (OSP, POS) if the object
//   is an entity; a literal, or a class (an rdf:type object), would gather
//   every member of a class on one core, so those triples stay with the
//   subject's owner there too.
// So the index across all cores is the size of one store's, and a pattern
// whose subject is known is answered whole by that subject's owner; one whose
// object is known (and subject not), by the object's owner, or, for a
// literal or a class, by every core over its own subjects; one with neither,
// by every core, each over its own subjects. Every match is found on exactly
// one core. Every core keeps each term's owner (2 bytes a term), to send
// rows on.
//
// The dictionary is dealt out too: each key is kept by the core its hash
// names (detail::dictionary_home), so the master finds a constant's core
// from the key, and a result term's core from the 2 bytes a term it keeps.
//
// A query. Core 0 (the master) has its constants looked up by their cores,
// asks each core for its count of each pattern's matches and plans with the
// sums (make_plan's `counted`). Each core then runs the plan:
// step 0 over its own part, and before each later step it sends each row to
// the owner that can extend it (or to every core, as above), one batch to
// each core per step, empty or not, so a core knows a step's rows are all
// in when it has a batch from every core: the semi-join is a shuffle of the
// rows, never a lookup across the network per row. The last step's rows go
// to the master, which projects them and applies DISTINCT and LIMIT.
// Every step is a lookup per row in the local part (a bind join): rows that
// arrive from several cores are not sorted for a merge, and a hash table
// over the pattern's matches would hold matches no row of this core needs.
#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <malloc.h>

#include <taco/taco.hpp>
#include <tacomesh/posix/resident_memory.hpp>
#include <rdf/execute.hpp>
#include <rdf/partition.hpp>
#include <rdf/plan.hpp>
#include <rdf/query_engine.hpp>
#include <rdf/store.hpp>

namespace rdf {

/// One core's part of a sharded store, after it was built.
struct shard_stats {
    std::uint64_t subject_triples = 0;  ///< kept in SPO and PSO (their subject is this core's)
    std::uint64_t object_triples = 0;   ///< kept in OSP and POS
    std::uint64_t terms = 0;            ///< keys kept (those whose hash names this core)
    std::uint64_t index_bytes = 0;      ///< the four orders' part here
    std::uint64_t dictionary_bytes = 0; ///< its part of the dictionary (core 0: and each term's core)
    std::uint64_t resident_bytes = 0;   ///< this process's resident memory now (VmRSS): per MPI rank
    std::uint64_t peak_resident_bytes = 0; ///< ... and its peak (VmHWM)
};

namespace detail {

/// A term's owner and whether it is an entity, in one word per term:
/// owners below 2^15 (TACO runs at most 1024 cores).
inline constexpr std::uint16_t not_an_entity = 0x8000;
inline std::uint32_t owner_of(std::span<const std::uint16_t> route, term_id t) noexcept { return route[t] & 0x7fffu; }
inline bool is_entity(std::span<const std::uint16_t> route, term_id t) noexcept { return !(route[t] & not_an_entity); }

/// Where a triple's O-led copy lives (the file comment's placement).
inline std::uint32_t object_shard_owner(std::span<const std::uint16_t> route, const triple& t) noexcept {
    return is_entity(route, t.o) ? owner_of(route, t.o) : owner_of(route, t.s);
}

/// The matches of a pattern whose positions `bits` have the values c, in
/// one core's part: the order whose shard is complete for what is known
/// (S-led if the subject is, O-led if only the object is), its prefix, and
/// the rest of what is known checked per match (subject and object known,
/// predicate not: SPO's subject range).
template <class Visit>
void for_each_shard_match(const store_view& v, const std::array<term_id, 3>& c, unsigned bits, Visit&& visit) {
    struct read {
        order o;
        unsigned prefix; ///< the positions the order's prefix fixes
    };
    // Bits: 1 subject, 2 predicate, 4 object.
    static constexpr std::array<read, 8> by_bits{{{order::spo, 0},
                                                  {order::spo, 1},
                                                  {order::pso, 2},
                                                  {order::spo, 3},
                                                  {order::osp, 4},
                                                  {order::spo, 1},
                                                  {order::pos, 6},
                                                  {order::spo, 7}}};
    const read r = by_bits[bits & 7u];
    const unsigned unchecked = bits & ~r.prefix;
    for_each_match(v, r.o, c, r.prefix, [&](const std::array<term_id, 3>& t) {
        for (int i = 0; i < 3; ++i)
            if ((unchecked >> i & 1u) && t[std::size_t(i)] != c[std::size_t(i)]) return;
        visit(t);
    });
}

/// The core that keeps a term's key: by its hash, so that the master finds
/// a query constant's home from the key alone. The hash's high half: the
/// home's own table probes by its low bits, which would all agree there.
inline std::uint32_t dictionary_home(std::string_view key, std::uint32_t cores) noexcept {
    return std::uint32_t((hash_key(key) >> 32) % cores);
}

/// Keys back to back, key i ending at ends[i].
struct key_list {
    std::vector<std::uint64_t> ends;
    std::string text;
    void add(std::string_view k) {
        text.append(k);
        ends.push_back(text.size());
    }
    std::string_view operator[](std::size_t i) const noexcept {
        const std::uint64_t at = i ? ends[i - 1] : 0;
        return {text.data() + at, std::size_t(ends[i] - at)};
    }
    std::size_t size() const noexcept { return ends.size(); }
};

/// The variables of each step's output, as execute() lays them out.
inline std::vector<table> step_layouts(std::span<const encoded_pattern> patterns, std::span<const plan_step> steps) {
    std::vector<table> out;
    table t;
    for (const plan_step& st : steps) {
        t = next_table(t, roles(patterns[st.pattern], t));
        out.push_back(t);
    }
    return out;
}

} // namespace detail

class shard_master;

/// One per core: its part of the store, and its side of every query.
class shard_worker {
public:
    shard_worker(std::uint32_t rank, std::uint32_t cores) : rank_(rank), cores_(cores) {}

    // Building (the master sends the parts in order, then calls build).
    /// Terms whose keys hash to this core (detail::dictionary_home), in id
    /// order: their global ids, and their keys back to back (key i ends at ends[i]).
    void take_terms(taco::view<term_id> ids, taco::view<std::uint64_t> ends, taco::view<char> text) {
        std::uint64_t at = 0;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (dict_.intern(std::string_view(text.data() + at, std::size_t(ends[i] - at))) != global_of_.size())
                throw std::logic_error("rdf: a term dealt twice to one core of a sharded store");
            global_of_.push_back(ids[i]);
            at = ends[i];
        }
    }
    void take_routes(taco::view<std::uint16_t> p) { route_.insert(route_.end(), p.begin(), p.end()); }
    void take_predicates(taco::view<predicate_stat> p) { predicates_.assign(p.begin(), p.end()); }
    /// The triples to come, so that their lists are made once, at their size.
    void expect(std::uint64_t by_subject, std::uint64_t by_object) {
        by_subject_.reserve(by_subject);
        by_object_.reserve(by_object);
    }
    /// Triples in SPO order: `by_object` false: this core's subjects', else its O-led copies.
    void take_triples(bool by_object, taco::view<triple> p) {
        auto& to = by_object ? by_object_ : by_subject_;
        to.insert(to.end(), p.begin(), p.end());
    }
    void connect(taco::global_ptr<shard_master> master, std::vector<taco::global_ptr<shard_worker>> workers) {
        master_ = master;
        workers_ = std::move(workers);
    }
    /// The four orders from the triples received, which are then let go.
    shard_stats build();
    shard_stats stats() const {
        shard_stats s = stats_;
        s.resident_bytes = std::uint64_t(std::max(0L, tacomesh::posix::status_kib("VmRSS"))) * 1024;
        s.peak_resident_bytes = tacomesh::posix::peak_resident_bytes();
        return s;
    }

    /// This core's part: its own terms' keys (by local id: global_of maps
    /// them), and its part of the orders, by global ids.
    store_view view() const { return {dict_.view(), index_.perm_views(), span_of(index_.predicates)}; }

    // The dictionary.
    /// The global ids of keys (key i ends at ends[i]) that hash here, or
    /// no_term, to the master.
    void lookup(std::uint64_t query, taco::view<std::uint64_t> ends, taco::view<char> keys);
    /// The keys of global ids of terms of this core's, to the master.
    void spell(std::uint64_t query, taco::view<term_id> ids);
    /// lookup's and spell's answers, which core 0 gives its master without a message.
    std::vector<term_id> ids_of(std::span<const std::uint64_t> ends, std::span<const char> keys) const;
    detail::key_list keys_of(std::span<const term_id> ids) const;

    // A query.
    /// This core's matches of each pattern, to the master (planning).
    void count(std::uint64_t query, std::vector<encoded_pattern> patterns);
    /// The plan: runs step 0 here and sends its rows on.
    void begin(std::uint64_t query, std::vector<encoded_pattern> patterns, std::vector<plan_step> steps, query_limits limits);
    /// A core's batch of rows for step `step` (their layout: step - 1's output).
    void receive(std::uint64_t query, std::uint32_t step, taco::view<term_id> cells, std::uint64_t rows) {
        deliver(query, step, cells, rows);
        advance();
    }

private:
    struct inbox {
        std::vector<term_id> cells;
        std::uint64_t rows = 0;
        std::uint32_t batches = 0;
    };

    void deliver(std::uint64_t query, std::uint32_t step, std::span<const term_id> cells, std::uint64_t rows) {
        if (query != query_) { // a batch of the next query, ahead of the master's begin
            query_ = query;
            reset();
        }
        inbox& in = inbox_[step];
        in.cells.insert(in.cells.end(), cells.begin(), cells.end());
        in.rows += rows;
        ++in.batches;
    }
    void reset() {
        inbox_.clear();
        started_ = false;
        refused_.clear();
    }
    void advance();
    table join(std::uint32_t step, const table& in);
    void send_on(std::uint32_t step, const table& rows);

    std::uint32_t rank_, cores_;
    taco::global_ptr<shard_master> master_;
    std::vector<taco::global_ptr<shard_worker>> workers_;
    dictionary_builder dict_;
    std::vector<term_id> global_of_; ///< local id (dict_) -> global id, ascending
    std::vector<std::uint16_t> route_;
    std::vector<predicate_stat> predicates_;
    std::vector<triple> by_subject_, by_object_;
    index_parts<std_vector> index_;
    shard_stats stats_;

    // The query under way.
    std::uint64_t query_ = ~std::uint64_t(0);
    bool started_ = false;
    std::vector<encoded_pattern> patterns_;
    std::vector<plan_step> steps_;
    std::vector<table> layouts_;
    query_limits limits_;
    std::uint32_t next_ = 0; ///< the next step to run
    std::map<std::uint32_t, inbox> inbox_;
    std::string refused_; ///< result_too_large's text, once a step here passed the budget
};

/// Core 0's side: what the workers send back.
class shard_master {
public:
    explicit shard_master(std::uint32_t cores) : cores_(cores) {}

    void counted(std::uint64_t query, std::uint32_t, taco::view<std::uint64_t> counts) {
        if (query != query_) return;
        if (counts_.empty()) counts_.assign(counts.size(), 0);
        for (std::size_t i = 0; i < counts.size() && i < counts_.size(); ++i) counts_[i] += counts[i];
        ++replies_;
    }
    void collect(std::uint64_t query, std::uint32_t rank, taco::view<term_id> cells, std::uint64_t rows, std::string refused) {
        if (query != query_) return;
        rows_[rank].cells.assign(cells.begin(), cells.end());
        rows_[rank].count = rows;
        if (!refused.empty() && refused_.empty()) refused_ = std::move(refused);
        ++replies_;
    }

    void found(std::uint64_t query, std::uint32_t rank, taco::view<term_id> ids) {
        if (query != query_) return;
        found_[rank].assign(ids.data(), ids.data() + ids.size());
        ++replies_;
    }
    void spelled(std::uint64_t query, std::uint32_t rank, taco::view<std::uint64_t> ends, taco::view<char> text) {
        if (query != query_) return;
        spelled_[rank].ends.assign(ends.data(), ends.data() + ends.size());
        spelled_[rank].text.assign(text.data(), text.size());
        ++replies_;
    }
    /// spelled's, from this core's own worker: taken over, not copied.
    void spelled_here(std::uint64_t query, std::uint32_t rank, detail::key_list&& keys) {
        if (query != query_) return;
        spelled_[rank] = std::move(keys);
        ++replies_;
    }

    void start(std::uint64_t query) {
        query_ = query;
        replies_ = 0;
        counts_.clear();
        rows_.assign(cores_, table{});
        found_.assign(cores_, {});
        spelled_.assign(cores_, {});
        refused_.clear();
    }
    bool all_replied() const noexcept { return replies_ == cores_; }
    const std::vector<std::uint64_t>& counts() const noexcept { return counts_; }
    std::vector<table>& rows() noexcept { return rows_; }
    const std::vector<std::vector<term_id>>& found_ids() const noexcept { return found_; }
    const std::vector<detail::key_list>& spelled_keys() const noexcept { return spelled_; }
    const std::string& refused() const noexcept { return refused_; }
    /// Replies are counted anew: the counts are in, the rows come next.
    void next_round() noexcept { replies_ = 0; }

private:
    std::uint32_t cores_;
    std::uint64_t query_ = 0;
    std::uint32_t replies_ = 0;
    std::vector<std::uint64_t> counts_;
    std::vector<table> rows_;
    std::vector<std::vector<term_id>> found_;
    std::vector<detail::key_list> spelled_;
    std::string refused_;
};

inline shard_stats shard_worker::build() {
    // SPO and PSO from the subjects' triples, OSP and POS from the objects'
    // (detail::scatter: a stable counting sort by the first component keeps
    // the (second, third) order the source has within each bucket).
    const term_id terms = term_id(std::max<std::size_t>(1, route_.size()));
    auto source = [](const std::vector<triple>& ts) {
        return [&ts](auto&& visit) {
            for (const triple& t : ts) visit(std::array<term_id, 3>{t.s, t.p, t.o});
        };
    };
    if (by_subject_.size() >= std::numeric_limits<std::uint32_t>::max() || by_object_.size() >= std::numeric_limits<std::uint32_t>::max())
        throw std::length_error("rdf: more than 2^32 - 1 triples on one core of a sharded store; shard over more cores");
    detail::scatter(index_, order::spo, terms - 1, source(by_subject_));
    detail::scatter(index_, order::pso, terms - 1, source(by_subject_));
    detail::scatter(index_, order::osp, terms - 1, source(by_object_));
    detail::scatter(index_, order::pos, terms - 1, detail::enumerate(index_, order::osp));
    index_.predicates.assign(predicates_.begin(), predicates_.end());
    stats_.subject_triples = by_subject_.size();
    stats_.object_triples = by_object_.size();
    std::vector<triple>().swap(by_subject_);
    std::vector<triple>().swap(by_object_);
    malloc_trim(0); // the lists' pages back to the system: what a rank keeps is its part
    stats_.index_bytes = index_.bytes() + route_.size() * sizeof(std::uint16_t);
    stats_.terms = global_of_.size();
    stats_.dictionary_bytes = dict_.view().bytes() + global_of_.size() * sizeof(term_id);
    return stats();
}

inline std::vector<term_id> shard_worker::ids_of(std::span<const std::uint64_t> ends, std::span<const char> keys) const {
    std::vector<term_id> ids;
    std::uint64_t at = 0;
    for (const std::uint64_t end : ends) {
        const term_id local = dict_.find(std::string_view(keys.data() + at, std::size_t(end - at)));
        ids.push_back(local == no_term ? no_term : global_of_[local]);
        at = end;
    }
    return ids;
}

inline detail::key_list shard_worker::keys_of(std::span<const term_id> ids) const {
    detail::key_list keys;
    keys.ends.reserve(ids.size());
    // Both ascending: each id found by galloping on from the last.
    std::uint32_t at = 0;
    for (const term_id id : ids) {
        at = detail::gallop(global_of_, at, std::uint32_t(global_of_.size()), id);
        if (at == global_of_.size() || global_of_[at] != id) break; // not here: the master sees a short list
        keys.add(dict_.key(term_id(at)));
    }
    return keys;
}

inline void shard_worker::lookup(std::uint64_t query, taco::view<std::uint64_t> ends, taco::view<char> keys) {
    taco::async(master_, &shard_master::found, query, rank_, taco::view<term_id>(ids_of(ends, keys)));
}

inline void shard_worker::spell(std::uint64_t query, taco::view<term_id> ids) {
    const detail::key_list keys = keys_of(ids);
    taco::async(master_, &shard_master::spelled, query, rank_, taco::view<std::uint64_t>(keys.ends), taco::view<char>(keys.text));
}

inline void shard_worker::count(std::uint64_t query, std::vector<encoded_pattern> patterns) {
    const store_view v = view();
    std::vector<std::uint64_t> counts;
    for (const encoded_pattern& p : patterns) {
        std::array<term_id, 3> c;
        const unsigned bits = detail::constant_bits(detail::roles(p, table{}), c);
        std::uint64_t n = 0;
        detail::for_each_shard_match(v, c, bits, [&](const std::array<term_id, 3>&) { ++n; });
        counts.push_back(n);
    }
    taco::async(master_, &shard_master::counted, query, rank_, taco::view<std::uint64_t>(counts));
}

inline void shard_worker::begin(std::uint64_t query, std::vector<encoded_pattern> patterns, std::vector<plan_step> steps,
                                query_limits limits) {
    if (query != query_) {
        query_ = query;
        reset();
    }
    patterns_ = std::move(patterns);
    steps_ = std::move(steps);
    layouts_ = detail::step_layouts(patterns_, steps_);
    limits_ = limits;
    started_ = true;
    // Step 0 over this core's part: one row without columns, extended by
    // the pattern's matches (the placement finds each on exactly one core).
    table unit;
    unit.count = 1;
    next_ = 1;
    send_on(1, join(0, unit));
    advance();
}

inline void shard_worker::advance() {
    while (started_ && next_ < steps_.size()) {
        const auto it = inbox_.find(next_);
        if (it == inbox_.end() || it->second.batches < cores_) return;
        table in = layouts_[next_ - 1];
        in.cells = std::move(it->second.cells);
        in.count = it->second.rows;
        inbox_.erase(it);
        const std::uint32_t step = next_++;
        send_on(step + 1, join(step, in));
    }
}

inline table shard_worker::join(std::uint32_t step, const table& in) {
    const encoded_pattern& p = patterns_[steps_[step].pattern];
    const detail::pattern_roles r = detail::roles(p, in);
    table out = detail::next_table(in, r);
    if (!refused_.empty()) return out; // refused already: the protocol goes on, empty
    std::array<term_id, 3> base;
    const unsigned bits = detail::lookup_bits(r, base);
    const store_view v = view();
    const std::size_t cap = limits_.rows_for_width(out.width());
    for (std::size_t row = 0; row < in.rows(); ++row) {
        const auto values = in.row(row);
        detail::for_each_shard_match(v, detail::lookup_key(r, base, values), bits,
                                     [&](const std::array<term_id, 3>& t) { detail::extend_row(out, values, r, t, in.width()); });
        if (out.count > cap) {
            refused_ = "the query's rows at its pattern " + std::to_string(steps_[step].pattern + 1) +
                       " pass the budget on core " + std::to_string(rank_) + " of the sharded store: more than " +
                       limits_.describe(out.width());
            out.cells.clear();
            out.count = 0;
            break;
        }
    }
    return out;
}

inline void shard_worker::send_on(std::uint32_t step, const table& rows) {
    if (step == steps_.size()) { // the last step's rows: to the master
        taco::async(master_, &shard_master::collect, query_, rank_, taco::view<term_id>(rows.cells), std::uint64_t(rows.count),
                    refused_);
        return;
    }
    // Each row to the core that holds what step `step` looks up.
    const encoded_pattern& p = patterns_[steps_[step].pattern];
    const detail::pattern_roles r = detail::roles(p, rows);
    auto known = [&](int pos, std::span<const term_id> row) -> term_id {
        const detail::position_role& role = r.at[std::size_t(pos)];
        if (role.what == detail::position_role::constant) return role.id;
        if (role.what == detail::position_role::joined) return row[std::size_t(role.column)];
        return no_term;
    };
    std::vector<std::vector<term_id>> to(cores_);
    std::vector<std::uint64_t> counts(cores_, 0);
    const std::span<const std::uint16_t> route = route_;
    for (std::size_t i = 0; i < rows.rows(); ++i) {
        const auto row = rows.row(i);
        const term_id s = known(0, row), o = known(2, row);
        std::uint32_t dest = cores_; // cores_: every core
        if (s != no_term) dest = detail::owner_of(route, s);
        else if (o != no_term && detail::is_entity(route, o)) dest = detail::owner_of(route, o);
        for (std::uint32_t d = dest == cores_ ? 0 : dest; d < (dest == cores_ ? cores_ : dest + 1); ++d) {
            to[d].insert(to[d].end(), row.begin(), row.end());
            ++counts[d];
        }
    }
    for (std::uint32_t d = 0; d < cores_; ++d)
        if (d != rank_) taco::async(workers_[d], &shard_worker::receive, query_, step, taco::view<term_id>(to[d]), counts[d]);
    deliver(query_, step, to[rank_], counts[rank_]);
}

/// Result rows with their own small dictionary: the terms they name, fetched
/// from the cores that keep them (sharded_cluster::spell), for the decoders
/// (results.hpp), which take a table and a dictionary_view.
struct spelled_rows {
    table rows; ///< as given, the ids renumbered: id i is key i here
    std::string text;
    std::vector<std::uint64_t> offsets{0};
    /// For key(id) alone: no hash index is built (its inserts cost spell
    /// ten times its copies), so find() finds nothing.
    dictionary_view dict() const noexcept { return {text, offsets, {}}; }
};

/// The master's side, on core 0: a shard_worker per core, and the queries.
class sharded_cluster {
public:
    /// Deal `whole` (given up: a store, or anything with a store's view(),
    /// such as a mapped store file) out to the cores and let it go, then
    /// have every core build its part: this core never holds the whole store
    /// and its own part's indexes at once.
    template <class Whole>
        requires(!std::is_lvalue_reference_v<Whole>) && requires(const Whole& w) {
            { w.view() } -> std::convertible_to<store_view>;
        }
    explicit sharded_cluster(Whole&& whole) : cores_(taco::core_count()), master_(cores_) {
        if (cores_ >= 0x8000) throw std::invalid_argument("rdf: a sharded store takes at most 32767 cores");
        for (std::uint32_t i = 0; i < cores_; ++i)
            workers_.push_back(taco::new_on<shard_worker>(taco::core_id(i), i, cores_).get());
        const auto master = taco::to_global(&master_);
        for (auto w : workers_) taco::sync(w, &shard_worker::connect, master, workers_);
        {
            const Whole held = std::move(whole);
            distribute(held.view());
        }
        malloc_trim(0); // the whole store's pages back to the system
        for (auto w : workers_) taco::sync(w, &shard_worker::build);
    }
    ~sharded_cluster() {
        for (auto w : workers_) taco::delete_on(w);
    }
    sharded_cluster(const sharded_cluster&) = delete;
    sharded_cluster& operator=(const sharded_cluster&) = delete;

    std::uint32_t cores() const noexcept { return cores_; }
    /// Core 0's part (for planning: the per-predicate statistics are the
    /// whole's; its keys are only those whose hash names core 0).
    const shard_worker& here() const { return *workers_[0].get(); }

    /// Each core's part, and its process's memory.
    std::vector<shard_stats> stats() {
        std::vector<shard_stats> out;
        for (auto w : workers_) out.push_back(taco::sync(w, &shard_worker::stats));
        out[0].dictionary_bytes += dict_home_.size() * sizeof(std::uint16_t); // the master's map of the keys' homes
        return out;
    }

    /// A basic graph pattern query over the shards; the rows as one core
    /// would give them (in another order; the same rows).
    query_answer run(std::string_view text, const query_limits& limits = {}) {
        const store_view v = here().view();
        const encoded_query e = encode(parse_query(text), limits);
        query_answer a;
        a.names = e.projection_names;
        if (e.unsatisfiable || e.patterns.empty()) {
            a.rows = project(table{}, e);
            return a;
        }
        const std::uint64_t id = ++queries_;
        master_.start(id);
        for (auto w : workers_) taco::async(w, &shard_worker::count, id, e.patterns);
        taco::wait_until([&] { return master_.all_replied(); });
        a.used = make_plan(e, v, std::nullopt, cores_, master_.counts());
        master_.next_round();
        for (auto w : workers_) taco::async(w, &shard_worker::begin, id, e.patterns, a.used.steps, e.limits);
        taco::wait_until([&] { return master_.all_replied(); });
        if (!master_.refused().empty()) throw result_too_large("rdf: " + master_.refused());
        table all = detail::step_layouts(e.patterns, a.used.steps).back();
        for (table& t : master_.rows()) {
            all.cells.insert(all.cells.end(), t.cells.begin(), t.cells.end());
            all.count += t.count;
            t = table{};
        }
        a.rows = project(all, e);
        return a;
    }

    /// The query's constants as ids, each asked of the core that keeps its key.
    encoded_query encode(const query& q, const query_limits& limits = {}) {
        std::vector<detail::key_list> asked(cores_);
        for (const triple_pattern& t : q.patterns)
            for (const pattern_term* x : {&t.s, &t.p, &t.o})
                if (!x->is_variable) {
                    const std::string k = key(x->constant);
                    asked[detail::dictionary_home(k, cores_)].add(k);
                }
        const std::uint64_t id = ++queries_;
        master_.start(id);
        master_.found(id, 0, taco::view<term_id>(here().ids_of(asked[0].ends, std::span<const char>(asked[0].text))));
        for (std::uint32_t c = 1; c < cores_; ++c)
            taco::async(workers_[c], &shard_worker::lookup, id, taco::view<std::uint64_t>(asked[c].ends), taco::view<char>(asked[c].text));
        taco::wait_until([&] { return master_.all_replied(); });
        std::vector<std::size_t> next(cores_, 0);
        return rdf::encode(q, [&](std::string_view k) {
            const std::uint32_t home = detail::dictionary_home(k, cores_);
            // encode asks in the order the keys were listed above
            const std::size_t i = next[home]++;
            if (i >= master_.found_ids()[home].size() || asked[home][i] != k)
                throw std::logic_error("rdf: a sharded store's dictionary answered other keys than asked");
            return master_.found_ids()[home][i];
        }, limits);
    }

    /// The rows' terms fetched from the cores that keep them, the rows
    /// renumbered into a dictionary of those terms alone.
    spelled_rows spell(const table& rows) {
        std::vector<term_id> ids;
        for (const term_id t : rows.cells)
            if (t != no_term) ids.push_back(t);
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        std::vector<std::vector<term_id>> asked(cores_);
        for (const term_id t : ids) asked[dict_home_[t]].push_back(t);
        const std::uint64_t id = ++queries_;
        master_.start(id);
        master_.spelled_here(id, 0, here().keys_of(asked[0]));
        for (std::uint32_t c = 1; c < cores_; ++c) taco::async(workers_[c], &shard_worker::spell, id, taco::view<term_id>(asked[c]));
        taco::wait_until([&] { return master_.all_replied(); });
        spelled_rows out;
        std::vector<std::size_t> next(cores_, 0);
        for (const term_id t : ids) { // in id order: t's new id is its place in `ids`
            const std::uint32_t home = dict_home_[t];
            const detail::key_list& keys = master_.spelled_keys()[home];
            if (next[home] >= keys.size()) throw std::logic_error("rdf: a sharded store's core lacks a term it was dealt");
            out.text.append(keys[next[home]++]);
            out.offsets.push_back(out.text.size());
        }
        // Each cell's new id from a hash table of the ids (open addressing):
        // a binary search per cell, its branches taken at random, cost as
        // much as the keys' copies.
        const unsigned bits = unsigned(std::bit_width(2 * ids.size()));
        const std::size_t mask = (std::size_t(1) << bits) - 1;
        std::vector<term_id> key_at(mask + 1, no_term), place_at(mask + 1);
        auto slot = [&](term_id t) { return std::size_t((std::uint64_t(t) * 0x9e3779b97f4a7c15ull) >> (64 - bits)) & mask; };
        for (std::size_t i = 0; i < ids.size(); ++i) {
            std::size_t at = slot(ids[i]);
            while (key_at[at] != no_term) at = (at + 1) & mask;
            key_at[at] = ids[i];
            place_at[at] = term_id(i);
        }
        out.rows = rows;
        for (term_id& t : out.rows.cells) {
            if (t == no_term) continue;
            std::size_t at = slot(t);
            while (key_at[at] != t) at = (at + 1) & mask;
            t = place_at[at];
        }
        return out;
    }

private:
    void distribute(const store_view& v) {
        const term_id terms = v.dict.size();
        // Regions to cores, weighed by the triples each will keep.
        const std::uint32_t parts = cores_ == 1 ? 1 : 8 * cores_;
        std::vector<std::uint16_t> part_of = cores_ == 1 ? std::vector<std::uint16_t>(terms, 0) : partition_entities(v, parts);
        std::vector<std::uint16_t> route(terms, 0);
        const term_id type = v.dict.find(std::string("<") + std::string(rdf_type) + ">");
        for (term_id t = 0; t < terms; ++t)
            if (v.dict.key(t).starts_with('"')) route[t] = detail::not_an_entity;
        detail::for_each_match(v, order::pos, {no_term, type, no_term}, 2, [&](const std::array<term_id, 3>& t) {
            route[t[2]] = detail::not_an_entity;
        });
        std::vector<std::uint64_t> weight(parts, 0);
        detail::for_each_match(v, order::spo, {}, 0, [&](const std::array<term_id, 3>& t) {
            ++weight[part_of[t[0]]];
            ++weight[part_of[route[t[2]] & detail::not_an_entity ? t[0] : t[2]]];
        });
        const std::vector<std::uint32_t> deal = assign_parts(weight, cores_);
        for (term_id t = 0; t < terms; ++t) route[t] = std::uint16_t(route[t] | deal[part_of[t]]);
        std::vector<std::uint16_t>().swap(part_of);

        // The routes, the statistics, the keys and the triples to the cores
        // in pieces of 1 MiB: a sender's queues keep the room of the largest
        // message they held (16 MiB pieces left rank 0 10 MB more resident).
        constexpr std::size_t piece_bytes = std::size_t(1) << 20;
        constexpr std::size_t routes_a_piece = piece_bytes / sizeof(std::uint16_t);
        for (auto w : workers_) {
            const std::span<const std::uint16_t> all = route;
            for (std::size_t at = 0; at < all.size(); at += routes_a_piece)
                taco::sync(w, &shard_worker::take_routes,
                           taco::view<std::uint16_t>(all.subspan(at, std::min(routes_a_piece, all.size() - at))));
            taco::async(w, &shard_worker::take_predicates, taco::view<predicate_stat>(v.predicates));
        }
        // Each key to its home core alone, in id order.
        dict_home_.resize(terms);
        {
            std::vector<std::vector<term_id>> ids(cores_);
            std::vector<detail::key_list> keys(cores_);
            auto send = [&](std::uint32_t c) {
                taco::sync(workers_[c], &shard_worker::take_terms, taco::view<term_id>(ids[c]), taco::view<std::uint64_t>(keys[c].ends),
                           taco::view<char>(keys[c].text));
                ids[c].clear();
                keys[c] = {};
            };
            for (term_id t = 0; t < terms; ++t) {
                const std::string_view k = v.dict.key(t);
                const std::uint32_t home = detail::dictionary_home(k, cores_);
                dict_home_[t] = std::uint16_t(home);
                ids[home].push_back(t);
                keys[home].add(k);
                if (keys[home].text.size() >= piece_bytes) send(home);
            }
            for (std::uint32_t c = 0; c < cores_; ++c) send(c);
        }
        // The triples, in SPO order, a batch per core at a time.
        const std::span<const std::uint16_t> r = route;
        {
            std::vector<std::uint64_t> by_subject(cores_, 0), by_object(cores_, 0);
            detail::for_each_match(v, order::spo, {}, 0, [&](const std::array<term_id, 3>& t) {
                ++by_subject[detail::owner_of(r, t[0])];
                ++by_object[detail::object_shard_owner(r, {t[0], t[1], t[2]})];
            });
            for (std::uint32_t c = 0; c < cores_; ++c) taco::async(workers_[c], &shard_worker::expect, by_subject[c], by_object[c]);
        }
        constexpr std::size_t batch = piece_bytes / sizeof(triple);
        std::vector<std::vector<triple>> subjects(cores_), objects(cores_);
        auto flush = [&](std::vector<triple>& b, std::uint32_t core, bool by_object) {
            // sync: the master's batches wait for the core to take them, so
            // no more than one is in flight per core.
            taco::sync(workers_[core], &shard_worker::take_triples, by_object, taco::view<triple>(b));
            b.clear();
        };
        detail::for_each_match(v, order::spo, {}, 0, [&](const std::array<term_id, 3>& t) {
            const triple x{t[0], t[1], t[2]};
            const std::uint32_t so = detail::owner_of(r, x.s), oo = detail::object_shard_owner(r, x);
            subjects[so].push_back(x);
            if (subjects[so].size() == batch) flush(subjects[so], so, false);
            objects[oo].push_back(x);
            if (objects[oo].size() == batch) flush(objects[oo], oo, true);
        });
        for (std::uint32_t c = 0; c < cores_; ++c) {
            flush(subjects[c], c, false);
            flush(objects[c], c, true);
        }
    }

    std::uint32_t cores_;
    shard_master master_;
    std::vector<taco::global_ptr<shard_worker>> workers_;
    std::vector<std::uint16_t> dict_home_; ///< each term's dictionary_home, for spell
    std::uint64_t queries_ = 0;
};

/// Start `cfg`'s cores and, on core 0, load the store (`load()`, a store
/// returned by value, called on core 0 alone: on MPI, rank 0 reads the
/// data, no other rank), deal it out, let the whole go, then run
/// fn(sharded_cluster&).
template <class Config, class Load, class F>
void with_sharded_cluster_on(Config cfg, Load&& load, F&& fn) {
    taco::run(cfg, [&] {
        sharded_cluster c(load()); // (the whole, given up)
        fn(c);
    });
}

} // namespace rdf
