#pragma once
// A clustering of a shared graph's vertices in MESH (MESH paper, Figure 3):
// the index space of clusters, the mapping vertex -> cluster and the
// mappings cluster -> weight and size (observers of the cluster space). These are what a vertex move changes (Figure 1, lines 3-8), so
// the paper's Mix variant keeps them in write-through memory while the
// static graph is cached.
//
// Cluster ids are 0..n-1 (there are never more clusters than vertices); an
// empty cluster's id is free, and a move "to a new cluster" takes the lowest
// free id, which the composite keeps (first_empty), so that every core
// proposes the same id and ties break the same way everywhere.
#include <cstdint>
#include <span>

#include <mesh/mesh.hpp>
#include <modularity/shared_graph.hpp>

namespace modularity {

using cluster = std::uint32_t;

template <map_memory M>
class shared_clustering {
public:
    template <class V>
    using map = mesh::chunked_map<std::uint32_t, V, M>;

    mesh::sharing_ptr<mesh::range_space> clusters;
    mesh::sharing_ptr<map<cluster>> cluster_of;  ///< vertex -> its cluster
    mesh::sharing_ptr<map<double>> cluster_weight; ///< cluster -> the sum of its vertices' weights
    mesh::sharing_ptr<map<vertex>> cluster_size;   ///< cluster -> its vertex count (0: free id)
    cluster first_empty = 0;                       ///< the lowest free id (== cluster count: none)
    vertex nonempty = 0;                           ///< clusters with at least one vertex

    /// Its own bytes (the two counts, changed by every move) where its
    /// maps' are: write-through for wt maps (mesh::detail::object_memory).
    static mesh::memory_mode object_memory() { return map<cluster>::object_memory(); }

    class reader_proxy {
    public:
        explicit reader_proxy(const mesh::sharing_ptr<shared_clustering>& c)
            : self_(c), of_(self_->cluster_of), weight_(self_->cluster_weight), size_(self_->cluster_size) {}
        cluster of(vertex v) const { return of_.get(v); }
        double weight(cluster c) const { return weight_.get(c); }
        vertex size(cluster c) const { return size_.get(c); }
        /// The id a vertex moving to a new cluster gets (capacity(): none free).
        cluster first_empty() const noexcept { return self_->first_empty; }
        vertex count() const noexcept { return self_->nonempty; }
        cluster capacity() const noexcept { return cluster(size_.size()); }

    private:
        mesh::reader<shared_clustering> self_;
        typename map<cluster>::reader_proxy of_;
        typename map<double>::reader_proxy weight_;
        typename map<vertex>::reader_proxy size_;
    };

    /// The master's side of Figure 1, lines 3-8.
    class writer_proxy {
    public:
        explicit writer_proxy(const mesh::sharing_ptr<shared_clustering>& c)
            : self_(c), of_(self_.peek().cluster_of), weight_(self_.peek().cluster_weight),
              size_(self_.peek().cluster_size) {}
        cluster of(vertex v) const { return of_.get(v); }
        double weight(cluster c) const { return weight_.get(c); }
        vertex size(cluster c) const { return size_.get(c); }
        cluster first_empty() const noexcept { return self_.peek().first_empty; }

        /// Move v (of weight w) to cluster `to`: an existing cluster, or the
        /// lowest free id (a new cluster).
        void move(vertex v, cluster to, double w) {
            const cluster from = of_.get(v);
            if (from == to) return;
            const cluster capacity = cluster(size_.size());
            const bool created = size_.get(to) == 0;
            if (created && to != first_empty())
                throw std::logic_error("modularity: a new cluster must take the lowest free id " +
                                       std::to_string(first_empty()) + ", not " + std::to_string(to));
            of_.set(v, to);
            weight_.set(from, weight_.get(from) - w);
            weight_.set(to, weight_.get(to) + w);
            size_.set(to, size_.get(to) + 1);
            const vertex left = size_.get(from) - 1;
            size_.set(from, left);
            if (left == 0) weight_.set(from, 0.0); // an empty cluster weighs nothing, not a rounding residue
            if (created || left == 0) {
                shared_clustering& s = *self_;
                s.nonempty += created ? 1 : 0;
                s.nonempty -= left == 0 ? 1 : 0;
                if (left == 0 && from < s.first_empty) s.first_empty = from;
                if (created) { // the next free id above the one just taken
                    cluster c = to + 1;
                    while (c < capacity && size_.get(c) != 0) ++c;
                    s.first_empty = left == 0 && from < c ? from : c;
                }
            }
        }

    private:
        mesh::writer<shared_clustering> self_;
        typename map<cluster>::writer_proxy of_;
        typename map<double>::writer_proxy weight_;
        typename map<vertex>::writer_proxy size_;
    };
};

/// A clustering of `graph`'s vertices under controller C, maps in memory
/// M: singletons (cluster v = {v}), or `initial` (ids < vertex count).
template <map_memory M, class C, map_memory G>
mesh::sharing_ptr<shared_clustering<M>> make_shared_clustering(const mesh::sharing_ptr<shared_graph<G>>& graph,
                                                               std::span<const cluster> initial = {}) {
    using S = shared_clustering<M>;
    const auto g = mesh::reader<shared_graph<G>>(graph).get(); // the parts' pointers
    const vertex n = vertex(mesh::read(g.vertices).size());
    if (!initial.empty() && initial.size() != n)
        throw std::invalid_argument("modularity: an initial clustering of " + std::to_string(initial.size()) +
                                    " vertices for a graph of " + std::to_string(n));
    std::vector<double> weight(n, 0.0);
    std::vector<vertex> size(n, 0);
    {
        auto r = mesh::read(graph);
        for (vertex v = 0; v < n; ++v) {
            const cluster c = initial.empty() ? v : initial[v];
            if (c >= n) throw std::invalid_argument("modularity: cluster id " + std::to_string(c) + " >= vertex count");
            weight[c] += r.vertex_weight(v);
            ++size[c];
        }
    }
    S parts;
    parts.clusters = mesh::make_shared_object<mesh::range_space, C>(n);
    // Sized to the graph, not an observer of its vertex space: the graph is
    // fixed, and an observer would outlive a clustering destroyed before it.
    parts.cluster_of = mesh::make_shared_object<typename S::template map<cluster>, C>(n);
    parts.cluster_weight = mesh::make_mapping<typename S::template map<double>, C>(parts.clusters);
    parts.cluster_size = mesh::make_mapping<typename S::template map<vertex>, C>(parts.clusters);
    detail::fill(parts.cluster_of, n, [&](std::size_t v) { return initial.empty() ? cluster(v) : initial[v]; });
    detail::fill(parts.cluster_weight, n, [&](std::size_t c) { return weight[c]; });
    detail::fill(parts.cluster_size, n, [&](std::size_t c) { return size[c]; });
    parts.first_empty = n;
    parts.nonempty = 0;
    for (cluster c = n; c-- > 0;)
        if (size[c] == 0) parts.first_empty = c;
        else ++parts.nonempty;
    return mesh::make_shared_object<S, C>(parts);
}

template <map_memory M>
void destroy_shared_clustering(mesh::sharing_ptr<shared_clustering<M>>& c) {
    shared_clustering<M> parts = mesh::reader<shared_clustering<M>>(c).get();
    mesh::destroy_shared_object(c);
    mesh::destroy_shared_object(parts.cluster_size);
    mesh::destroy_shared_object(parts.cluster_weight);
    mesh::destroy_shared_object(parts.cluster_of);
    mesh::destroy_shared_object(parts.clusters);
}

} // namespace modularity
