#pragma once
// The multilevel search in parallel on TACO and MESH: an ensemble of
// clusterings, one member per core on small graphs (at least two; two from
// 10k vertices + edges: see ensemble_members), combined through their core
// groups (Ovelgoenne and Geyer-Schulz's CGGC, iterated), each member
// improved by multilevel iterations (multilevel.hpp).
//
// A round:
//   1. every member (a worker object on its core) builds a clustering and
//      writes it into its own shared map (one writer per map, as MESH asks):
//      round 0 from singletons; later rounds on the coarse graph of the core
//      groups, member 0 from the best clustering so far, the others from
//      singletons, then projected onto the graph and improved there; after
//      a round without improvement the others start afresh from singletons
//      of the graph instead (the overlay has converged to the best);
//   2. the master gathers the members' Q (taco::gather), keeps the best
//      clustering (copies it into the shared `best` map), and overlays all
//      members and the best: the core groups are the sets of vertices that
//      every one of them puts together; it writes them into the shared
//      `groups` map for the next round.
// Rounds go on until `patience` of them in a row gain no more than the
// tolerance (round_patience, gain_tolerance below), or until restarts from
// singletons have found the best Q again often enough (repeat_limit). The
// graph is a MESH shared graph, which each member reads in place through
// its chunks (shared_csr.hpp), with no copy of its own; its coarser levels
// are private.
// The maps the master and the members write are made visible by the
// consistency controller, so the search runs the same on threads and on
// private-memory processes.
//
// How much a member does in a round is the schedule (schedule_for):
// thorough (small graphs), multilevel iterations until one gains no more
// than the tolerance, from singletons and again after the projection;
// paced (mid-size graphs), one multilevel iteration a round, from
// singletons and after the projection, the rounds going on while they gain;
// lean (big graphs), one multilevel iteration from singletons in round 0
// and, after the projection of later rounds, local moving on the graph
// only. On big graphs the thorough schedule's extra iterations each cost
// two thirds of the first (refinement and aggregation start again from
// singletons) and gained 2e-5 on LFR graphs, where the lean one reaches the
// same Q in 0.55x the time; on R-MAT graphs they gained 5e-4 (--effort
// above 1 buys them). On mid-size graphs the lean one lost 1e-3 on real
// graphs (cond-mat); the paced one (below, paced_size) keeps most of it.
//
// Small graphs run their members one after the other on core 0, with no
// workers and no shared maps (members_on_core0): there the round trips
// cost as much as the search. A member's work (detail::member_search) is
// the same code in both places, and so is the master's (detail::run_rounds).
//
// The result depends on the seed and on the member count (ensemble_members),
// not on the platform, controller, map variant or where the members run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include <taco/taco.hpp>
#include <mesh/mesh.hpp>
#include <modularity/detail/unwind_guard.hpp>
#include <modularity/multilevel.hpp>
#include <modularity/quality.hpp>
#include <modularity/shared_csr.hpp>
#include <modularity/shared_graph.hpp>

namespace modularity {

/// A member's work per round (ensemble_search.hpp's header says which is which).
enum class ensemble_schedule { by_size, thorough, paced, lean };

inline const char* name(ensemble_schedule s) {
    switch (s) {
    case ensemble_schedule::thorough: return "thorough";
    case ensemble_schedule::paced: return "paced";
    case ensemble_schedule::lean: return "lean";
    default: return "auto";
    }
}
/// Where the members run: one after the other on core 0, or each on a core of its own.
enum class member_placement { by_size, core0, own_cores };

struct ensemble_params {
    std::uint64_t seed = 1;
    /// Members of the ensemble; 0: by the graph's size and the cores (ensemble_members).
    std::uint32_t members = 0;
    /// Rounds without improvement before the search stops; 0: by the
    /// graph's size and `effort` (small graphs get more, see round_patience).
    unsigned patience = 0;
    double effort = 1;
    /// Multilevel iterations without improvement before a member stops
    /// (thorough schedule).
    unsigned member_patience = 1;
    /// How much a member does per round (schedule_for): by the graph's
    /// size and `effort`, or as given.
    ensemble_schedule schedule = ensemble_schedule::by_size;
    /// Where the members run (members_on_core0): by the graph's size, or as given.
    member_placement placement = member_placement::by_size;
    /// A gain in Q of at most this does not count as an improvement, for a
    /// member's iteration and for a round (half of it for a round of the
    /// paced schedule: detail::round_tolerance), so the search does not go
    /// on for crumbs on big graphs (small graphs get more rounds anyway);
    /// 0: 1e-3 / effort.
    double tolerance = 0;
    std::function<void(std::uint64_t, double, vertex)> progress;
    /// Called on core 0 once the graph is in MESH: the search reads nothing
    /// of the graph_data after, so the caller may free its edges
    /// (cluster_graph(graph_data&&, ...) does).
    std::function<void()> data_consumed;
};

namespace detail {

template <class Graph>
double q_of(const Graph& g, const std::vector<cluster>& of) {
    return modularity_of(g, [&](vertex v) { return of[v]; });
}

/// Multilevel iterations from `of` until `patience` of them in a row gain
/// no more than `tolerance`, or `most` of them (0: no limit); leaves the
/// best clustering seen in `of`, returns its Q.
template <class Graph>
double improve(const Graph& g, std::vector<cluster>& of, rng& r, workspace& ws, unsigned patience, double tolerance,
               std::uint64_t* iterations = nullptr, unsigned most = 0) {
    double best = q_of(g, of);
    std::vector<cluster> kept = of;
    for (unsigned stall = 0, done = 0; stall < patience && (most == 0 || done < most); ++done) {
        multilevel_iteration(g, of, r, ws);
        if (iterations) ++*iterations;
        const double q = q_of(g, of);
        stall = q > best + tolerance ? 0 : stall + 1;
        if (q > best) {
            best = q;
            kept = of;
        }
    }
    of = std::move(kept);
    return best;
}

inline std::vector<cluster> singletons(vertex n) {
    std::vector<cluster> of(n);
    std::iota(of.begin(), of.end(), cluster(0));
    return of;
}

inline std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t member, std::uint64_t round) {
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ (member + 1) * 0xbf58476d1ce4e5b9ull ^ (round + 1) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

// A whole clustering in or out of a shared map a chunk at a time (the
// reader's chunk spans, the writer's range set): value by value, a lookup,
// a bounds check and a stamp each, a member's write of its clustering took
// 1.4 M instructions on an LFR graph of 10k vertices, now 30 k (a small
// part of a round's 200 M either way).
template <class Map>
std::vector<cluster> read_map(const mesh::sharing_ptr<Map>& m) {
    const auto r = mesh::read(m);
    std::vector<cluster> out;
    out.reserve(r.size());
    for (std::size_t c = 0; c < r.chunk_count(); ++c) {
        const auto values = r.chunk(c);
        out.insert(out.end(), values.begin(), values.end());
    }
    return out;
}

template <class Map>
void write_map(const mesh::sharing_ptr<Map>& m, const std::vector<cluster>& values) {
    mesh::write(m).set(0, std::span<const cluster>(values));
}

} // namespace detail

namespace detail {

struct member_settings {
    std::uint64_t seed;
    unsigned patience; ///< ensemble_params::member_patience
    double tolerance;
    ensemble_schedule schedule; ///< thorough, paced or lean
};

/// The gain that counts as an improvement for a round: half the member's on
/// the paced schedule, whose rounds do one multilevel iteration each where
/// the thorough one's do two or more. With the whole tolerance the paced
/// rounds stopped one iteration sooner than the thorough ones where every
/// iteration gains a little (R-MAT, the real graphs: Q 1e-4 to 2e-4 lower);
/// with half, they go on there and stop as soon on LFR graphs (paced_size).
inline double round_tolerance(const member_settings& s) {
    return s.schedule == ensemble_schedule::paced ? s.tolerance / 2 : s.tolerance;
}

/// A member's search (the header's step 1), wherever it runs: inside a
/// worker on a core of its own (ensemble_member), or on core 0 beside the
/// others (small graphs: members_on_core0). The same seed, index and inputs
/// give the same clustering in both.
template <map_memory G>
class member_search {
public:
    member_search(const mesh::sharing_ptr<shared_graph<G>>& graph, std::uint32_t index, const member_settings& s)
        : index_(index), s_(s), graph_(level0(graph)) {}

    vertex vertex_count() const {
        return std::visit([](const auto& g) { return g.vertex_count(); }, graph_);
    }

    /// This round's clustering into `of`; returns its Q. `fresh`: the last
    /// round found nothing better, so members other than 0 start again from
    /// singletons, bringing new groups into the overlay. groups() and best()
    /// give the core groups and the best clustering so far, called only when
    /// the round needs them.
    template <class Groups, class Best>
    double build(std::uint32_t round, bool fresh, std::vector<cluster>& of, Groups&& groups, Best&& best) {
        return std::visit([&](const auto& g) { return build_on(g, round, fresh, of, groups, best); }, graph_);
    }

    /// Multilevel iterations this member ran on the graph (not its coarse
    /// groups) so far: what the schedule decides.
    std::uint64_t iterations() const { return iterations_; }

private:
    using level0_view = std::variant<shared_csr<G, false>, shared_csr<G, true>>;
    static level0_view level0(const mesh::sharing_ptr<shared_graph<G>>& graph) {
        if (mesh::read(graph).unit_weights()) return shared_csr<G, true>(graph);
        return shared_csr<G, false>(graph);
    }

    template <class Graph, class Groups, class Best>
    double build_on(const Graph& g, std::uint32_t round, bool fresh, std::vector<cluster>& of, Groups& read_groups,
                    Best& read_best) {
        rng r(mix_seed(s_.seed, index_, round));
        const vertex n = g.vertex_count();
        const bool from_singletons = round == 0 || (fresh && index_ != 0);
        if (from_singletons) {
            of = singletons(n);
        } else {
            std::vector<cluster> groups = read_groups();
            const cluster k = compact(groups);
            const auto coarse = aggregate(g, groups, k, ws_);
            std::vector<cluster> start(k);
            if (index_ == 0) { // the best so far, which the groups refine
                const std::vector<cluster> best = read_best();
                for (vertex v = 0; v < n; ++v) start[groups[v]] = best[v];
                compact(start);
            } else {
                start = singletons(k);
            }
            improve(coarse, start, r, ws_, s_.patience, s_.tolerance);
            of.resize(n);
            for (vertex v = 0; v < n; ++v) of[v] = start[groups[v]];
        }
        if (s_.schedule != ensemble_schedule::lean)
            return improve(g, of, r, ws_, s_.patience, s_.tolerance, &iterations_,
                           s_.schedule == ensemble_schedule::paced ? 1 : 0);
        if (from_singletons) {
            multilevel_iteration(g, of, r, ws_);
            ++iterations_;
        } else { // the projection carries the coarse search's clusters: only single vertices left to move
            local_move(g, of, r, ws_);
        }
        return q_of(g, of);
    }

    std::uint32_t index_;
    member_settings s_;
    std::uint64_t iterations_ = 0;
    level0_view graph_; ///< level 0 read in place, without weights when all are 1
    workspace ws_;
};

} // namespace detail

/// One member of the ensemble, on its core: its search, and its clustering
/// in a shared map of its own (one writer per map, as MESH asks), which the
/// master reads after each round.
template <map_memory G, map_memory M>
class ensemble_member {
public:
    using map = mesh::chunked_map<std::uint32_t, cluster, M>;

    template <class C>
    struct tag {};

    template <class C>
    ensemble_member(tag<C>, mesh::sharing_ptr<shared_graph<G>> graph, mesh::sharing_ptr<map> groups,
                    mesh::sharing_ptr<map> best, std::uint32_t index, const detail::member_settings& s)
        : groups_(groups), best_(best), search_(graph, index, s),
          mine_(mesh::make_shared_object<map, C>(search_.vertex_count())) {}
    ~ensemble_member() { mesh::destroy_shared_object(mine_); }
    ensemble_member(const ensemble_member&) = delete;
    ensemble_member& operator=(const ensemble_member&) = delete;

    /// This member's shared clustering (the master reads it).
    mesh::sharing_ptr<map> clustering() const { return mine_; }

    /// Build this round's clustering into the shared map; returns its Q.
    double build(std::uint32_t round, bool fresh) {
        std::vector<cluster> of;
        const double q = search_.build(
            round, fresh, of, [&] { return detail::read_map(groups_); }, [&] { return detail::read_map(best_); });
        detail::write_map(mine_, of);
        return q;
    }

    std::uint64_t iterations() const { return search_.iterations(); }

private:
    mesh::sharing_ptr<map> groups_, best_;
    detail::member_search<G> search_;
    mesh::sharing_ptr<map> mine_;
};

struct ensemble_result {
    double modularity = 0;
    vertex clusters = 0;
    std::uint64_t rounds = 0;
    std::uint32_t members = 0;
    ensemble_schedule schedule = ensemble_schedule::thorough; ///< the members' (schedule_for)
    bool on_core0 = false;          ///< the members ran one after the other on core 0 (members_on_core0)
    std::uint64_t iterations = 0;   ///< multilevel iterations on the graph, all members
    double seconds = 0;
    std::vector<cluster> assignment;
};

/// The overlay: vertices share a group iff every clustering puts them together.
inline std::vector<cluster> overlay(const std::vector<std::vector<cluster>>& all) {
    std::vector<cluster> groups = all.front();
    compact(groups);
    std::unordered_map<std::uint64_t, cluster> ids;
    for (std::size_t i = 1; i < all.size(); ++i) {
        ids.clear();
        for (std::size_t v = 0; v < groups.size(); ++v) {
            const std::uint64_t key = std::uint64_t(groups[v]) << 32 | all[i][v];
            groups[v] = ids.try_emplace(key, cluster(ids.size())).first->second;
        }
    }
    return groups;
}

/// Rounds without improvement the search allows: 1 on graphs of 10k
/// vertices + edges and more (where the time target against igraph's
/// Leiden lies), more on smaller ones, where a round costs well under a
/// millisecond and more of them find the best-known clustering more often
/// (effort * 30000 / size, at most 64 in all).
inline unsigned round_patience(const ensemble_params& p, std::size_t size) {
    if (p.patience) return p.patience;
    const double extra = size < 10000 ? p.effort * 3e4 / double(std::max<std::size_t>(size, 1)) : 0.0;
    return 1 + unsigned(std::min(63.0, std::max(0.0, extra)));
}

/// Restarts from singletons that find the best Q again before the search
/// stops, whatever its patience: 6 x effort (at least 1). Where every
/// restart lands on the same optimum, the rounds after the first only find
/// it again: karate, lesmis, polbooks and football had their final Q in
/// round 1 for each of 12 seeds, and their 43-65 rounds took 2-12 ms. Where
/// restarts land in many local optima the best comes up again only now and
/// then, and the search runs on as before: on dolphins the 12 seeds found
/// the best-known Q in rounds 1-19, a worse optimum coming up at most twice
/// before the better one; on jazz a worse one came up 4 times first in 2 of
/// 40 seeds (so 4 would stop too soon there; 6 kept every seed's Q); on
/// never-tuned LFR and R-MAT graphs of 1k-4k edges all 20 seeds ended
/// where they did without the rule.
inline unsigned repeat_limit(const ensemble_params& p) {
    return std::max(1u, unsigned(std::lround(6 * p.effort)));
}

/// Graphs of at least this many vertices + edges get two members whatever
/// the cores (ensemble_members).
inline constexpr std::size_t ensemble_cap_size = 10000;

/// Graphs of at least this many vertices + edges get the lean schedule
/// (schedule_for).
inline constexpr std::size_t lean_size = 100000;

/// Graphs of at least this many vertices + edges and under lean_size get
/// the paced schedule (schedule_for): one multilevel iteration per member
/// and round, the rounds going on while one gains more than half the
/// tolerance (detail::round_tolerance). There the thorough schedule's second
/// iteration of round 0 gained 1e-4 on LFR graphs and 6e-4 to 1.6e-3 on
/// R-MAT and real ones, and round 1 runs an iteration anyway, after the
/// combination. Against the thorough schedule, the binaries alternating
/// (seeds 1-4): 0.74-0.80x the time on LFR graphs of 1k-10k vertices (set D
/// of the README) and polblogs, 0.85-0.91x on R-MAT scale 12, cond-mat and
/// hep-th, 1.02-1.03x on PGPgiantcompo, power and R-MAT scale 10, where the
/// rounds go on (geomean 0.85x); Q, means of 20 seeds: +2e-5 to +8e-5 on
/// R-MAT, cond-mat and hep-th, within 1.5e-5 on PGPgiantcompo and LFR 10k,
/// -4e-5 on LFR 5k with mixing 0.5 and -6e-5 on power. On set E, made after
/// the choice and never tuned on, the same Q (medians of seeds 1-3) at
/// 0.75-1.05x the time. Smaller graphs keep the thorough schedule, which
/// reaches their best-known Q every seed.
inline constexpr std::size_t paced_size = 10000;

/// Graphs of fewer vertices + edges than this run their members one after
/// the other on core 0 (members_on_core0).
inline constexpr std::size_t core0_size = 3000;

/// Whether the members run on core 0, unless ensemble_params::placement
/// says: on graphs under core0_size vertices + edges. There a member's round
/// costs tens of microseconds, and on cores of their own the round trips
/// (the gather, the clusterings and core groups through shared maps and the
/// controller) cost as much again: karate took 5-10 ms on two cores and
/// 2.2 ms on core 0, lesmis 12-18 and 5, and at jazz's size (2940) the two
/// were even. The clusterings are the same either way (a member's work
/// depends on its seed, index and inputs only); two members, whatever the
/// cores, so that the time does not grow with them.
inline bool members_on_core0(const ensemble_params& p, std::size_t size) {
    if (p.placement != member_placement::by_size) return p.placement == member_placement::core0;
    return size < core0_size;
}

/// Members of the ensemble, unless ensemble_params::members says: two on
/// graphs the members search on core 0 (members_on_core0), else one per
/// core (at least two) on graphs under ensemble_cap_size vertices + edges,
/// where more members find the best-known clustering more often and cost
/// little; two on bigger ones. Each member's coarse levels and scratch take
/// 20-35 bytes an edge of private memory, so a member per core made the
/// run's memory grow with the cores: 4 cores took 1.6x the 2-core peak on
/// an LFR graph of 0.95 M edges, and 1.22-1.44x on never-tuned graphs of
/// 30k-65k edges (the cap was 100k vertices + edges then), where the
/// process's fixed 5 MiB no longer hides them. The cores beyond the members
/// wait.
inline std::uint32_t ensemble_members(const ensemble_params& p, taco::core_id cores, std::size_t size) {
    if (p.members) return p.members;
    if (members_on_core0(p, size)) return 2;
    return size < ensemble_cap_size ? std::max<std::uint32_t>(2, cores) : 2;
}

/// The members' schedule (the header says what each does), unless
/// ensemble_params::schedule says: at effort 1 or less, lean on graphs of at
/// least lean_size vertices + edges, paced from paced_size, thorough below.
/// Small graphs cost milliseconds a round and reach the best-known Q by the
/// thorough one; --effort above 1 is a request for more search, which means
/// the thorough schedule's iterations at every size.
inline ensemble_schedule schedule_for(const ensemble_params& p, std::size_t size) {
    if (p.schedule != ensemble_schedule::by_size) return p.schedule;
    if (p.effort > 1 || size < paced_size) return ensemble_schedule::thorough;
    return size >= lean_size ? ensemble_schedule::lean : ensemble_schedule::paced;
}

/// The gain that counts as an improvement (ensemble_params::tolerance).
inline double gain_tolerance(const ensemble_params& p) {
    if (p.tolerance > 0) return p.tolerance;
    return p.effort > 0 ? 1e-3 / p.effort : 1e-3;
}

namespace detail {

/// The master's side of the rounds (the header's step 2), wherever the
/// members run: build(round, fresh, q, all) has every member build its
/// clustering (its Q into q[i], the clustering into all[i]);
/// publish(best, improved, groups) hands the members the best clustering so
/// far (changed if `improved`) and the next round's core groups. Leaves the
/// best clustering in r.assignment and the rounds in r.rounds; returns the best Q.
template <class Build, class Publish>
double run_rounds(ensemble_result& r, std::uint32_t members, unsigned patience, double tolerance,
                  const ensemble_params& params, Build&& build, Publish&& publish) {
    double best_q = -1;
    std::vector<cluster> best_of;
    std::vector<double> q(members);
    std::vector<std::vector<cluster>> all(members);
    const unsigned enough_repeats = repeat_limit(params);
    unsigned repeats = 0; // restarts that found the best Q again since it last improved
    for (unsigned stall = 0; stall < patience && repeats < enough_repeats; ++r.rounds) {
        const bool fresh = r.rounds == 0 || stall > 0; // members but 0 start from singletons (build_on)
        build(std::uint32_t(r.rounds), stall > 0, std::span<double>(q), all);
        const std::size_t win = std::size_t(std::max_element(q.begin(), q.end()) - q.begin()); // first of equals
        stall = q[win] > best_q + tolerance ? 0 : stall + 1;
        const bool improved = q[win] > best_q;
        if (improved) {
            best_q = q[win];
            best_of = all[win];
            repeats = 0;
        }
        if (fresh)
            for (std::size_t i = 1; i < members; ++i)
                if (i != win && std::abs(q[i] - best_q) <= 1e-12 * std::abs(best_q)) ++repeats;
        all.push_back(best_of);
        publish(best_of, improved, overlay(all));
        all.pop_back();
        if (params.progress) {
            std::vector<cluster> k = best_of;
            params.progress(r.rounds + 1, best_q, compact(k));
        }
    }
    r.assignment = std::move(best_of);
    return best_q;
}

/// The members one after the other on core 0 (members_on_core0).
template <map_memory G>
double rounds_on_core0(ensemble_result& r, const mesh::sharing_ptr<shared_graph<G>>& graph, std::uint32_t members,
                       const member_settings& s, unsigned patience, const ensemble_params& params) {
    std::vector<member_search<G>> searches;
    searches.reserve(members);
    for (std::uint32_t i = 0; i < members; ++i) searches.emplace_back(graph, i, s);
    std::vector<cluster> best, groups;
    const double best_q = run_rounds(
        r, members, patience, round_tolerance(s), params,
        [&](std::uint32_t round, bool fresh, std::span<double> q, std::vector<std::vector<cluster>>& all) {
            for (std::uint32_t i = 0; i < members; ++i)
                q[i] = searches[i].build(round, fresh, all[i], [&] { return groups; }, [&] { return best; });
        },
        [&](const std::vector<cluster>& best_of, bool improved, std::vector<cluster>&& next) {
            if (improved) best = best_of;
            groups = std::move(next);
        });
    for (const auto& m : searches) r.iterations += m.iterations();
    return best_q;
}

/// The members as workers on cores of their own: a round is a taco::gather
/// over their group, and the clusterings, the best and the core groups go
/// through shared maps, made visible by the controller C.
template <map_memory G, map_memory M, class C>
double rounds_on_cores(ensemble_result& r, const mesh::sharing_ptr<shared_graph<G>>& graph, std::uint32_t members,
                       const member_settings& s, unsigned patience, const ensemble_params& params) {
    using member = ensemble_member<G, M>;
    using map = typename member::map;
    const vertex n = mesh::read(graph).vertex_count();
    auto groups = mesh::make_shared_object<map, C>(n);
    auto best = mesh::make_shared_object<map, C>(n);
    const taco::core_id cores = taco::core_count();
    std::vector<taco::global_ptr<member>> workers;
    taco::group<member> group;
    auto teardown = [&] {
        if (group) taco::destroy_group(group);
        for (auto w : workers) taco::delete_on(w);
        mesh::destroy_shared_object(best);
        mesh::destroy_shared_object(groups);
    };
    unwind_guard guard(teardown);
    for (std::uint32_t i = 0; i < members; ++i)
        workers.push_back(
            taco::new_on<member>(taco::core_id(i % cores), typename member::template tag<C>{}, graph, groups, best, i, s)
                .get());
    std::vector<mesh::sharing_ptr<map>> clusterings(members);
    for (std::uint32_t i = 0; i < members; ++i) clusterings[i] = taco::sync(workers[i], &member::clustering);
    group = taco::make_group(workers);
    const double best_q = run_rounds(
        r, members, patience, round_tolerance(s), params,
        [&](std::uint32_t round, bool fresh, std::span<double> q, std::vector<std::vector<cluster>>& all) {
            taco::gather(group, taco::m2f(&member::build, round, fresh), q).get();
            for (std::uint32_t i = 0; i < members; ++i) all[i] = read_map(clusterings[i]);
        },
        [&](const std::vector<cluster>& best_of, bool improved, std::vector<cluster>&& next) {
            if (improved) write_map(best, best_of);
            write_map(groups, next);
        });
    for (auto w : workers) r.iterations += taco::sync(w, &member::iterations);
    guard.release();
    teardown();
    return best_q;
}

} // namespace detail

/// Run the search on the running cores (call on core 0 inside taco::run).
template <map_memory G, map_memory M, class C>
ensemble_result ensemble_search(const graph_data& data, const ensemble_params& params) {
    auto graph = make_shared_graph<G, C>(data);
    auto teardown = [&] { destroy_shared_graph(graph); };
    detail::unwind_guard guard(teardown);
    const std::size_t size = std::size_t(data.vertex_count()) + data.undirected_edge_count();
    if (params.data_consumed) params.data_consumed();
    ensemble_result r;
    r.on_core0 = members_on_core0(params, size);
    r.members = ensemble_members(params, taco::core_count(), size);
    r.schedule = schedule_for(params, size);
    const detail::member_settings s{params.seed, params.member_patience, gain_tolerance(params), r.schedule};
    const unsigned patience = round_patience(params, size);

    const auto t0 = std::chrono::steady_clock::now();
    const double best_q = r.on_core0 ? detail::rounds_on_core0(r, graph, r.members, s, patience, params)
                                     : detail::rounds_on_cores<G, M, C>(r, graph, r.members, s, patience, params);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    {
        std::vector<cluster> k = r.assignment;
        r.clusters = compact(k);
    }
    r.modularity = detail::q_of(mesh::read(graph), r.assignment);
    if (std::abs(r.modularity - best_q) > 1e-9)
        throw std::logic_error("modularity: the best member reported Q = " + std::to_string(best_q) +
                               ", the master recomputes " + std::to_string(r.modularity) +
                               " from the shared data: the controller did not make a member's clustering visible");
    guard.release();
    teardown();
    return r;
}

} // namespace modularity
