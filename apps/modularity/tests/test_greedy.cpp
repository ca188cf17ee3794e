// Globally greedy vertex moving (MESH paper, Figure 1): the reference values
// of the graphs README, the same moves for every core count, map variant,
// controller and platform, and a controller's absence caught.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <modularity/cluster.hpp>
#include <modularity/graph_reader.hpp>
#include <modularity/quality.hpp>

#include "test_data.hpp"

using namespace modularity;

namespace {
using modularity_test::data;

/// A graph's reference values (data/greedy.answers.tsv, the one copy); 0: not given.
struct reference {
    std::string file;
    double q = 0;
    vertex clusters = 0;
    std::uint64_t moves = 0;
};
std::vector<reference> references() {
    std::vector<reference> out;
    std::ifstream f(data + "/greedy.answers.tsv");
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        reference r;
        std::string clusters, moves;
        if (!(fields >> r.file >> r.q >> clusters >> moves)) continue;
        if (clusters != "-") r.clusters = vertex(std::stoul(clusters));
        if (moves != "-") r.moves = std::stoull(moves);
        out.push_back(r);
    }
    if (out.empty()) {
        std::fprintf(stderr, "%s/greedy.answers.tsv: no reference values\n", data.c_str());
        std::abort();
    }
    return out;
}
reference reference_of(const std::string& file) {
    for (const reference& r : references())
        if (r.file == file) return r;
    std::fprintf(stderr, "%s/greedy.answers.tsv: no line for %s\n", data.c_str(), file.c_str());
    std::abort();
}

cluster_result greedy(const graph_data& g, taco::core_id cores, execution_mode platform = execution_mode::threads,
                      controller_kind c = controller_kind::timestamp, maps_kind m = maps_kind::mix) {
    return cluster_graph(g, {.algo = algorithm::greedy, .cores = cores, .platform = platform, .controller = c, .maps = m, .progress = {}});
}
} // namespace

TEST_CASE("greedy vertex moving reaches the graphs README's reference values") {
    for (const reference& x : references()) {
        INFO(x.file);
        const graph_data g = read_graph(data + "/" + x.file);
        const cluster_result r = greedy(g, 2);
        CHECK(std::abs(r.modularity - x.q) < 0.00005);
        if (x.clusters) CHECK(r.clusters == x.clusters);
        if (x.moves) CHECK(r.steps == x.moves);
        CHECK(r.converged);
        CHECK(r.modularity == Approx(modularity_of(g, r.assignment)).margin(1e-12));
    }
}

TEST_CASE("greedy moves are the same on 1, 2 and 3 cores (3 oversubscribed)") {
    const graph_data g = read_graph(data + "/jazz.graph.gz");
    const cluster_result one = greedy(g, 1);
    for (taco::core_id cores : {2u, 3u}) {
        const cluster_result r = greedy(g, cores);
        CHECK(r.assignment == one.assignment);
        CHECK(r.steps == one.steps);
        CHECK(r.modularity == one.modularity); // bit for bit: the same moves in the same order
    }
}

TEST_CASE("greedy moves are the same for every map variant, controller and platform") {
    const graph_data g = read_graph(data + "/WorldImport1999.el");
    const cluster_result ref = greedy(g, 1);
    CHECK(ref.steps == reference_of("WorldImport1999.el").moves);
    for (execution_mode p : {execution_mode::threads, execution_mode::processes})
        for (maps_kind m : all_maps)
            for (controller_kind c : all_controllers) {
                if (c == controller_kind::none && p == execution_mode::processes) continue;
                INFO(name(p) << " " << name(m) << " " << name(c));
                const cluster_result r = greedy(g, 2, p, c, m);
                CHECK(r.assignment == ref.assignment);
                CHECK(r.modularity == ref.modularity);
            }
}

TEST_CASE("a step limit stops the search early, and Q still matches a recomputation") {
    const graph_data g = read_graph(data + "/jazz.graph.gz");
    cluster_options o;
    o.algo = algorithm::greedy;
    o.max_steps = 10;
    const cluster_result r = cluster_graph(g, o);
    CHECK(r.steps == 10);
    CHECK_FALSE(r.converged);
    CHECK(r.modularity == Approx(modularity_of(g, r.assignment)).margin(1e-12));
    CHECK(r.clusters == 198 - 10); // each of the first moves joins two singletons
}

TEST_CASE("without a controller, private memory leaves the workers stale, and the master notices") {
    const graph_data g = read_graph(data + "/karate.graph.gz");
    // cluster() refuses the combination up front ...
    CHECK_THROWS_WITH(greedy(g, 2, execution_mode::processes, controller_kind::none),
                      Catch::Contains("--controller none with --platform processes"));
    // ... and the search itself, asked anyway, stops at the first stale proposal.
    std::string error;
    taco::run(tacomesh::posix::config{.cores = 2, .mode = execution_mode::processes}, [&] {
        try {
            greedy_search<map_memory::dcm, map_memory::dcm, mesh::controllers::noop>(g, {});
        } catch (const stale_data_error& e) {
            error = e.what();
        }
    });
    CHECK_THAT(error, Catch::Contains("the workers read stale data"));
}

TEST_CASE("the best-move combiner is a total order: lowest vertex, then lowest cluster, on equal gains") {
    const best_move a{0.5, 3, 7}, b{0.5, 2, 9}, c{0.5, 2, 4}, d{0.6, 9, 9}, none{};
    const best_of pick;
    CHECK(pick(a, b).v == 2);
    CHECK(pick(b, c).to == 4);
    CHECK(pick(c, b).to == 4);
    CHECK(pick(a, d).v == 9);
    CHECK(pick(none, a).v == 3);
    CHECK(pick(a, none).v == 3);
    // associative on a sample: (a b) c == a (b c) for every order
    const best_move all[] = {a, b, c, d, none};
    for (auto x : all)
        for (auto y : all)
            for (auto z : all) {
                const best_move l = pick(pick(x, y), z), r = pick(x, pick(y, z));
                CHECK((l.v == r.v && l.to == r.to && (l.gain == r.gain || (std::isinf(l.gain) && std::isinf(r.gain)))));
            }
}
