#pragma once
// One multilevel iteration (local_moving.hpp has the steps): coarsen as the
// Leiden algorithm does (local moving, refinement into well-connected
// sub-clusters, aggregation by the sub-clusters with the clusters carried
// up), then on the way back down refine by local moving on every level,
// coarse to fine (Rotta and Noack's multilevel refinement), so that moves
// at every scale, down to single vertices, can repair what coarser levels
// decided. Iterating from the result keeps improving it: the next
// iteration's refinement splits the clusters again, and the sub-clusters
// may change sides.
#include <utility>
#include <vector>

#include <modularity/local_moving.hpp>

namespace modularity {

/// Improve `of` (a clustering of g, ids < vertex_count()) by one multilevel
/// iteration.
template <class Graph>
void multilevel_iteration(const Graph& g0, std::vector<cluster>& of, rng& r, workspace& ws) {
    std::vector<coarse_graph_t<Graph>> levels; // levels[i]: the graph of level i + 1
    std::vector<std::vector<cluster>> up; // up[i][v]: the level-(i+1) vertex of level-i vertex v
    std::vector<cluster> p = std::move(of);
    auto on_level = [&](std::size_t i, auto&& f) {
        if (i == 0) return f(g0);
        return f(levels[i - 1]);
    };
    for (;;) {
        const bool coarser = on_level(levels.size(), [&](const auto& g) {
            const vertex n = g.vertex_count();
            local_move(g, p, r, ws);
            std::vector<cluster> clusters = p;
            const cluster k = compact(clusters);
            if (k == n) return false; // every cluster one vertex: nothing left to coarsen
            std::vector<cluster> sub = refine(g, p, r, ws);
            cluster ks = compact(sub);
            if (ks == n) { // no sub-cluster formed: coarsen by the clusters themselves
                sub = clusters;
                ks = k;
            }
            std::vector<cluster> next(ks);
            for (vertex v = 0; v < n; ++v) next[sub[v]] = clusters[v];
            levels.push_back(aggregate(g, sub, ks, ws));
            up.push_back(std::move(sub));
            p = std::move(next);
            return true;
        });
        if (!coarser) break;
    }
    for (std::size_t i = levels.size(); i-- > 0;) {
        std::vector<cluster> fine(up[i].size());
        for (vertex v = 0; v < fine.size(); ++v) fine[v] = p[up[i][v]];
        p = std::move(fine);
        on_level(i, [&](const auto& g) { local_move(g, p, r, ws); });
    }
    of = std::move(p);
}

} // namespace modularity
