#pragma once
// The graph in MESH, as the MESH paper composes it (section II.B, Figures 2
// and 3): two index spaces, vertices and (directed) edges, and mappings on
// them: those that connect them (vertex -> its first out-edge, edge -> its
// target) and the weights (vertex -> weighted degree, edge -> weight).
// Every part is its own shared object, a range_space or a chunked_map in
// memory mode M (the paper's DCM, NCM, WT). Two of the paper's mappings are
// derived rather than stored, since they cost memory per directed edge and
// no search reads them in a loop: edge -> source (a binary search of the
// first-edge mapping), and edge -> weight when every weight is 1 (on
// unweighted graphs; shared_graph::unit_weights). Stored, they took 12 of
// the 16 bytes a directed edge took here.
//
// The composite is a shared object too: the sharing pointers of its parts.
// Reading the graph part by part would acquire and release a part at every
// call; its reader proxy (section III.C, "the graph reader access proxy")
// acquires every part once and offers the navigation:
//
//   auto g = modularity::make_shared_graph<mesh::map_memory::dcm, mesh::controllers::broadcast>(data);
//   { auto r = mesh::read(g); for (auto e : r.out_edges(v)) sum += r.weight(e); }
//   modularity::destroy_shared_graph(g);
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <mesh/mesh.hpp>
#include <modularity/graph_data.hpp>

namespace modularity {

using mesh::map_memory;

namespace detail {
/// Fill a map's first n values under its writer proxy, value(i) at i, a
/// chunk's worth at a time (the proxy's range set: one check, stamp and
/// write-back per chunk, not per value).
template <class Map, class Value>
void fill(const mesh::sharing_ptr<Map>& map, std::size_t n, Value value) {
    using V = typename Map::value_type;
    auto w = mesh::write(map);
    V buffer[Map::per_chunk];
    for (std::size_t first = 0; first < n; first += Map::per_chunk) {
        const std::size_t run = std::min(Map::per_chunk, n - first);
        for (std::size_t i = 0; i < run; ++i) buffer[i] = value(first + i);
        w.set(typename Map::key_type(first), std::span<const V>(buffer, run));
    }
}
} // namespace detail

/// Half-open range of edge indices, iterable.
struct edge_range {
    edge first, last;
    mesh::range_space::iterator begin() const noexcept { return mesh::range_space::iterator(first); }
    mesh::range_space::iterator end() const noexcept { return mesh::range_space::iterator(last); }
    edge size() const noexcept { return last - first; }
};

template <map_memory M>
class shared_graph {
public:
    template <class V>
    using map = mesh::chunked_map<std::uint32_t, V, M>;

    mesh::sharing_ptr<mesh::range_space> vertices, edges;
    mesh::sharing_ptr<map<edge>> first_edge;    ///< vertex -> its first out-edge
    mesh::sharing_ptr<map<vertex>> edge_target; ///< edge -> the vertex it ends at
    mesh::sharing_ptr<map<double>> vertex_weight;
    mesh::sharing_ptr<map<double>> edge_weight; ///< edge -> its weight; null where every weight is 1 (unit_weights)
    double total_weight = 0; ///< 2m, in the scaled units
    bool weighted = false;
    /// Every edge weighs exactly 1 here. Not the same as !weighted: an edge
    /// list's repeated or reciprocal lines add up to weights of 2 and more.
    bool unit_weights = false;
    /// The weights here are the data's times 2^weight_shift, the largest in
    /// [1, 2) (graph_data.hpp: the range of the weights); Q is the same.
    int weight_shift = 0;

    /// The whole graph for reading, acquired once.
    class reader_proxy {
    public:
        explicit reader_proxy(const mesh::sharing_ptr<shared_graph>& g)
            : self_(g), vertices_(self_->vertices), edges_(self_->edges), first_(self_->first_edge),
              target_(self_->edge_target), vweight_(self_->vertex_weight) {
            if (self_->edge_weight) eweight_.emplace(self_->edge_weight);
        }

        vertex vertex_count() const noexcept { return vertex(vertices_.size()); }
        edge edge_count() const noexcept { return edge(edges_.size()); }
        auto vertices() const noexcept { return edge_range{0, vertex_count()}; }
        edge_range out_edges(vertex v) const {
            return {first_.get(v), v + 1 < vertex_count() ? first_.get(v + 1) : edge_count()};
        }
        /// The vertex e starts at: the last whose first out-edge is <= e.
        vertex source(edge e) const {
            check(e);
            vertex lo = 0, hi = vertex_count(); // first_.get(lo) <= e < first_.get(hi), first_.get(n) = m
            while (hi - lo > 1) {
                const vertex mid = lo + (hi - lo) / 2;
                (first_.get(mid) <= e ? lo : hi) = mid;
            }
            return lo;
        }
        vertex target(edge e) const { return target_.get(e); }
        double weight(edge e) const {
            if (eweight_) return eweight_->get(e);
            check(e);
            return 1.0;
        }
        /// The sum of v's out-edges' weights (its weighted degree).
        double vertex_weight(vertex v) const { return vweight_.get(v); }
        double total_weight() const noexcept { return self_->total_weight; }
        bool weighted() const noexcept { return self_->weighted; }
        bool unit_weights() const noexcept { return self_->unit_weights; }

        /// The parts, for views that read them chunk by chunk (shared_csr.hpp).
        const typename map<edge>::reader_proxy& first_edges() const noexcept { return first_; }
        const typename map<vertex>::reader_proxy& targets() const noexcept { return target_; }
        const typename map<double>::reader_proxy& vertex_weights() const noexcept { return vweight_; }
        /// Null where every weight is 1.
        const typename map<double>::reader_proxy* edge_weights() const noexcept { return eweight_ ? &*eweight_ : nullptr; }

    private:
        /// The derived mappings' bounds, as the stored ones check theirs.
        void check(edge e) const {
            if (e >= edge_count()) [[unlikely]]
                throw std::out_of_range("modularity::shared_graph: edge " + std::to_string(e) + " of a graph of " +
                                        std::to_string(edge_count()) + " directed edges");
        }

        mesh::reader<shared_graph> self_;
        mesh::range_space::reader_proxy vertices_, edges_;
        typename map<edge>::reader_proxy first_;
        typename map<vertex>::reader_proxy target_;
        typename map<double>::reader_proxy vweight_;
        std::optional<typename map<double>::reader_proxy> eweight_;
    };
};

/// Put `data` into MESH: every part under controller C, maps in memory M,
/// the weights scaled by a power of two so that the largest lies in [1, 2)
/// (the searches' products of two weights neither overflow nor underflow;
/// graph_data.hpp). Weights already there, as in unweighted graphs, stay
/// as they are, bit for bit.
template <map_memory M, class C>
mesh::sharing_ptr<shared_graph<M>> make_shared_graph(const graph_data& data) {
    using G = shared_graph<M>;
    const vertex n = data.vertex_count();
    const edge m = data.edge_count();
    const int shift = weight_shift(data.weight);
    // ldexp, not a multiplication: 2^shift itself may not be a double (a
    // largest weight of 1e-310 needs 2^1030).
    auto weight = [&](edge e) { return std::ldexp(data.weight[e], shift); };
    // Summed in graph_data's order, so that unscaled graphs keep its sums exactly.
    std::vector<double> vweight(n, 0.0);
    double total = 0;
    for (vertex v = 0; v < n; ++v)
        for (edge e = data.first[v]; e < data.first[v + 1]; ++e) vweight[v] += weight(e);
    for (edge e = 0; e < m; ++e) total += weight(e);
    G parts;
    parts.unit_weights = std::all_of(data.weight.begin(), data.weight.end(), [&](double w) { return std::ldexp(w, shift) == 1.0; });
    parts.vertices = mesh::make_shared_object<mesh::range_space, C>(n);
    parts.edges = mesh::make_shared_object<mesh::range_space, C>(m);
    parts.first_edge = mesh::make_mapping<typename G::template map<edge>, C>(parts.vertices);
    parts.vertex_weight = mesh::make_mapping<typename G::template map<double>, C>(parts.vertices);
    parts.edge_target = mesh::make_mapping<typename G::template map<vertex>, C>(parts.edges);
    if (!parts.unit_weights) parts.edge_weight = mesh::make_mapping<typename G::template map<double>, C>(parts.edges);
    detail::fill(parts.first_edge, n, [&](std::size_t v) { return data.first[v]; });
    detail::fill(parts.vertex_weight, n, [&](std::size_t v) { return vweight[v]; });
    detail::fill(parts.edge_target, m, [&](std::size_t e) { return data.target[e]; });
    if (parts.edge_weight) detail::fill(parts.edge_weight, m, [&](std::size_t e) { return weight(edge(e)); });
    parts.total_weight = total;
    parts.weighted = data.weighted;
    parts.weight_shift = shift;
    return mesh::make_shared_object<G, C>(parts);
}

template <map_memory M>
void destroy_shared_graph(mesh::sharing_ptr<shared_graph<M>>& g) {
    shared_graph<M> parts = mesh::reader<shared_graph<M>>(g).get(); // the parts' pointers, not their proxies
    mesh::destroy_shared_object(g);
    mesh::destroy_shared_object(parts.edge_weight);
    mesh::destroy_shared_object(parts.edge_target);
    mesh::destroy_shared_object(parts.vertex_weight);
    mesh::destroy_shared_object(parts.first_edge);
    mesh::destroy_shared_object(parts.edges);
    mesh::destroy_shared_object(parts.vertices);
}

} // namespace modularity
