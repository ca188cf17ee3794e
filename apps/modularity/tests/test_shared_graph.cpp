// The graph and the clustering in MESH (paper Figures 2 and 3): another core
// process reads the same graph through the composite proxy, a composite read
// refreshes each changed part once and nothing else, and a vertex move
// reaches the other core under every controller.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <tacomesh/posix.hpp>
#include <modularity/graph_reader.hpp>
#include <modularity/shared_clustering.hpp>
#include <modularity/shared_graph.hpp>

#include "test_data.hpp"

using namespace modularity;
using tacomesh::posix::execution_mode;

namespace {
using modularity_test::data;

using graph_ptr = mesh::sharing_ptr<shared_graph<map_memory::dcm>>;
using clustering_ptr = mesh::sharing_ptr<shared_clustering<map_memory::dcm>>;

struct digest {
    vertex n;
    edge m;
    double weights;   // sum of edge weights
    double targets;   // sum of target ids, weighted by source + 1: order-sensitive
    double vertex_weights;
    std::uint64_t sources_ok;
};

digest digest_of(graph_ptr p) {
    const auto g = mesh::read(p);
    digest d{g.vertex_count(), g.edge_count(), 0, 0, 0, 0};
    for (vertex v = 0; v < g.vertex_count(); ++v) {
        d.vertex_weights += g.vertex_weight(v);
        for (edge e : g.out_edges(v)) {
            d.weights += g.weight(e);
            d.targets += double(g.target(e)) * (v + 1);
            d.sources_ok += g.source(e) == v;
        }
    }
    return d;
}

struct seen {
    std::uint64_t invalidations, bytes;
    cluster of_v;
    double weight_to;
};

/// A composite read of the clustering on this core: what it refreshed, and
/// what it saw for vertex v and cluster `to`.
seen read_clustering(clustering_ptr c, vertex v, cluster to) {
    const auto before = mesh::events();
    const auto r = mesh::read(c);
    const auto after = mesh::events();
    return {after.invalidations - before.invalidations, after.invalidated_bytes - before.invalidated_bytes, r.of(v),
            r.weight(to)};
}
} // namespace

TEST_CASE("another core process reads the same graph through the composite proxy") {
    const graph_data g = read_graph(data + "/WorldImport1999.el");
    digest expect{g.vertex_count(), g.edge_count(), 0, 0, 0, 0};
    for (vertex v = 0; v < g.vertex_count(); ++v) {
        expect.vertex_weights += g.vertex_weight(v);
        for (edge e = g.first[v]; e < g.first[v + 1]; ++e) {
            expect.weights += g.weight[e];
            expect.targets += double(g.target[e]) * (v + 1);
        }
    }
    taco::run(tacomesh::posix::config{.cores = 2, .mode = execution_mode::processes}, [&] {
        auto p = make_shared_graph<map_memory::dcm, mesh::controllers::broadcast>(g);
        const digest d = taco::sync(taco::core_id(1), &digest_of, p);
        CHECK(d.n == expect.n);
        CHECK(d.m == expect.m);
        // Scaled by a power of two, the largest weight into [1, 2): exactly.
        CHECK(d.weights == std::ldexp(expect.weights, weight_shift(g.weight)));
        CHECK(d.targets == expect.targets);
        CHECK(d.vertex_weights == Approx(std::ldexp(expect.vertex_weights, weight_shift(g.weight))));
        CHECK(d.sources_ok == g.edge_count());
        destroy_shared_graph(p);
    });
}

TEST_CASE("a composite read refreshes each changed part once, and a move reaches the other core") {
    // 1589 vertices: the clustering's maps have 2, 4 and 2 chunks of 4 KB
    const graph_data g = read_graph(data + "/netscience.graph.gz");
    auto under = [&]<class C>() {
        INFO(C::name);
        taco::run(tacomesh::posix::config{.cores = 2, .mode = execution_mode::processes}, [&] {
            auto graph = make_shared_graph<map_memory::dcm, C>(g);
            auto c = make_shared_clustering<map_memory::dcm, C>(graph);
            taco::sync(taco::core_id(1), &read_clustering, c, vertex(0), cluster(0)); // core 1's view is current now
            const seen idle = taco::sync(taco::core_id(1), &read_clustering, c, vertex(0), cluster(0));
            CHECK(idle.invalidations == 0); // nothing changed: nothing refreshed
            const double w5 = mesh::read(graph).vertex_weight(5);
            mesh::write(c).move(5, 0, w5); // vertex 5 joins cluster 0
            const seen moved = taco::sync(taco::core_id(1), &read_clustering, c, vertex(5), cluster(0));
            CHECK(moved.of_v == 0);
            CHECK(moved.weight_to == Approx(mesh::read(graph).vertex_weight(0) + w5));
            // the composite and its three maps, each once, and each map only
            // in the 4 KB chunk the move changed (plus the map objects' own bytes)
            CHECK(moved.invalidations == 4);
            CHECK(moved.bytes >= 3 * 4096);
            CHECK(moved.bytes <= sizeof(shared_clustering<map_memory::dcm>) + 3 * 4096 + 3 * 1024);
            destroy_shared_clustering(c);
            destroy_shared_graph(graph);
        });
    };
    under.template operator()<mesh::controllers::broadcast>();
    under.template operator()<mesh::controllers::overlapped_broadcast>();
    under.template operator()<mesh::controllers::timestamp>();
}

TEST_CASE("a new cluster takes the lowest free id, and an emptied cluster frees its id") {
    const graph_data g = read_graph(data + "/karate.graph.gz");
    taco::run(tacomesh::posix::config{.cores = 1}, [&] {
        auto graph = make_shared_graph<map_memory::dcm, mesh::controllers::noop>(g);
        auto c = make_shared_clustering<map_memory::dcm, mesh::controllers::noop>(graph);
        auto w = [&](vertex v) { return mesh::read(graph).vertex_weight(v); };
        CHECK(mesh::read(c).first_empty() == 34); // singletons: no free id
        mesh::write(c).move(3, 2, w(3));          // cluster 3 empties
        CHECK(mesh::read(c).first_empty() == 3);
        mesh::write(c).move(7, 2, w(7));          // and 7
        CHECK(mesh::read(c).first_empty() == 3);
        CHECK(mesh::read(c).count() == 32);
        mesh::write(c).move(2, 3, w(2)); // vertex 2 to a new cluster: id 3
        CHECK(mesh::read(c).first_empty() == 7);
        CHECK(mesh::read(c).size(3) == 1);
        CHECK(mesh::read(c).count() == 33);
        mesh::write(c).move(11, 2, w(11)); // 11 empties: 7 is still the lowest free id
        CHECK(mesh::read(c).first_empty() == 7);
        CHECK_THROWS_WITH(mesh::write(c).move(9, 11, w(9)), Catch::Contains("must take the lowest free id 7"));
        destroy_shared_clustering(c);
        destroy_shared_graph(graph);
    });
}
