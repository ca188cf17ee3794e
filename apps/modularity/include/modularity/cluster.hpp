#pragma once
// One call from a graph to a clustering on POSIX cores: starts the cores
// (threads or processes), runs the chosen algorithm with the chosen
// controller and map variant, and returns the result on the calling thread.
// The CLI (tools/tacomesh_cluster.cpp), the tests and the benchmarks all go
// through here; cluster_graph_on runs the same on another platform's cores
// (the emulated SCC: bench/platforms/scc).
//
//   modularity::cluster_options o{.cores = 2, .platform = execution_mode::processes};
//   modularity::cluster_result r = modularity::cluster_graph(modularity::read_graph("g.graph.gz"), o);
#include <cstdint>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <tacomesh/posix.hpp>
#include <modularity/graph_data.hpp>
#include <modularity/ensemble_search.hpp>
#include <modularity/greedy.hpp>
#include <modularity/variants.hpp>

namespace modularity {

enum class algorithm { greedy, multilevel };

inline const char* name(algorithm a) { return a == algorithm::greedy ? "greedy" : "multilevel"; }
inline algorithm parse_algorithm(std::string_view s) {
    if (s == "greedy") return algorithm::greedy;
    if (s == "multilevel") return algorithm::multilevel;
    throw std::invalid_argument("unknown algorithm '" + std::string(s) + "' (greedy, multilevel)");
}

/// --schedule's value: auto (by the graph's size, schedule_for), thorough, paced or lean.
inline ensemble_schedule parse_schedule(std::string_view s) {
    if (s == "auto") return ensemble_schedule::by_size;
    if (s == "lean") return ensemble_schedule::lean;
    if (s == "paced") return ensemble_schedule::paced;
    if (s == "thorough") return ensemble_schedule::thorough;
    throw std::invalid_argument("--schedule needs auto, thorough, paced or lean, not '" + std::string(s) + "'");
}

using tacomesh::posix::execution_mode;
using tacomesh::posix::name;
using tacomesh::posix::parse_execution_mode;

struct cluster_options {
    algorithm algo = algorithm::multilevel;
    taco::core_id cores = 2;
    execution_mode platform = execution_mode::threads;
    controller_kind controller = controller_kind::timestamp;
    maps_kind maps = maps_kind::mix;
    /// Greedy: at most this many moves (0: none, the singletons' Q); unset:
    /// until no move gains. An optional, not 0 for "unset": --max-steps 0
    /// once ran to convergence.
    std::optional<std::uint64_t> max_steps{};
    std::uint64_t seed = 1;
    double effort = 1; ///< multilevel: more rounds on small graphs (see ensemble_search.hpp)
    std::uint32_t members = 0; ///< multilevel: ensemble members; 0: by size and cores (ensemble_members)
    /// multilevel: a member's work per round; by_size: by the graph's size and the effort (schedule_for)
    ensemble_schedule schedule = ensemble_schedule::by_size;
    /// multilevel: where the members run; by_size: on core 0 on small graphs (members_on_core0)
    member_placement placement = member_placement::by_size;
    /// Called on core 0 as the search goes: (steps, Q, clusters).
    std::function<void(std::uint64_t, double, vertex)> progress;
    /// Greedy: a clock of the platform's read around the steps (greedy_params::ticks).
    std::uint64_t (*ticks)() = nullptr;
    /// Bytes of cached and of non-cached shared memory the run reserves
    /// (the platform's config.cached_bytes and non_cached_bytes); 0: sized
    /// from the graph (shared_memory_for). The CLI's --shared-memory.
    std::uint64_t shared_memory = 0;
};

/// Most shared memory a run may reserve per region: the POSIX platform
/// reserves at most 32 TiB of address space in all, and a run has two
/// regions of this size plus each core's private memory.
inline constexpr std::uint64_t max_shared_memory = std::uint64_t(8) << 40;

/// The shared memory a run on g reserves of each of cached and non-cached
/// memory: generous, since it is address space (only the pages MESH touches
/// cost memory), and the default 1 GiB once ran out at 50 million vertices
/// with an error naming a setting the CLI had no way to change. Per vertex
/// and per directed edge, with room for the searches' shared maps and the
/// chunks' slack, at least the platform's default of 1 GiB.
inline std::uint64_t shared_memory_for(const graph_data& g) {
    const std::uint64_t need = 512 * std::uint64_t(g.vertex_count()) + 64 * std::uint64_t(g.edge_count());
    return std::min(max_shared_memory, std::max(std::uint64_t(1) << 30, need));
}

/// The memory settings of a platform's config (posix, mpi, scc alike) for a
/// run on g: o.shared_memory or shared_memory_for(g) of cached and of
/// non-cached memory, and each core's private memory in proportion.
template <class Config>
void size_shared_memory(Config& cfg, const graph_data& g, const cluster_options& o, taco::core_id cores) {
    const std::uint64_t shared = o.shared_memory ? o.shared_memory : shared_memory_for(g);
    cfg.cached_bytes = shared;
    cfg.non_cached_bytes = shared;
    const std::uint64_t private_share = std::min(shared / 8, max_shared_memory / std::max<std::uint64_t>(cores, 1));
    cfg.private_bytes = std::max<std::uint64_t>(cfg.private_bytes, private_share);
}

struct cluster_result {
    double modularity = 0;
    vertex clusters = 0;
    std::uint64_t steps = 0; ///< greedy: moves; multilevel: ensemble rounds
    bool converged = false;
    double seconds = 0; ///< the clustering alone, without starting cores or building the shared graph
    std::uint64_t ticks = 0; ///< greedy: the steps on cluster_options::ticks
    std::vector<cluster> assignment;
    bool oversubscribed = false; ///< more cores than CPUs
    std::uint32_t members = 0;   ///< multilevel: the ensemble's members
    ensemble_schedule schedule = ensemble_schedule::thorough; ///< multilevel: the members' schedule (schedule_for)
    bool on_core0 = false;       ///< multilevel: the members ran one after the other on core 0 (members_on_core0)
    std::uint64_t iterations = 0; ///< multilevel: iterations on the graph, all members together
};

/// Check options against each other; throws std::invalid_argument saying what to change.
inline void check(const cluster_options& o) {
    if (o.cores < 1) throw std::invalid_argument("--cores must be at least 1");
    if (o.cores > 1024) throw std::invalid_argument("--cores " + std::to_string(o.cores) + ": at most 1024");
    if (o.shared_memory > max_shared_memory)
        throw std::invalid_argument("--shared-memory " + std::to_string(o.shared_memory) + ": at most " +
                                    std::to_string(max_shared_memory) + " bytes (8 TiB)");
    if (o.members > 1024) throw std::invalid_argument("--ensemble " + std::to_string(o.members) + ": at most 1024");
    if (o.members && o.algo != algorithm::multilevel)
        throw std::invalid_argument("--ensemble applies to the multilevel algorithm only");
    if (o.schedule != ensemble_schedule::by_size && o.algo != algorithm::multilevel)
        throw std::invalid_argument("--schedule applies to the multilevel algorithm only");
    if (o.max_steps && o.algo != algorithm::greedy)
        throw std::invalid_argument("--max-steps applies to the greedy algorithm only (--algorithm greedy); the "
                                    "multilevel search ends by --effort");
    if (o.controller == controller_kind::none && o.platform == execution_mode::processes && o.cores > 1)
        throw std::invalid_argument(
            "--controller none with --platform processes: each core process caches the shared graph privately, "
            "and without a controller the workers never see the master's moves; use --platform threads "
            "(coherent memory) or a controller (broadcast, overlapped, timestamp)");
}

namespace detail {

/// One variant's search on core 0 of running cores.
template <map_memory G, map_memory M, class C>
cluster_result cluster_variant(const graph_data& g, const cluster_options& o, const std::function<void()>& consumed) {
    if (o.algo == algorithm::greedy) {
        greedy_params p{.max_steps = o.max_steps, .progress = o.progress, .ticks = o.ticks, .data_consumed = consumed};
        greedy_result r = greedy_search<G, M, C>(g, p);
        return {r.modularity, r.clusters, r.steps, r.converged, r.seconds, r.ticks, std::move(r.assignment)};
    }
    ensemble_params p{.seed = o.seed,
                      .members = o.members,
                      .effort = o.effort,
                      .schedule = o.schedule,
                      .placement = o.placement,
                      .progress = o.progress,
                      .data_consumed = consumed};
    ensemble_result r = ensemble_search<G, M, C>(g, p);
    cluster_result out{r.modularity, r.clusters, r.rounds, true, r.seconds, 0, std::move(r.assignment)};
    out.members = r.members;
    out.schedule = r.schedule;
    out.on_core0 = r.on_core0;
    out.iterations = r.iterations;
    return out;
}

/// The variant o.controller and o.maps name, on core 0 of running cores.
/// Compiled once, in src/modularity (a file per map variant): it instantiates
/// both searches for every map variant and controller, and none of that
/// depends on the platform (the cores reach it through TACO's runtime), so
/// each program that clusters compiles only its platforms' taco::run.
/// `consumed` (if any) is called once the shared graph holds g.
cluster_result cluster_on_cores(const graph_data& g, const cluster_options& o, const std::function<void()>& consumed);

template <class Config>
cluster_result cluster_graph_on(const Config& cfg, const graph_data& g, const cluster_options& o,
                                const std::function<void()>& consumed) {
    // The readers refuse such graphs naming the file; a graph_data built by
    // hand is refused here, before any core starts.
    check_weight_spread(g.weight);
    cluster_result out;
    taco::run(cfg, [&] { out = detail::cluster_on_cores(g, o, consumed); });
    compact(out.assignment); // ids 0..k-1 in the order of each cluster's first vertex
    return out;
}

/// g without its edges (names and `weighted` kept): what a search leaves of a graph it was given to keep.
inline void release_edges(graph_data& g) {
    // Moved from, not assigned {}: that is an empty initializer list, which
    // keeps the capacity.
    g.first = std::vector<edge>{0};
    g.target = std::vector<vertex>();
    g.weight = std::vector<double>();
#if defined(__GLIBC__)
    // glibc keeps freed memory inside its heap resident (its trim threshold
    // has grown to twice the largest block freed by now, 32 MB on big
    // graphs, and the edges need not be at the heap's top); the members'
    // levels are allocated on other threads, in other arenas, so without
    // this the edges' pages stayed in the run's peak.
    ::malloc_trim(0);
#endif
}

} // namespace detail

/// As cluster_graph, on the platform `cfg` names, with its cores
/// (o.cores and o.platform are not read): the same algorithms and variants
/// on any platform, e.g. the emulated SCC (apps/scc_figures runs the greedy search there).
template <class Config>
cluster_result cluster_graph_on(const Config& cfg, const graph_data& g, const cluster_options& o) {
    return detail::cluster_graph_on(cfg, g, o, {});
}

/// As above, and g's edges are freed as soon as the graph is in MESH, so
/// that the run does not hold the graph twice (as read, and shared): g is
/// left with its names and `weighted` flag only (vertex_count() 0).
template <class Config>
cluster_result cluster_graph_on(const Config& cfg, graph_data&& g, const cluster_options& o) {
    return detail::cluster_graph_on(cfg, g, o, [&g] { detail::release_edges(g); });
}

namespace detail {
template <class Graph>
cluster_result cluster_graph(Graph&& g, const cluster_options& o) {
    check(o);
    tacomesh::posix::run_report report;
    tacomesh::posix::config cfg{.cores = o.cores, .report = &report, .mode = o.platform};
    // idle and pin unset: with more cores than free CPUs (oversubscribed,
    // or other work on the machine) waiting cores park instead of taking
    // the CPU from the ones computing (tacomesh/posix/host_load.hpp).
    size_shared_memory(cfg, g, o, o.cores);
    cluster_result out = cluster_graph_on(cfg, std::forward<Graph>(g), o);
    out.oversubscribed = report.oversubscribed;
    return out;
}
} // namespace detail

inline cluster_result cluster_graph(const graph_data& g, const cluster_options& o) { return detail::cluster_graph(g, o); }

/// As above, freeing g's edges once the graph is in MESH (g keeps its
/// names and `weighted` flag only): a caller that is done with the graph as read saves a
/// third of a run's peak memory on big graphs.
inline cluster_result cluster_graph(graph_data&& g, const cluster_options& o) {
    return detail::cluster_graph(std::move(g), o);
}

} // namespace modularity
