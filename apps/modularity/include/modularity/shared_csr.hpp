#pragma once
// The shared graph read in place, as an adjacency array: a graph view (the
// interface local_moving.hpp's steps take) over the shared graph's chunks.
// Each ensemble member searches level 0 through one, so no member holds a
// copy of the graph's edges (they took 4 bytes a directed edge per member
// on unweighted graphs, 12 on weighted ones, and memory grew with the
// cores).
//
// Why not the reader proxy itself: its get checks bounds and looks up the
// chunk through the map object at every call, and the searches read every
// edge many times (through it they took 1.3-1.6x as long on cond-mat).
// Here the chunk tables are read once into private arrays (a pointer per
// 4 KB chunk, 1/512 of the data), and an edge's target is two loads: its
// chunk's address, then the value. The per-vertex first edges are copied
// (4 bytes a vertex), so that out_edges is two plain loads as well.
//
// The view holds the graph's reader proxy: in the MESH sense it reads the
// graph for its whole life (every part acquired once, as the composite's
// proxy does), which the static graph allows; the chunks' addresses are
// the same on every core (MESH allocates at one logical address), and on
// private-memory cores they are the core's view, made current by that
// acquire.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <modularity/shared_graph.hpp>

namespace modularity {

template <map_memory M, bool UnitWeights>
class shared_csr {
public:
    /// All weights 1: the coarse levels above count edges (coarse_graph_t).
    static constexpr bool counted_weights = UnitWeights;

    explicit shared_csr(const mesh::sharing_ptr<shared_graph<M>>& g)
        : reader_(std::make_unique<reader>(g)), n_(reader_->vertex_count()), m_(reader_->edge_count()),
          total_(reader_->total_weight()) {
        const auto& r = *reader_;
        // Unit weights are not stored (shared_graph.hpp), so the view must match the graph.
        if (UnitWeights != r.unit_weights())
            throw std::logic_error(std::string("modularity::shared_csr: a ") + (UnitWeights ? "unit-weight" : "weighted") +
                                   " view of a graph " + (UnitWeights ? "with other weights" : "whose weights are all 1"));
        first_.resize(std::size_t(n_) + 1);
        for (vertex v = 0; v < n_; ++v) first_[v] = r.first_edges().get(v);
        first_[n_] = m_;
        table(r.targets(), targets_);
        table(r.vertex_weights(), vweights_);
        if constexpr (!UnitWeights) table(*r.edge_weights(), weights_);
    }

    vertex vertex_count() const noexcept { return n_; }
    edge edge_count() const noexcept { return m_; }
    edge_range out_edges(vertex v) const noexcept { return {first_[v], first_[v + 1]}; }
    vertex target(edge e) const noexcept { return at(targets_, e); }
    double weight([[maybe_unused]] edge e) const noexcept {
        if constexpr (UnitWeights) return 1.0;
        else return at(weights_, e);
    }
    double vertex_weight(vertex v) const noexcept { return at(vweights_, v); }
    double total_weight() const noexcept { return total_; }

    /// f(u, w) for each out-edge of v (for_each_neighbour, neighbours.hpp):
    /// run by run within a chunk, over plain pointers, so the hot loops pay
    /// the chunk lookup once a run rather than once an edge.
    template <class F>
    void for_each_neighbour(vertex v, F&& f) const {
        // A run ends where a targets' chunk ends, or a weights' one: the
        // smaller chunk (doubles) divides the larger (uint32).
        constexpr edge run = UnitWeights ? per_chunk<vertex> : per_chunk<double>;
        for (edge e = first_[v], end = first_[v + 1]; e < end;) {
            const edge stop = std::min<edge>(end, (e | (run - 1)) + 1);
            const vertex* t = &at_ref(targets_, e);
            if constexpr (UnitWeights) {
                for (const vertex* last = t + (stop - e); t != last; ++t) f(*t, 1.0);
            } else {
                const double* w = &at_ref(weights_, e);
                for (const vertex* last = t + (stop - e); t != last; ++t, ++w) f(*t, *w);
            }
            e = stop;
        }
    }

private:
    using reader = typename shared_graph<M>::reader_proxy;
    template <class V>
    static constexpr std::size_t per_chunk = mesh::chunked_map<std::uint32_t, V, M>::per_chunk;
    static_assert(std::has_single_bit(per_chunk<vertex>) && std::has_single_bit(per_chunk<double>),
                  "shared_csr: a chunk's value count must be a power of two (a shift and a mask per read)");

    template <class V>
    static const V& at_ref(const std::vector<const V*>& chunks, std::uint32_t i) noexcept {
        constexpr unsigned shift = std::countr_zero(per_chunk<V>);
        return chunks[i >> shift][i & (per_chunk<V> - 1)];
    }
    template <class V>
    static V at(const std::vector<const V*>& chunks, std::uint32_t i) noexcept { return at_ref(chunks, i); }

    template <class Proxy, class V>
    static void table(const Proxy& map, std::vector<const V*>& out) {
        out.resize(map.chunk_count());
        for (std::size_t c = 0; c < out.size(); ++c) out[c] = map.chunk(c).data();
    }

    std::unique_ptr<reader> reader_; ///< held for the view's life: the chunks stay acquired
    vertex n_;
    edge m_;
    double total_;
    std::vector<edge> first_;
    std::vector<const vertex*> targets_;
    std::vector<const double*> vweights_;
    struct no_weights {};
    [[no_unique_address]] std::conditional_t<UnitWeights, no_weights, std::vector<const double*>> weights_;
};

} // namespace modularity
