#pragma once
// Newman-Girvan modularity, from scratch: the check on every incrementally
// tracked Q, and the measure the tools we compare with report.
//
//   Q = sum over clusters c of  f(c, c) / f(V, V)  -  (w(c) / w(V))^2
//
// with f the summed weight of directed edges (each undirected edge twice)
// and w(c) the sum of c's vertices' weighted degrees (so w(V) = f(V, V)).
#include <concepts>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <modularity/graph_data.hpp>
#include <modularity/neighbours.hpp>
#include <modularity/shared_graph.hpp> // edge_range

namespace modularity {

using cluster = std::uint32_t;

/// Q of `of` (cluster per vertex) on any graph view with vertex_count(),
/// out_edges(v), target(e), weight(e) (graph_data via data_view, or a
/// shared graph's reader proxy).
template <class Graph, class ClusterOf>
    requires std::invocable<ClusterOf&, vertex>
double modularity_of(const Graph& g, ClusterOf&& of) {
    const vertex n = g.vertex_count();
    std::vector<double> weight(n, 0.0);
    double inside = 0, total = 0;
    for (vertex v = 0; v < n; ++v) {
        const cluster c = of(v);
        if (c >= n) throw std::invalid_argument("modularity: cluster id " + std::to_string(c) + " >= vertex count");
        for_each_neighbour(g, v, [&](vertex u, double w) {
            total += w;
            weight[c] += w;
            if (of(u) == c) inside += w;
        });
    }
    if (total <= 0) return 0; // no edges (or only zero weights): every clustering is as good as any
    double expected = 0;
    for (double w : weight) expected += (w / total) * (w / total);
    return inside / total - expected;
}

/// graph_data seen through the interface shared graphs' readers offer.
struct data_view {
    const graph_data& g;
    vertex vertex_count() const noexcept { return g.vertex_count(); }
    edge_range out_edges(vertex v) const noexcept { return {g.first[v], g.first[v + 1]}; }
    vertex target(edge e) const noexcept { return g.target[e]; }
    double weight(edge e) const noexcept { return g.weight[e]; }
    edge edge_count() const noexcept { return g.edge_count(); }
    double vertex_weight(vertex v) const noexcept { return g.vertex_weight(v); }
    double total_weight() const noexcept { return g.total_weight(); }
};

inline double modularity_of(const graph_data& g, std::span<const cluster> of) {
    if (of.size() != g.vertex_count())
        throw std::invalid_argument("modularity: " + std::to_string(of.size()) + " cluster ids for " +
                                    std::to_string(g.vertex_count()) + " vertices");
    return modularity_of(data_view{g}, [&](vertex v) { return of[v]; });
}

} // namespace modularity
