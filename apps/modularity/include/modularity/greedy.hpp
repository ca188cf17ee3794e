#pragma once
// Globally greedy vertex moving (MESH paper, section II.A and Figure 1), in
// parallel as the paper runs it: every core is a worker that evaluates the
// gains of moving its share of the vertices against the shared graph and
// clustering; a taco::reduce with the "best move" combiner finds the best
// move of all; the master (core 0) applies it through writer proxies, and
// the consistency controller makes it visible before the next step's
// readers. Repeat until no move gains more than min_gain.
//
// Moving v from cluster C to D changes Q by
//   dQ = 2 (f(v,D) - f(v,C\v)) / f(V,V)  -  2 w(v) (w(D) - w(C\v)) / w(V)^2
// and only clusters adjacent to v, or a new (empty) one, can be best.
//
// Ties break by the lowest vertex id, then the lowest cluster id, and every
// vertex's gains are computed by one core in its edge order, so the moves,
// and the result, are the same for every core count, map variant,
// controller and platform.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <optional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <taco/taco.hpp>
#include <mesh/mesh.hpp>
#include <modularity/detail/unwind_guard.hpp>
#include <modularity/neighbour_sums.hpp>
#include <modularity/quality.hpp>
#include <modularity/shared_clustering.hpp>
#include <modularity/shared_graph.hpp>

namespace modularity {

/// A proposed move: vertex v to cluster `to`, gaining `gain`.
struct best_move {
    static constexpr vertex none = std::numeric_limits<vertex>::max();
    double gain = -std::numeric_limits<double>::infinity();
    vertex v = none;
    cluster to = none;
    bool found() const noexcept { return v != none; }
};

/// a before b: higher gain; equal gains: lower vertex, then lower cluster.
/// A total order, so the combiner below is associative and its result does
/// not depend on how the reduction tree groups the workers.
inline bool better(const best_move& a, const best_move& b) noexcept {
    if (a.gain != b.gain) return a.gain > b.gain;
    if (a.v != b.v) return a.v < b.v;
    return a.to < b.to;
}

/// The "best move" combiner of the paper's reduction.
struct best_of {
    best_move operator()(const best_move& a, const best_move& b) const noexcept { return better(b, a) ? b : a; }
};

/// The gains of moving a vertex, from its neighbourhood's sums f(v, D).
/// Private to its core.
class gain_scan {
public:
    explicit gain_scan(vertex clusters) { sums_.resize(clusters); }

    /// The best move of v (or none found).
    template <class Graph, class Clustering>
    best_move best_for(const Graph& g, const Clustering& c, vertex v) {
        const cluster from = c.of(v);
        collect(g, c, v);
        const double total = g.total_weight(), wv = g.vertex_weight(v);
        if (!(total > 0)) return {}; // no edge weight at all: every clustering has Q = 0
        const double f_from = sums_[from];
        const double w_from = c.weight(from) - wv;
        best_move best;
        auto consider = [&](cluster to, double f_to, double w_to) {
            const best_move m{gain(total, wv, f_to, f_from, w_to, w_from), v, to};
            if (better(m, best)) best = m;
        };
        for (cluster d : sums_.touched())
            if (d != from) consider(d, sums_[d], c.weight(d));
        // A new cluster: only for a vertex that is not alone already.
        if (c.size(from) > 1 && c.first_empty() < c.capacity()) consider(c.first_empty(), 0.0, 0.0);
        return best;
    }

    /// The gain of moving v to `to` (the master's check of a proposal).
    template <class Graph, class Clustering>
    double gain_of(const Graph& g, const Clustering& c, vertex v, cluster to) {
        const cluster from = c.of(v);
        collect(g, c, v);
        return gain(g.total_weight(), g.vertex_weight(v), sums_[to], sums_[from], c.weight(to),
                    c.weight(from) - g.vertex_weight(v));
    }

private:
    // The order of operations is part of the result: equal gains must come
    // out bit-identical on every core to break ties the same way.
    static double gain(double total, double wv, double f_to, double f_from, double w_to, double w_from) noexcept {
        return 2 * (f_to - f_from) / total - 2 * (wv * w_to - wv * w_from) / total / total;
    }

    template <class Graph, class Clustering>
    void collect(const Graph& g, const Clustering& c, vertex v) {
        sums_.start();
        for (edge e : g.out_edges(v))
            if (const vertex u = g.target(e); u != v) // a self-loop stays inside whichever cluster v is in
                sums_.add(c.of(u), g.weight(e));
    }

    neighbour_sums sums_;
};

/// One core's worker: its share of the vertices, first..last-1.
template <map_memory G, map_memory M>
class greedy_worker {
public:
    greedy_worker(mesh::sharing_ptr<shared_graph<G>> graph, mesh::sharing_ptr<shared_clustering<M>> clustering,
                  vertex first, vertex last, vertex clusters)
        : graph_(graph), clustering_(clustering), first_(first), last_(last), scan_(clusters) {}

    /// Figure 1, line 1, for this core's vertices: one acquire of the
    /// graph and one of the clustering per step (the composite proxies).
    best_move best() {
        const auto g = mesh::read(graph_);
        const auto c = mesh::read(clustering_);
        best_move b;
        for (vertex v = first_; v < last_; ++v) {
            const best_move m = scan_.best_for(g, c, v);
            if (better(m, b)) b = m;
        }
        return b;
    }

private:
    mesh::sharing_ptr<shared_graph<G>> graph_;
    mesh::sharing_ptr<shared_clustering<M>> clustering_;
    vertex first_, last_;
    gain_scan scan_;
};

struct greedy_params {
    std::optional<std::uint64_t> max_steps{}; ///< unset: until no move gains more than min_gain
    double min_gain = 1e-12;
    /// Called on core 0 after each step: (steps so far, Q, clusters).
    std::function<void(std::uint64_t, double, vertex)> progress;
    /// A clock of the platform's, read where `seconds` starts and ends (the
    /// emulated SCC's modelled cycles: tacomesh::scc::emulated::cycles).
    std::uint64_t (*ticks)() = nullptr;
    /// Called on core 0 once the graph is in MESH (ensemble_params::data_consumed).
    std::function<void()> data_consumed;
};

struct greedy_result {
    double modularity = 0;      ///< recomputed from scratch at the end
    double tracked = 0;         ///< initial Q plus the gains of the moves
    vertex clusters = 0;
    std::uint64_t steps = 0;
    bool converged = false;     ///< stopped because no move gained enough (not max_steps)
    double seconds = 0;         ///< the search steps alone (as the paper measured)
    std::uint64_t ticks = 0;    ///< the same steps on greedy_params::ticks
    std::vector<cluster> assignment; ///< cluster per vertex, ids as the search left them
};

/// The data the moves change diverged between cores: a controller is
/// missing (none on private memory) or broken.
class stale_data_error : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Split 0..n-1 into `parts` consecutive ranges of about equal work (one
/// unit per vertex and per edge). Returns parts+1 boundaries.
template <class Graph>
std::vector<vertex> split_by_work(const Graph& g, unsigned parts) {
    const vertex n = g.vertex_count();
    const double total = double(n) + double(g.edge_count());
    std::vector<vertex> bounds{0};
    vertex v = 0;
    for (unsigned p = 1; p < parts; ++p) {
        const double goal = total * p / parts;
        while (v < n && double(v) + double(g.out_edges(v).first) < goal) ++v;
        bounds.push_back(v);
    }
    bounds.push_back(n);
    return bounds;
}

namespace detail {
inline std::string num(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}
} // namespace detail

/// The workers found no move worth making: the master confirms it on its
/// own view. A worker that reads stale data may find nothing (zero weights
/// in a view never refreshed) where there is something, and stop the
/// search early with a wrong answer that is consistent with itself.
template <map_memory G, map_memory M>
void check_converged(const mesh::sharing_ptr<shared_graph<G>>& graph,
                     const mesh::sharing_ptr<shared_clustering<M>>& clustering, gain_scan& scan, double min_gain) {
    const auto g = mesh::read(graph);
    const auto c = mesh::read(clustering);
    for (vertex v = 0; v < g.vertex_count(); ++v)
        if (const best_move m = scan.best_for(g, c, v); m.found() && m.gain > min_gain)
            throw stale_data_error("modularity: the workers found no move that gains more than " +
                                   detail::num(min_gain) + ", but the master's data has one (vertex " +
                                   std::to_string(v) + " to cluster " + std::to_string(m.to) + ", gain " +
                                   detail::num(m.gain) + "): the workers read stale data (controller '" +
                                   graph.controller() + "' does not keep this memory coherent)");
}

/// Run the search on the running cores (call on core 0 inside taco::run):
/// the graph and clustering are made here under controller C, graph maps in
/// memory G, clustering maps in M.
template <map_memory G, map_memory M, class C>
greedy_result greedy_search(const graph_data& data, const greedy_params& params) {
    using worker = greedy_worker<G, M>;
    auto graph = make_shared_graph<G, C>(data);
    const vertex n = data.vertex_count();
    if (params.data_consumed) params.data_consumed();
    auto clustering = make_shared_clustering<M, C>(graph);
    const taco::core_id cores = taco::core_count();

    std::vector<taco::global_ptr<worker>> workers;
    {
        const auto bounds = split_by_work(mesh::read(graph), cores);
        for (taco::core_id c = 0; c < cores; ++c)
            workers.push_back(taco::new_on<worker>(c, graph, clustering, bounds[c], bounds[c + 1], n).get());
    }
    auto group = taco::make_group(workers);
    auto teardown = [&] {
        taco::destroy_group(group);
        for (auto w : workers) taco::delete_on(w);
        destroy_shared_clustering(clustering);
        destroy_shared_graph(graph);
    };
    detail::unwind_guard guard(teardown);

    greedy_result r;
    gain_scan check(n);
    r.tracked = modularity_of(mesh::read(graph), [&, c = mesh::read(clustering)](vertex v) { return c.of(v); });
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t ticks0 = params.ticks ? params.ticks() : 0;
    for (;;) {
        if (params.max_steps && r.steps == *params.max_steps) break;
        const best_move m = taco::reduce(group, taco::m2f(&worker::best), best_of{}).get();
        if (!m.found() || m.gain <= params.min_gain) {
            check_converged(graph, clustering, check, params.min_gain);
            r.converged = true;
            break;
        }
        double wv = 0;
        {
            const auto g = mesh::read(graph);
            const auto c = mesh::read(clustering);
            const double mine = check.gain_of(g, c, m.v, m.to);
            if (std::abs(mine - m.gain) > 1e-9 * (1 + std::abs(mine)))
                throw stale_data_error("modularity: a worker proposed moving vertex " + std::to_string(m.v) +
                                       " to cluster " + std::to_string(m.to) + " for a gain of " +
                                       detail::num(m.gain) + ", the master's data says " + detail::num(mine) +
                                       ": the workers read stale data (controller '" + graph.controller() +
                                       "' does not keep this memory coherent)");
            wv = g.vertex_weight(m.v);
        }
        mesh::write(clustering).move(m.v, m.to, wv); // Figure 1, lines 3-8; the release publishes it
        r.tracked += m.gain;
        ++r.steps;
        if (params.progress) params.progress(r.steps, r.tracked, mesh::read(clustering).count());
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (params.ticks) r.ticks = params.ticks() - ticks0;

    {
        const auto c = mesh::read(clustering);
        r.clusters = c.count();
        r.assignment.resize(n);
        for (vertex v = 0; v < n; ++v) r.assignment[v] = c.of(v);
        r.modularity = modularity_of(mesh::read(graph), [&](vertex v) { return r.assignment[v]; });
    }
    if (std::abs(r.modularity - r.tracked) > 1e-9)
        throw std::logic_error("modularity: the tracked Q " + std::to_string(r.tracked) +
                               " differs from the Q recomputed from scratch " + std::to_string(r.modularity));

    guard.release();
    teardown();
    return r;
}

} // namespace modularity
