// Extreme edge weights: modularity does not change when every weight is
// scaled alike, so weights of 1e160 or 1e-310 must give the clustering that
// weights of 1 give (they once gave Q = -0.25, or a failed internal check:
// products of two weights overflowed or underflowed), ordinary graphs must
// give exactly what they gave, and a spread no scaling can hold is refused
// with a message that says what to do.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <modularity/cluster.hpp>
#include <modularity/graph_reader.hpp>
#include <modularity/quality.hpp>

#include "test_data.hpp"

using namespace modularity;

namespace {
using modularity_test::data;

cluster_result run(const graph_data& g, algorithm a, execution_mode p = execution_mode::threads) {
    cluster_options o;
    o.algo = a;
    o.cores = 2;
    o.platform = p;
    return cluster_graph(g, o);
}

/// g with every weight times 2^k (exact, away from the ends of double's range).
graph_data scaled(graph_data g, int k) {
    for (double& w : g.weight) w = std::ldexp(w, k);
    return g;
}

std::string refusal_of(const std::string& text, graph_format f) {
    try {
        parse_graph(text, f, "t");
    } catch (const graph_error& e) {
        return e.what();
    }
    return "";
}
} // namespace

TEST_CASE("two equal edges give Q = 0.5 and 2 clusters whatever the weights' scale") {
    for (const char* w : {"1", "1e160", "1e300", "1e-160", "1e-200", "1e-310"}) {
        const graph_data g = parse_graph(std::string("a b ") + w + "\nc d " + w + "\n", graph_format::edge_list);
        for (algorithm a : {algorithm::greedy, algorithm::multilevel})
            for (execution_mode p : {execution_mode::threads, execution_mode::processes}) {
                INFO("weight " << w << ", " << name(a) << " on " << name(p));
                const cluster_result r = run(g, a, p);
                CHECK(r.modularity == Approx(0.5).margin(1e-12));
                CHECK(r.clusters == 2);
                REQUIRE(r.assignment.size() == 4);
                CHECK(r.assignment[0] == r.assignment[1]);
                CHECK(r.assignment[2] == r.assignment[3]);
                CHECK(r.assignment[0] != r.assignment[2]);
            }
    }
}

TEST_CASE("the same graph in every format, with huge and tiny weights, clusters alike") {
    const std::string metis = "4 2 001\n2 1e-200\n1 1e-200\n4 1e-200\n3 1e-200\n";
    const std::string net = "*Vertices 4\n*Edges\n1 2 1e200\n3 4 1e200\n";
    for (const graph_data& g : {parse_graph(metis, graph_format::metis), parse_graph(net, graph_format::pajek)})
        for (algorithm a : {algorithm::greedy, algorithm::multilevel}) {
            const cluster_result r = run(g, a);
            CHECK(r.modularity == Approx(0.5).margin(1e-12));
            CHECK(r.clusters == 2);
        }
}

TEST_CASE("weights scaled by a power of two give bit-identical results, and unweighted ones are not scaled") {
    const graph_data karate = read_graph(data + "/karate.graph.gz");
    CHECK(weight_shift(karate.weight) == 0); // unweighted: the searches see the file's weights as they are
    const graph_data trade = read_graph(data + "/WorldImport1999.el");
    for (const graph_data* g : {&karate, &trade})
        for (algorithm a : {algorithm::greedy, algorithm::multilevel}) {
            const cluster_result ref = run(*g, a);
            // 2^600: products of two weights beyond double's range; 2^-600: below it.
            for (int k : {600, -600, 3}) {
                INFO(name(a) << ", weights times 2^" << k);
                const cluster_result r = run(scaled(*g, k), a);
                CHECK(r.modularity == ref.modularity);
                CHECK(r.clusters == ref.clusters);
                CHECK(r.steps == ref.steps);
                CHECK(r.assignment == ref.assignment);
            }
        }
}

TEST_CASE("weights at the widest accepted spread still cluster, with Q as recomputed") {
    // 2^-450 of the largest: the smallest ratio accepted.
    char text[256];
    std::snprintf(text, sizeof text, "a b 1\nb c 1\nc a 1\nd e %.17g\ne f %.17g\nf d %.17g\nc d %.17g\n",
                  std::ldexp(1.0, -440), std::ldexp(1.0, -440), std::ldexp(1.0, -440), std::ldexp(1.0, -450));
    const graph_data g = parse_graph(text, graph_format::edge_list);
    for (algorithm a : {algorithm::greedy, algorithm::multilevel}) {
        INFO(name(a));
        const cluster_result r = run(g, a);
        CHECK(r.modularity == Approx(modularity_of(g, r.assignment)).margin(1e-12));
        CHECK(r.assignment[0] == r.assignment[1]);
        CHECK(r.assignment[1] == r.assignment[2]);
        CHECK(r.assignment[2] != r.assignment[3]);
    }
}

TEST_CASE("a spread of weights no scaling can hold is refused, in every format, saying what to do") {
    const std::string expect =
        "t: the edge weights span too wide a range: the smallest nonzero weight is 1e-300 and the largest 1e+300, a "
        "ratio beyond 2^450 (about 2.91e+135), so products of two weights leave the range of a double however the "
        "weights are scaled; set the negligible weights to 0 or drop their edges, or compress the range (e.g. use "
        "log(1 + w) as the weight)";
    CHECK(refusal_of("a b 1e300\nc d 1e-300\n", graph_format::edge_list) == expect);
    CHECK(refusal_of("4 2 001\n2 1e300\n1 1e300\n4 1e-300\n3 1e-300\n", graph_format::metis) == expect);
    CHECK(refusal_of("*Vertices 4\n*Edges\n1 2 1e300\n3 4 1e-300\n", graph_format::pajek) == expect);
    // Zero weights are no part of the spread: they scale to 0 exactly.
    CHECK(refusal_of("a b 1e300\nc d 0\n", graph_format::edge_list).empty());

    // A graph_data built by hand is refused before the cores start.
    graph_data g = parse_graph("a b 1\nc d 1\n", graph_format::edge_list);
    g.weight[0] = g.weight[1] = 1e-300;
    CHECK_THROWS_AS(run(g, algorithm::multilevel), std::range_error);
}

TEST_CASE("a compressed file with too wide a spread is refused naming the file") {
    const std::string plain = "/tmp/tacomesh_weight_spread_test.el", gz = plain + ".gz";
    std::ofstream(plain) << "a b 1e-170\nc d 1e170\n";
    REQUIRE(std::system(("gzip -f " + plain).c_str()) == 0);
    CHECK_THROWS_WITH(read_graph(gz), Catch::StartsWith(gz + ": the edge weights span too wide a range: the smallest "
                                                               "nonzero weight is 1e-170 and the largest 1e+170"));
    std::remove(gz.c_str());
}
