#pragma once
// The building blocks of the multilevel algorithm (multilevel.hpp), each on
// any graph view with vertex_count(), out_edges(v), target(e), weight(e),
// vertex_weight(v) and total_weight(): a level's private graph, the shared
// graph read in place (shared_csr.hpp), or the shared graph's reader proxy.
// The edge loops go through for_each_neighbour (neighbours.hpp).
//
//   local_move  vertex moving to the best neighbouring cluster until no move
//               gains, revisiting only the neighbours of moved vertices (the
//               Leiden algorithm's fast local moving; Rotta and Noack's
//               refinement step when run on every level on the way down);
//   refine      split each cluster into well-connected sub-clusters by
//               merging singletons greedily (Leiden's refinement with its
//               randomness parameter theta -> 0): the coarse graph is built
//               from the sub-clusters, so a part of a cluster can still
//               move to another cluster at the next level;
//   aggregate   the coarse graph: one vertex per sub-cluster, edge weights
//               summed, internal weight kept as a self-loop, so every
//               clustering of the coarse graph has the same Q as its
//               projection onto the fine one.
//
// Units: W = the sum of all directed edge weights (2m); moving v from its
// cluster C (v removed) to D gains (2/W) (f(v,D) - f(v,C) - w(v)(w(D) - w(C))/W).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include <modularity/detail/trimmed_array.hpp>
#include <modularity/graph_data.hpp>
#include <modularity/neighbour_sums.hpp>
#include <modularity/neighbours.hpp>
#include <modularity/shared_graph.hpp>

namespace modularity {

using cluster = std::uint32_t;

/// xoshiro256** (Blackman and Vigna): the shuffles of every level draw a
/// number per vertex, and std::mt19937_64 with uniform_int_distribution
/// cost 3-4% of a search in instructions; this is a few instructions per
/// draw and statistically more than good enough for visiting orders.
class rng {
public:
    using result_type = std::uint64_t;
    explicit rng(std::uint64_t seed) {
        for (auto& w : s_) { // splitmix64 spreads any seed over the state
            seed += 0x9e3779b97f4a7c15ull;
            std::uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            w = z ^ (z >> 31);
        }
    }
    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return ~result_type(0); }
    result_type operator()() noexcept {
        const std::uint64_t out = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return out;
    }
    /// Uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias is below
    /// 2^-32 for the vertex counts of a graph).
    std::uint32_t below(std::uint32_t n) noexcept {
        return std::uint32_t((((*this)() >> 32) * std::uint64_t(n)) >> 32);
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4];
};

/// A level's graph in private memory (the coarse levels of the hierarchy),
/// its edge weights of type W: double, or a count of edges (counted_level_graph).
template <class W>
struct basic_level_graph {
    /// Every weight a whole number of level-0 edges (coarse_graph_t).
    static constexpr bool counted_weights = std::is_integral_v<W>;
    using weight_type = W;

    std::vector<edge> first{0};
    detail::trimmed_array<vertex> targets;
    detail::trimmed_array<W> weights;
    std::vector<double> vweights;
    double total = 0;

    vertex vertex_count() const noexcept { return vertex(first.size() - 1); }
    edge edge_count() const noexcept { return edge(targets.size()); }
    edge_range out_edges(vertex v) const noexcept { return {first[v], first[v + 1]}; }
    vertex target(edge e) const noexcept { return targets[e]; }
    double weight(edge e) const noexcept { return double(weights[e]); }
    double vertex_weight(vertex v) const noexcept { return vweights[v]; }
    double total_weight() const noexcept { return total; }
};
using level_graph = basic_level_graph<double>;
/// Above a graph whose weights are all 1, a coarse edge's weight is the
/// number of directed level-0 edges it stands for: fewer than 2^32 (edge ids
/// are 32-bit), so exact in an edge-sized integer, and a coarse edge takes 8
/// bytes instead of 12. The coarse levels are most of a member's memory: on
/// LFR graphs with mixing 0.5 level 1 keeps 80 % of the edges.
using counted_level_graph = basic_level_graph<edge>;

/// The type of the coarse levels above a Graph: counted weights above a
/// view that says its weights are counts (shared_csr of unit weights, a
/// counted level), doubles otherwise.
template <class Graph>
struct coarse_graph {
    using type = level_graph;
};
template <class Graph>
    requires(Graph::counted_weights)
struct coarse_graph<Graph> {
    using type = counted_level_graph;
};
template <class Graph>
using coarse_graph_t = typename coarse_graph<Graph>::type;

/// A private copy of any graph view.
template <class Graph>
level_graph private_copy(const Graph& g) {
    level_graph c;
    const vertex n = g.vertex_count();
    const edge m = g.edge_count();
    c.first.resize(std::size_t(n) + 1);
    c.vweights.resize(n);
    vertex* targets = c.targets.write(m);
    double* weights = c.weights.write(m);
    for (vertex v = 0; v < n; ++v) {
        c.first[v] = g.out_edges(v).first;
        c.vweights[v] = g.vertex_weight(v);
    }
    c.first[n] = m;
    for (edge e = 0; e < m; ++e) {
        targets[e] = g.target(e);
        weights[e] = g.weight(e);
    }
    c.targets.trim(m);
    c.weights.trim(m);
    c.total = g.total_weight();
    return c;
}

/// Scratch memory of one core's multilevel search, kept across levels and
/// iterations so that the hot loops never allocate.
struct workspace {
    neighbour_sums sums;
    std::vector<double> cw, rw, ext;
    std::vector<vertex> csize, rsize;
    std::vector<cluster> empty;
    std::vector<vertex> queue, order;
    std::vector<std::uint8_t> queued;
};

namespace detail {
inline void shuffle(std::vector<vertex>& order, rng& r) {
    for (auto i = std::uint32_t(order.size()); i > 1; --i) std::swap(order[i - 1], order[r.below(i)]); // Fisher-Yates
}
inline void shuffled_order(std::vector<vertex>& order, vertex n, rng& r) {
    order.resize(n);
    std::iota(order.begin(), order.end(), vertex(0));
    shuffle(order, r);
}

/// The vertices of each group (ids 0..k-1), by counting sort:
/// members[start[a] .. start[a + 1]) are group a's, in vertex order.
struct grouped {
    std::vector<vertex> start, members;
};
inline grouped group_members(const std::vector<cluster>& group, cluster k) {
    const auto n = vertex(group.size());
    grouped out{std::vector<vertex>(std::size_t(k) + 1, 0), std::vector<vertex>(n)};
    for (vertex v = 0; v < n; ++v) ++out.start[group[v] + 1];
    for (cluster a = 0; a < k; ++a) out.start[a + 1] += out.start[a];
    std::vector<vertex> fill(out.start.begin(), out.start.end() - 1);
    for (vertex v = 0; v < n; ++v) out.members[fill[group[v]]++] = v;
    return out;
}

/// local_move's loop, from the queue already in ws.queue (ws.queued marking
/// what is in it).
template <class Graph>
std::uint64_t local_move_queued(const Graph& g, std::vector<cluster>& of, workspace& ws) {
    const vertex n = g.vertex_count();
    const double total = g.total_weight();
    if (!(total > 0) || n < 2) return 0;
    const double inv = 1.0 / total;
    // A move must gain more than rounding can fake, or two equal options
    // could trade a vertex back and forth for ever.
    const double eps = 1e-13 * total;
    auto& cw = ws.cw;
    auto& csize = ws.csize;
    cw.assign(n, 0.0);
    csize.assign(n, 0);
    for (vertex v = 0; v < n; ++v) {
        cw[of[v]] += g.vertex_weight(v);
        ++csize[of[v]];
    }
    ws.empty.clear();
    for (cluster c = n; c-- > 0;)
        if (csize[c] == 0) ws.empty.push_back(c);
    ws.sums.resize(n);
    std::size_t head = 0;
    std::uint64_t moves = 0;
    while (head < ws.queue.size()) {
        const vertex v = ws.queue[head++];
        if (head > n && head * 2 > ws.queue.size()) { // compact the consumed front now and then
            ws.queue.erase(ws.queue.begin(), ws.queue.begin() + std::ptrdiff_t(head));
            head = 0;
        }
        ws.queued[v] = 0;
        const cluster from = of[v];
        const double wv = g.vertex_weight(v);
        ws.sums.start();
        for_each_neighbour(g, v, [&](vertex u, double w) {
            if (u != v) ws.sums.add(of[u], w);
        });
        cw[from] -= wv;
        --csize[from];
        const double stay = ws.sums[from] - wv * cw[from] * inv;
        cluster best = from;
        double best_gain = stay;
        for (cluster d : ws.sums.touched()) {
            const double gain = ws.sums[d] - wv * cw[d] * inv;
            if (gain > best_gain) {
                best_gain = gain;
                best = d;
            }
        }
        if (csize[from] > 0 && 0.0 > best_gain) { // alone is best: a new cluster
            best_gain = 0.0;
            best = ws.empty.back();
        }
        if (best != from && best_gain - stay <= eps) best = from;
        if (best != from && csize[best] == 0) ws.empty.pop_back();
        cw[best] += wv;
        ++csize[best];
        if (best == from) continue;
        of[v] = best;
        ++moves;
        if (csize[from] == 0) ws.empty.push_back(from);
        for_each_neighbour(g, v, [&](vertex u, double) {
            if (!ws.queued[u] && of[u] != best) {
                ws.queued[u] = 1;
                ws.queue.push_back(u);
            }
        });
    }
    return moves;
}
} // namespace detail

/// Move vertices to their best neighbouring cluster (or a new one) until no
/// move gains; `of` holds cluster ids < vertex_count(). Returns the moves made.
template <class Graph>
std::uint64_t local_move(const Graph& g, std::vector<cluster>& of, rng& r, workspace& ws) {
    const vertex n = g.vertex_count();
    if (!(g.total_weight() > 0) || n < 2) return 0;
    detail::shuffled_order(ws.queue, n, r); // the queue starts as every vertex, in random order
    ws.queued.assign(n, 1);
    return detail::local_move_queued(g, of, ws);
}

/// local_move after `of` was locally optimal and then only the `moved`
/// vertices (moved[v] != 0) changed clusters: the queue starts with them and
/// their neighbours in other clusters, in random order, as fast local moving
/// queues a moved vertex's neighbours. (Vertices that merely share a cluster
/// whose weight changed are not revisited, as in fast local moving.)
template <class Graph>
std::uint64_t local_move(const Graph& g, std::vector<cluster>& of, rng& r, workspace& ws,
                         const std::vector<std::uint8_t>& moved) {
    const vertex n = g.vertex_count();
    if (!(g.total_weight() > 0) || n < 2) return 0;
    // Where the moved vertices times the average degree reach half the
    // vertices, their neighbours are most of the graph, and finding them is
    // a pass over the moved vertices' edges on top: every vertex it is (on
    // LFR graphs of 10^5 vertices and mixing 0.5 the coarse levels move half
    // of level 0's vertices).
    const auto moved_count = std::count_if(moved.begin(), moved.end(), [](std::uint8_t m) { return m != 0; });
    if (double(moved_count) * double(g.edge_count()) >= 0.5 * double(n) * double(n)) return local_move(g, of, r, ws);
    ws.queued.assign(n, 0);
    ws.queue.clear();
    auto enqueue = [&](vertex u) {
        if (!ws.queued[u]) {
            ws.queued[u] = 1;
            ws.queue.push_back(u);
        }
    };
    for (vertex v = 0; v < n; ++v) {
        if (!moved[v]) continue;
        enqueue(v);
        for_each_neighbour(g, v, [&](vertex u, double) {
            if (of[u] != of[v]) enqueue(u);
        });
    }
    detail::shuffle(ws.queue, r);
    return detail::local_move_queued(g, of, ws);
}

/// Leiden's refinement (greedy): sub-clusters of each cluster of `of`,
/// grown from singletons by merging a well-connected singleton into the
/// well-connected sub-cluster of its own cluster it gains most joining.
/// Returns a sub-cluster id per vertex (ids < vertex_count()).
template <class Graph>
std::vector<cluster> refine(const Graph& g, const std::vector<cluster>& of, rng& r, workspace& ws) {
    const vertex n = g.vertex_count();
    const double total = g.total_weight();
    std::vector<cluster> sub(n);
    std::iota(sub.begin(), sub.end(), cluster(0));
    if (!(total > 0)) return sub;
    const double inv = 1.0 / total;
    auto& cw = ws.cw;
    auto& rw = ws.rw;
    auto& ext = ws.ext;
    auto& rsize = ws.rsize;
    cw.assign(n, 0.0);
    rw.resize(n);
    ext.assign(n, 0.0);
    rsize.assign(n, 1);
    for (vertex v = 0; v < n; ++v) {
        rw[v] = g.vertex_weight(v);
        cw[of[v]] += rw[v];
        for_each_neighbour(g, v, [&](vertex u, double w) { // ext: weight from the sub-cluster to the rest of its cluster
            if (u != v && of[u] == of[v]) ext[v] += w;
        });
    }
    ws.sums.resize(n);
    detail::shuffled_order(ws.order, n, r);
    for (vertex v : ws.order) {
        if (sub[v] != v || rsize[v] != 1) continue; // only singletons move
        const cluster c = of[v];
        const double wv = rw[v];
        if (!(ext[v] >= wv * (cw[c] - wv) * inv)) continue; // v is not well connected to its cluster
        ws.sums.start();
        for_each_neighbour(g, v, [&](vertex u, double w) {
            if (u != v && of[u] == c) ws.sums.add(sub[u], w);
        });
        cluster best = v;
        double best_gain = 0;
        for (cluster t : ws.sums.touched()) {
            if (!(ext[t] >= rw[t] * (cw[c] - rw[t]) * inv)) continue; // t is not well connected
            const double gain = ws.sums[t] - wv * rw[t] * inv;
            if (gain >= best_gain) {
                best_gain = gain;
                best = t;
            }
        }
        if (best == v) continue;
        sub[v] = best;
        ext[best] += ext[v] - 2 * ws.sums[best];
        rw[best] += wv;
        ++rsize[best];
        rsize[v] = 0;
    }
    return sub;
}

/// Renumber ids densely 0..k-1 in the order of first appearance; returns k.
/// Any ids: a member starts its combination round from the best clustering
/// scattered onto the coarse vertices, whose ids are the graph's (up to its
/// vertex count) while the vector has one per core group.
inline cluster compact(std::vector<cluster>& ids) {
    const std::size_t span = ids.empty() ? 0 : std::size_t(*std::max_element(ids.begin(), ids.end())) + 1;
    std::vector<cluster> map(span, cluster(-1));
    cluster k = 0;
    for (cluster& c : ids) {
        if (map[c] == cluster(-1)) map[c] = k++;
        c = map[c];
    }
    return k;
}

/// The coarse graph: vertex `group[v]` (ids 0..k-1) for each fine vertex v.
template <class Graph>
coarse_graph_t<Graph> aggregate(const Graph& g, const std::vector<cluster>& group, cluster k, workspace& ws) {
    using coarse = coarse_graph_t<Graph>;
    coarse c;
    c.total = g.total_weight();
    c.vweights.assign(k, 0.0);
    const auto [start, members] = detail::group_members(group, k);
    ws.sums.resize(k);
    // One pass, into arrays reserved at the fine level's edge count (a
    // coarse vertex has at most one edge per fine edge of its members) and
    // trimmed to what was written (detail/trimmed_array.hpp). A first pass
    // that counted each coarse vertex's edges, so that the arrays could be
    // allocated at their size, read every fine edge again: the search took
    // 1.03-1.25x as long with it, at a peak 0.05-1.0 MiB lower (graphs of
    // 30k-2M edges).
    c.first.assign(std::size_t(k) + 1, 0);
    vertex* targets = c.targets.write(g.edge_count());
    auto* weights = c.weights.write(g.edge_count());
    edge e = 0;
    for (cluster a = 0; a < k; ++a) {
        ws.sums.start();
        for (vertex i = start[a]; i < start[a + 1]; ++i)
            for_each_neighbour(g, members[i], [&](vertex u, double w) { ws.sums.add(group[u], w); });
        for (cluster b : ws.sums.touched()) {
            targets[e] = b;
            weights[e++] = static_cast<typename coarse::weight_type>(ws.sums[b]); // counted: a whole number below 2^32
        }
        c.first[a + 1] = e;
        for (vertex i = start[a]; i < start[a + 1]; ++i) c.vweights[a] += g.vertex_weight(members[i]);
    }
    c.targets.trim(e);
    c.weights.trim(e);
    return c;
}

} // namespace modularity
