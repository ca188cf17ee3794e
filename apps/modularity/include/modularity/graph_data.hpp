#pragma once
// A graph as read from a file, before it goes into MESH (shared_graph.hpp):
// undirected, as a symmetric adjacency array (CSR). Each edge {u, v} is two
// directed edges, u -> v and v -> u, of its weight; a self-loop {v, v} is
// one of twice its weight. So the sum of a vertex's out-edges is its
// weighted degree, and the sum over all edges is 2m (m the total edge
// weight): the
// convention of Newman's modularity, igraph and networkx, which makes our Q
// comparable with theirs. The weights are the file's, in its units; the
// searches scale them (see the range of the weights, below).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace modularity {

using vertex = std::uint32_t;
/// A directed edge: each undirected edge is two (the MESH paper's M edges:
/// the world-trade graph's 4290 are its 2145 pairs, both ways).
using edge = std::uint32_t;

struct graph_data {
    std::vector<edge> first{0}; ///< out-edges of v: first[v] .. first[v+1]-1
    std::vector<vertex> target;
    std::vector<double> weight;
    /// The file's vertex names, if it had any (edge lists, Pajek labels):
    /// up to the last named vertex at most; name(v) numbers the rest.
    std::vector<std::string> names;
    bool weighted = false;          ///< the file gave edge weights

    vertex vertex_count() const noexcept { return vertex(first.size() - 1); }
    /// Directed edges (twice the undirected ones, less the self-loops).
    edge edge_count() const noexcept { return edge(target.size()); }
    /// Undirected edges (a self-loop counts once).
    std::size_t undirected_edge_count() const noexcept {
        std::size_t loops = 0;
        for (vertex v = 0; v < vertex_count(); ++v)
            for (edge e = first[v]; e < first[v + 1]; ++e) loops += target[e] == v;
        return (target.size() - loops) / 2 + loops;
    }
    double vertex_weight(vertex v) const noexcept {
        double s = 0;
        for (edge e = first[v]; e < first[v + 1]; ++e) s += weight[e];
        return s;
    }
    /// 2m: the sum of all directed edges' weights.
    double total_weight() const noexcept {
        double s = 0;
        for (double w : weight) s += w;
        return s;
    }
    std::string name(vertex v) const { return v < names.size() ? names[v] : std::to_string(v + 1); }
};

// ---- the range of the weights ----------------------------------------------
//
// The searches multiply two weights and divide by the total weight twice
// (w(v) w(D) / W^2): with weights of 1e160 that overflows to inf, with
// 1e-160 it underflows to 0, and the search went wrong without a word.
// Modularity does not change when every weight is scaled alike, so the
// searches work on the weights times the power of two that brings the
// largest into [1, 2) (make_shared_graph): exact in binary floating point,
// and none at all for weights already there (unweighted graphs), whose
// results stay bit-identical. What scaling cannot fix is a spread: with the
// largest weight in [1, 2) the smallest nonzero one must stay above
// 2^-max_weight_spread_log2, so that a product of two of them over W^2
// (W < 2^35: at most 2^32 directed edges of weight < 4) is still a normal
// double, above 2^-1022.

/// The widest ratio, as a power of two, of the largest to the smallest
/// nonzero weight of a graph the searches accept.
inline constexpr int max_weight_spread_log2 = 450;

/// The exponent k such that the largest of `weights` times 2^k lies in
/// [1, 2); 0 when they are all 0 (or there are none).
inline int weight_shift(std::span<const double> weights) noexcept {
    double largest = 0;
    for (double w : weights) largest = std::max(largest, w);
    return largest > 0 ? -std::ilogb(largest) : 0;
}

/// Throws std::range_error, saying what to do, when the smallest nonzero
/// weight is below the largest times 2^-max_weight_spread_log2 (see above);
/// the readers name the file in front of the message.
inline void check_weight_spread(double smallest_nonzero, double largest) {
    if (!(largest > 0) || std::ilogb(largest) - std::ilogb(smallest_nonzero) <= max_weight_spread_log2) return;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "the edge weights span too wide a range: the smallest nonzero weight is %.6g and the largest "
                  "%.6g, a ratio beyond 2^%d (about %.3g), so products of two weights leave the range of a double "
                  "however the weights are scaled; set the negligible weights to 0 or drop their edges, or "
                  "compress the range (e.g. use log(1 + w) as the weight)",
                  smallest_nonzero, largest, max_weight_spread_log2, std::ldexp(1.0, max_weight_spread_log2));
    throw std::range_error(buf);
}

inline void check_weight_spread(std::span<const double> weights) {
    double smallest = std::numeric_limits<double>::infinity(), largest = 0;
    for (double w : weights)
        if (w > 0) {
            smallest = std::min(smallest, w);
            largest = std::max(largest, w);
        }
    check_weight_spread(smallest, largest);
}

/// Collects undirected edges in any order, with repeats, and builds the
/// adjacency array: repeated pairs (u, v) and (v, u) add their weights,
/// which is how a directed edge list is symmetrised (w(u,v) = a(u,v) + a(v,u)).
class edge_collector {
public:
    explicit edge_collector(vertex n = 0) : n_(n) {}
    void ensure_vertices(vertex n) { n_ = std::max(n_, n); }
    void add(vertex u, vertex v, double w) {
        if (u > v) std::swap(u, v);
        edges_.push_back({u, v, w});
        n_ = std::max(n_, vertex(v + 1));
    }
    std::size_t lines() const noexcept { return edges_.size(); }
    /// Room for this many add calls (a file's declared edge count): grown
    /// by doubling, the list takes up to 2x its size, and 3x while it copies.
    void reserve(std::size_t lines) { edges_.reserve(lines); }

    graph_data build(bool weighted) && {
        std::sort(edges_.begin(), edges_.end(),
                  [](const item& a, const item& b) { return std::tie(a.u, a.v) < std::tie(b.u, b.v); });
        std::size_t k = 0; // merge repeats in place
        for (std::size_t i = 0; i < edges_.size(); ++i) {
            if (k > 0 && edges_[k - 1].u == edges_[i].u && edges_[k - 1].v == edges_[i].v)
                edges_[k - 1].w += edges_[i].w;
            else
                edges_[k++] = edges_[i];
        }
        edges_.resize(k);
        double sum = 0;
        for (const item& e : edges_) sum += 2 * e.w; // each pair both ways, a loop once at twice its weight
        if (!std::isfinite(sum))
            throw std::overflow_error("the edge weights add up to more than a double holds (scale them down)");
        {
            double smallest = std::numeric_limits<double>::infinity(), largest = 0;
            for (const item& e : edges_)
                if (e.w > 0) {
                    smallest = std::min(smallest, e.w);
                    largest = std::max(largest, e.w);
                }
            check_weight_spread(smallest, largest);
        }
        graph_data g;
        g.weighted = weighted;
        std::vector<std::uint64_t> degree(std::size_t(n_) + 1, 0);
        for (const item& e : edges_) {
            ++degree[e.u];
            if (e.u != e.v) ++degree[e.v];
        }
        std::uint64_t total = 0;
        g.first.assign(std::size_t(n_) + 1, 0);
        for (vertex v = 0; v < n_; ++v) {
            g.first[v] = edge(total);
            total += degree[v];
            if (total > std::numeric_limits<edge>::max())
                throw std::length_error("graph has more than 2^32 - 1 directed edges (about 2 billion undirected)");
        }
        g.first[n_] = edge(total);
        g.target.resize(total);
        g.weight.resize(total);
        std::vector<edge> next(g.first.begin(), g.first.end() - 1);
        // Sorted by (u, v), so filling a vertex's smaller neighbours first,
        // then its larger ones, leaves every vertex's entries sorted by target.
        auto put = [&](vertex a, vertex b, double w) {
            g.target[next[a]] = b;
            g.weight[next[a]++] = w;
        };
        for (const item& e : edges_)
            if (e.u != e.v) put(e.v, e.u, e.w);
        for (const item& e : edges_) put(e.u, e.v, e.u == e.v ? 2 * e.w : e.w);
        edges_.clear();
        edges_.shrink_to_fit();
        return g;
    }

private:
    struct item {
        vertex u, v;
        double w;
    };
    vertex n_;
    std::vector<item> edges_;
};

} // namespace modularity
