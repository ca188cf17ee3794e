#pragma once
// The edge loop of every search: f(u, w) for each out-edge v -> u of weight
// w, in edge order (so sums come out the same to the bit on any view).
// A view that stores its edges in pieces (shared_csr walks the shared
// graph's 4 KB chunks) offers a loop of its own, over plain arrays; the
// others are read through out_edges, target and weight.
#include <concepts>

#include <modularity/graph_data.hpp>

namespace modularity {

template <class Graph, class F>
    requires std::invocable<F&, vertex, double>
void for_each_neighbour(const Graph& g, vertex v, F&& f) {
    if constexpr (requires { g.for_each_neighbour(v, f); }) g.for_each_neighbour(v, f);
    else
        for (edge e : g.out_edges(v)) f(g.target(e), g.weight(e));
}

} // namespace modularity
