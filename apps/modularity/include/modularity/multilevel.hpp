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
//
// On the way down a level's clustering was locally optimal when it went up,
// and only what the coarser levels moved can have changed that: its local
// moving starts from the vertices that moved (moved_vertices) and their
// neighbours, not from every vertex. The sweeps over every vertex found
// little (on an LFR graph of 10^5 vertices, 26 moves on level 0 in 62 ms,
// 1 on level 1 in 39 ms); dropping them took 0.81-0.87x the time on LFR
// graphs of 5k-100k vertices but lost Q on R-MAT (0.0003 at scale 16).
// Restarting from the moved vertices, the search takes 0.90-0.95x the time
// on graphs of 5k-17k vertices, at the same Q (means of 30-100 seeds); where
// the coarse levels move much (big LFR graphs, R-MAT) it falls back to
// every vertex, and the time is the same (local_move's threshold).
#include <cstdint>
#include <utility>
#include <vector>

#include <modularity/local_moving.hpp>

namespace modularity {

namespace detail {

/// Which vertices of g left their cluster between two clusterings of it,
/// `before` and `after` (ids < vertex_count(), numbered independently): a
/// cluster of `after` and one of `before` are the same cluster if each holds
/// the most of the other's vertex weight among those it overlaps; a vertex
/// stayed if its two clusters are the same. A part that joined another
/// cluster, or split off from its own, moved; the clusters it left and
/// joined did not.
template <class Graph>
std::vector<std::uint8_t> moved_vertices(const Graph& g, const std::vector<cluster>& before,
                                         const std::vector<cluster>& after, workspace& ws) {
    const vertex n = g.vertex_count();
    const auto [first, members] = group_members(after, n);
    std::vector<cluster> origin(n), dest(n);
    std::vector<double> dest_weight(n, -1.0);
    ws.sums.resize(n);
    for (cluster a = 0; a < n; ++a) {
        if (first[a] == first[a + 1]) continue;
        ws.sums.start();
        for (vertex i = first[a]; i < first[a + 1]; ++i) ws.sums.add(before[members[i]], g.vertex_weight(members[i]));
        double most = -1.0;
        for (cluster b : ws.sums.touched()) {
            const double w = ws.sums[b];
            if (w > most) {
                most = w;
                origin[a] = b;
            }
            if (w > dest_weight[b]) {
                dest_weight[b] = w;
                dest[b] = a;
            }
        }
    }
    std::vector<std::uint8_t> moved(n);
    for (vertex v = 0; v < n; ++v) moved[v] = !(origin[after[v]] == before[v] && dest[before[v]] == after[v]);
    return moved;
}

} // namespace detail

/// Improve `of` (a clustering of g, ids < vertex_count()) by one multilevel
/// iteration.
template <class Graph>
void multilevel_iteration(const Graph& g0, std::vector<cluster>& of, rng& r, workspace& ws) {
    std::vector<coarse_graph_t<Graph>> levels; // levels[i]: the graph of level i + 1
    std::vector<std::vector<cluster>> up; // up[i][v]: the level-(i+1) vertex of level-i vertex v
    std::vector<std::vector<cluster>> carried; // carried[i]: level i+1's clustering as it came up (level i's clusters)
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
            carried.push_back(next);
            p = std::move(next);
            return true;
        });
        if (!coarser) break;
    }
    for (std::size_t i = levels.size(); i-- > 0;) {
        const std::vector<std::uint8_t> coarse_moved = detail::moved_vertices(levels[i], carried[i], p, ws);
        std::vector<cluster> fine(up[i].size());
        std::vector<std::uint8_t> moved(up[i].size());
        for (vertex v = 0; v < fine.size(); ++v) {
            fine[v] = p[up[i][v]];
            moved[v] = coarse_moved[up[i][v]];
        }
        p = std::move(fine);
        on_level(i, [&](const auto& g) { local_move(g, p, r, ws, moved); });
    }
    of = std::move(p);
}

} // namespace modularity
