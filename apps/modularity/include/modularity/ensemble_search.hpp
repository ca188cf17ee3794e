#pragma once
// The multilevel search in parallel on TACO and MESH: an ensemble of
// clusterings, one member per core (at least two; two on big graphs: see
// ensemble_members), combined through their core groups (Ovelgoenne and
// Geyer-Schulz's CGGC, iterated), each member improved by multilevel
// iterations (multilevel.hpp).
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
// tolerance (round_patience, gain_tolerance below).
//
// How much a member does in a round is the schedule (lean_schedule):
// thorough, multilevel iterations until one gains no more than the
// tolerance, from singletons and again after the projection; lean (big
// graphs), one multilevel iteration from singletons in round 0 and, after
// the projection of later rounds, local moving on the graph only. On big
// graphs the thorough schedule's extra iterations each cost two thirds of
// the first (refinement and aggregation start again from singletons) and
// gained 2e-5 on LFR graphs, where the lean one reaches the same Q in 0.55x
// the time; on R-MAT graphs they gained 5e-4 (--effort above 1 buys them). The graph is a MESH
// shared graph, which each member reads in place through its chunks
// (shared_csr.hpp), with no copy of its own; its coarser levels are private.
// The maps the master and the members write are made visible by the
// consistency controller, so the search runs the same on threads and on
// private-memory processes.
//
// The result depends on the seed and on the member count (ensemble_members),
// not on the platform, controller or map variant.
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
enum class ensemble_schedule { by_size, thorough, lean };

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
    /// How much a member does per round (lean_schedule): by the graph's
    /// size and `effort`, or as given.
    ensemble_schedule schedule = ensemble_schedule::by_size;
    /// A gain in Q of at most this does not count as an improvement, for a
    /// member's iteration and for a round (so the search does not go on
    /// for crumbs on big graphs; small graphs get more rounds anyway);
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
/// no more than `tolerance`; leaves the best clustering seen in `of`,
/// returns its Q.
template <class Graph>
double improve(const Graph& g, std::vector<cluster>& of, rng& r, workspace& ws, unsigned patience, double tolerance,
               std::uint64_t* iterations = nullptr) {
    double best = q_of(g, of);
    std::vector<cluster> kept = of;
    for (unsigned stall = 0; stall < patience;) {
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

template <class Map>
std::vector<cluster> read_map(const mesh::sharing_ptr<Map>& m) {
    const auto r = mesh::read(m);
    std::vector<cluster> out(r.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = r.get(typename Map::key_type(i));
    return out;
}

template <class Map>
void write_map(const mesh::sharing_ptr<Map>& m, const std::vector<cluster>& values) {
    fill(m, values.size(), [&](std::size_t i) { return values[i]; });
}

} // namespace detail

/// One member of the ensemble, on its core.
template <map_memory G, map_memory M>
class ensemble_member {
public:
    using map = mesh::chunked_map<std::uint32_t, cluster, M>;

    template <class C>
    struct tag {};

    template <class C>
    ensemble_member(tag<C>, mesh::sharing_ptr<shared_graph<G>> graph, mesh::sharing_ptr<map> groups,
                    mesh::sharing_ptr<map> best, std::uint32_t index, std::uint64_t seed, unsigned patience,
                    double tolerance, bool lean)
        : groups_(groups), best_(best), index_(index), seed_(seed), patience_(patience), tolerance_(tolerance),
          lean_(lean),
          graph_(level0(graph)),
          mine_(mesh::make_shared_object<map, C>(std::visit([](const auto& g) { return g.vertex_count(); }, graph_))) {}
    ~ensemble_member() { mesh::destroy_shared_object(mine_); }
    ensemble_member(const ensemble_member&) = delete;
    ensemble_member& operator=(const ensemble_member&) = delete;

    /// This member's shared clustering (the master reads it).
    mesh::sharing_ptr<map> clustering() const { return mine_; }

    /// Build this round's clustering; returns its Q. `fresh`: the last
    /// round found nothing better, so members other than 0 start again from
    /// singletons, bringing new groups into the overlay.
    double build(std::uint32_t round, bool fresh) {
        return std::visit([&](const auto& g) { return build_on(g, round, fresh); }, graph_);
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

    template <class Graph>
    double build_on(const Graph& g, std::uint32_t round, bool fresh) {
        rng r(detail::mix_seed(seed_, index_, round));
        const vertex n = g.vertex_count();
        std::vector<cluster> of;
        const bool from_singletons = round == 0 || (fresh && index_ != 0);
        if (from_singletons) {
            of = detail::singletons(n);
        } else {
            std::vector<cluster> groups = detail::read_map(groups_);
            const cluster k = compact(groups);
            const auto coarse = aggregate(g, groups, k, ws_);
            std::vector<cluster> start(k);
            if (index_ == 0) { // the best so far, which the groups refine
                const std::vector<cluster> best = detail::read_map(best_);
                for (vertex v = 0; v < n; ++v) start[groups[v]] = best[v];
                compact(start);
            } else {
                start = detail::singletons(k);
            }
            detail::improve(coarse, start, r, ws_, patience_, tolerance_);
            of.resize(n);
            for (vertex v = 0; v < n; ++v) of[v] = start[groups[v]];
        }
        double q;
        if (!lean_) {
            q = detail::improve(g, of, r, ws_, patience_, tolerance_, &iterations_);
        } else if (from_singletons) {
            multilevel_iteration(g, of, r, ws_);
            ++iterations_;
            q = detail::q_of(g, of);
        } else { // the projection carries the coarse search's clusters: only single vertices left to move
            local_move(g, of, r, ws_);
            q = detail::q_of(g, of);
        }
        detail::write_map(mine_, of);
        return q;
    }

    mesh::sharing_ptr<map> groups_, best_;
    std::uint32_t index_;
    std::uint64_t seed_;
    unsigned patience_;
    double tolerance_;
    bool lean_;
    std::uint64_t iterations_ = 0;
    level0_view graph_; ///< level 0 read in place, without weights when all are 1
    mesh::sharing_ptr<map> mine_;
    workspace ws_;
};

struct ensemble_result {
    double modularity = 0;
    vertex clusters = 0;
    std::uint64_t rounds = 0;
    std::uint32_t members = 0;
    bool lean = false;              ///< the schedule (lean_schedule)
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

/// Graphs of at least this many vertices + edges get two members whatever
/// the cores (ensemble_members).
inline constexpr std::size_t ensemble_cap_size = 100000;

/// Members of the ensemble, unless ensemble_params::members says: one per
/// core (at least two) on graphs under ensemble_cap_size vertices + edges,
/// where more members find the best-known clustering more often and cost
/// little; two on bigger ones. Each member's coarse levels and scratch take
/// some 30 bytes an edge of private memory, so a member per core made the
/// run's memory grow with the cores (4 cores took 1.6x the 2-core peak on
/// an LFR graph of 0.95 M edges), and on big graphs more members buy
/// crumbs of Q for their time. The cores beyond the members wait.
inline std::uint32_t ensemble_members(const ensemble_params& p, taco::core_id cores, std::size_t size) {
    if (p.members) return p.members;
    return size < ensemble_cap_size ? std::max<std::uint32_t>(2, cores) : 2;
}

/// Whether the members run the lean schedule (the header says what it
/// does), unless ensemble_params::schedule says: on graphs of at least
/// ensemble_cap_size vertices + edges at effort 1 or less. Smaller graphs
/// cost milliseconds a round and reach the best-known Q by the thorough one;
/// --effort above 1 is a request for more search, which on big graphs means
/// the thorough schedule's iterations.
inline bool lean_schedule(const ensemble_params& p, std::size_t size) {
    if (p.schedule != ensemble_schedule::by_size) return p.schedule == ensemble_schedule::lean;
    return size >= ensemble_cap_size && p.effort <= 1;
}

/// The gain that counts as an improvement (ensemble_params::tolerance).
inline double gain_tolerance(const ensemble_params& p) {
    if (p.tolerance > 0) return p.tolerance;
    return p.effort > 0 ? 1e-3 / p.effort : 1e-3;
}

/// Run the search on the running cores (call on core 0 inside taco::run).
template <map_memory G, map_memory M, class C>
ensemble_result ensemble_search(const graph_data& data, const ensemble_params& params) {
    using member = ensemble_member<G, M>;
    using map = typename member::map;
    auto graph = make_shared_graph<G, C>(data);
    const vertex n = data.vertex_count();
    const std::size_t size = std::size_t(n) + data.undirected_edge_count();
    if (params.data_consumed) params.data_consumed();
    auto groups = mesh::make_shared_object<map, C>(n);
    auto best = mesh::make_shared_object<map, C>(n);
    const taco::core_id cores = taco::core_count();
    const std::uint32_t members = ensemble_members(params, cores, size);
    const double tolerance = gain_tolerance(params);
    const bool lean = lean_schedule(params, size);

    const auto t0 = std::chrono::steady_clock::now();
    std::vector<taco::global_ptr<member>> workers;
    for (std::uint32_t i = 0; i < members; ++i)
        workers.push_back(taco::new_on<member>(taco::core_id(i % cores), typename member::template tag<C>{}, graph,
                                               groups, best, i, params.seed, params.member_patience, tolerance,
                                               lean)
                              .get());
    std::vector<mesh::sharing_ptr<map>> clusterings(members);
    for (std::uint32_t i = 0; i < members; ++i) clusterings[i] = taco::sync(workers[i], &member::clustering);
    auto group = taco::make_group(workers);
    auto teardown = [&] {
        taco::destroy_group(group);
        for (auto w : workers) taco::delete_on(w);
        mesh::destroy_shared_object(best);
        mesh::destroy_shared_object(groups);
        destroy_shared_graph(graph);
    };
    detail::unwind_guard guard(teardown);

    ensemble_result r;
    r.members = members;
    r.lean = lean;
    double best_q = -1;
    std::vector<cluster> best_of;
    std::vector<double> q(members);
    const unsigned patience = round_patience(params, size);
    for (unsigned stall = 0; stall < patience; ++r.rounds) {
        taco::gather(group, taco::m2f(&member::build, std::uint32_t(r.rounds), stall > 0), std::span<double>(q)).get();
        std::vector<std::vector<cluster>> all;
        for (auto& c : clusterings) all.push_back(detail::read_map(c));
        const std::size_t win = std::size_t(std::max_element(q.begin(), q.end()) - q.begin()); // first of equals
        stall = q[win] > best_q + tolerance ? 0 : stall + 1;
        if (q[win] > best_q) {
            best_q = q[win];
            best_of = all[win];
            detail::write_map(best, best_of);
        }
        all.push_back(best_of);
        detail::write_map(groups, overlay(all));
        if (params.progress) {
            std::vector<cluster> k = best_of;
            params.progress(r.rounds + 1, best_q, compact(k));
        }
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto w : workers) r.iterations += taco::sync(w, &member::iterations);
    r.assignment = best_of;
    {
        std::vector<cluster> k = best_of;
        r.clusters = compact(k);
    }
    r.modularity = detail::q_of(mesh::read(graph), best_of);
    if (std::abs(r.modularity - best_q) > 1e-9)
        throw std::logic_error("modularity: the best member reported Q = " + std::to_string(best_q) +
                               ", the master recomputes " + std::to_string(r.modularity) +
                               " from the shared data: the controller did not make a member's clustering visible");

    guard.release();
    teardown();
    return r;
}

} // namespace modularity
