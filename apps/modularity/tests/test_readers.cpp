// Graph readers: every shipped graph reads as its README describes it, the
// three formats agree on the same graph, and malformed input is an error
// naming the file and line.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include <modularity/graph_reader.hpp>

#include "test_data.hpp"

using namespace modularity;

namespace {
using modularity_test::data;

/// The message of the graph_error that parsing `text` throws ("" if none).
std::string error_of(const std::string& text, graph_format f) {
    try {
        parse_graph(text, f, "t");
    } catch (const graph_error& e) {
        return e.what();
    }
    return "";
}
} // namespace

TEST_CASE("every shipped graph has the size the graphs README gives") {
    struct expect {
        const char* file;
        vertex n;
        std::size_t m;
        bool weighted;
    };
    const expect graphs[] = {
        {"karate.graph.gz", 34, 78, false},        {"dolphins.graph.gz", 62, 159, false},
        {"lesmis.graph.gz", 77, 254, true},        {"polbooks.graph.gz", 105, 441, false},
        {"football.graph.gz", 115, 613, false},    {"WorldImport1999.el", 66, 2145, true},
        {"jazz.graph.gz", 198, 2742, false},       {"celegans_metabolic.graph.gz", 453, 2025, false},
        {"email.graph.gz", 1133, 5451, false},     {"netscience.graph.gz", 1589, 2742, false},
        {"power.graph.gz", 4941, 6594, false},     {"polblogs.graph.gz", 1490, 16715, false},
        {"hep-th.graph.gz", 8361, 15751, false},   {"PGPgiantcompo.graph.gz", 10680, 24316, false},
        {"cond-mat.graph.gz", 16726, 47594, false},
    };
    for (const expect& x : graphs) {
        INFO(x.file);
        const graph_data g = read_graph(data + "/" + x.file);
        CHECK(g.vertex_count() == x.n);
        CHECK(g.undirected_edge_count() == x.m);
        CHECK(g.weighted == x.weighted);
        // symmetric, sorted adjacency; the vertex weights add up to 2m
        double total = 0;
        for (vertex v = 0; v < g.vertex_count(); ++v) {
            total += g.vertex_weight(v);
            for (edge e = g.first[v]; e + 1 < g.first[v + 1]; ++e) REQUIRE(g.target[e] < g.target[e + 1]);
        }
        CHECK(total == Approx(g.total_weight()));
    }
}

TEST_CASE("the world-trade edge list is symmetrised as LinLogLayout does") {
    const graph_data g = read_graph(data + "/WorldImport1999.el");
    REQUIRE(g.names.size() == 66);
    CHECK(g.names[0] == "ARG");
    std::size_t zero = 0;
    for (double w : g.weight) zero += w == 0;
    CHECK(zero == 2 * 49); // 49 pairs of weight 0, each both ways
    // w(ARG, AUS) = imports ARG->AUS + imports AUS->ARG
    vertex arg = 0, aus = 0;
    for (vertex v = 0; v < 66; ++v) {
        if (g.names[v] == "ARG") arg = v;
        if (g.names[v] == "AUS") aus = v;
    }
    double w = -1;
    for (edge e = g.first[arg]; e < g.first[arg + 1]; ++e)
        if (g.target[e] == aus) w = g.weight[e];
    std::ifstream in(data + "/WorldImport1999.el");
    double expect = 0;
    std::string a, b;
    double x;
    while (in >> a >> b >> x)
        if ((a == "ARG" && b == "AUS") || (a == "AUS" && b == "ARG")) expect += x;
    CHECK(w == Approx(expect));
    CHECK(expect > 86.7);
}

TEST_CASE("the three formats read the same graph alike, plain and compressed") {
    const std::string metis = "% a triangle with a tail, weighted\n4 4 001\n2 3 3 1\n1 3 3 2\n1 1 2 2 4 5\n3 5\n";
    const std::string el = "# comment\r\na b 3\r\nc a 0.5\r\na c 0.5\r\nb c 2\r\nc d 5\r\n";
    const std::string net = "*Network tail\n*Vertices 4\n1 \"a\"\n2 \"b b\"\n3 c\n*Arcs\n1 2 3\n3 1 0.5\n1 3 0.5\n"
                            "*Edges\n2 3 2\n3 4 5\n";
    const graph_data a = parse_graph(metis, graph_format::metis);
    const graph_data b = parse_graph(el, graph_format::edge_list);
    const graph_data c = parse_graph(net, graph_format::pajek);
    for (const graph_data* g : {&a, &b, &c}) {
        CHECK(g->vertex_count() == 4);
        CHECK(g->undirected_edge_count() == 4);
        CHECK(g->first == a.first);
        CHECK(g->target == a.target);
        CHECK(g->weight == a.weight);
        CHECK(g->weighted);
    }
    CHECK(c.names[1] == "b b");
    CHECK(c.name(3) == "4"); // unlabelled vertices keep their number
    CHECK(c.names.size() == 3); // names only up to the last labelled vertex

    const graph_data k1 = read_graph(data + "/karate.graph.gz");
    const std::string plain = "/tmp/tacomesh_karate_test.graph";
    {
        std::string text;
        detail::file_lines src(data + "/karate.graph.gz");
        std::string_view line;
        while (src.next(line)) text.append(line).push_back('\n');
        std::ofstream(plain) << text;
    }
    const graph_data k2 = read_graph(plain);
    std::remove(plain.c_str());
    CHECK(k1.first == k2.first);
    CHECK(k1.target == k2.target);
}

TEST_CASE("self-loops count twice in the vertex weight, as in igraph") {
    const graph_data g = parse_graph("a a 2\na b 1\n", graph_format::edge_list);
    CHECK(g.vertex_weight(0) == 5); // 2 * 2 + 1
    CHECK(g.total_weight() == 6);
    CHECK(g.undirected_edge_count() == 2);
}

TEST_CASE("malformed METIS files are errors with file and line") {
    using F = graph_format;
    CHECK(error_of("", F::metis) == "t: empty file: expected a METIS header 'n m [fmt [ncon]]'");
    CHECK(error_of("3\n", F::metis) == "t:1: header has no edge count: expected 'n m [fmt [ncon]]'");
    CHECK(error_of("x 1\n", F::metis) == "t:1: vertex count 'x' is not a non-negative integer");
    CHECK(error_of("2 1 002\n", F::metis).find("format field '002'") != std::string::npos);
    CHECK(error_of("3 1\n2\n1\n", F::metis) == "t: ends after 2 of the header's 3 vertex lines");
    CHECK(error_of("2 1\n2\n1\n1\n", F::metis) == "t:4: more vertex lines than the header's 2");
    CHECK(error_of("2 1\n3\n1\n", F::metis) == "t:2: neighbour '3' is out of range: the vertices are 1..2");
    CHECK(error_of("2 1\n0\n1\n", F::metis) == "t:2: neighbour '0' is out of range: the vertices are 1..2");
    CHECK(error_of("3 1\n2\n\n\n", F::metis) ==
          "t:2: vertex 1 lists neighbour 2, but vertex 2 (line 3) does not list 1: METIS adjacency must be symmetric");
    CHECK(error_of("2 1\n2 2\n1\n", F::metis) == "t:2: vertex 1 lists neighbour 2 twice");
    CHECK(error_of("2 1 1\n2 4\n1 5\n", F::metis) == "t:3: edge 1-2 has weight 5.000000 here but 4.000000 on line 2");
    CHECK(error_of("2 1 1\n2\n1 1\n", F::metis) == "t:2: neighbour '2' has no edge weight (format says 001)");
    CHECK(error_of("2 1 1\n2 -1\n1 -1\n", F::metis) ==
          "t:2: weight '-1' is negative (modularity needs non-negative weights)");
    CHECK(error_of("2 1 1\n2 nan\n1 nan\n", F::metis) == "t:2: weight 'nan' is not finite");
    CHECK(error_of("2 1 1\n2 1e999\n1 1e999\n", F::metis) == "t:2: weight '1e999' is out of range");
    CHECK(error_of("3 2\n2\n1\n\n", F::metis) == "t: the header says 2 edges, the vertex lines list 1");
    // comments anywhere; a blank line is a vertex without neighbours
    CHECK(parse_graph("% c\n3 1\n% c\n2\n1\n\n", F::metis).vertex_count() == 3);
    // vertex weights (fmt 011, ncon 2) are skipped
    CHECK(parse_graph("2 1 011 2\n5 6 2 3\n7 8 1 3\n", F::metis).weight == std::vector<double>{3, 3});
}

TEST_CASE("malformed edge lists and Pajek files are errors with file and line") {
    using F = graph_format;
    CHECK(error_of("a b 1\nc\n", F::edge_list) == "t:2: expected 'FROM TO [WEIGHT]', found one field 'c'");
    CHECK(error_of("a b 1 2\n", F::edge_list) == "t:1: expected 'FROM TO [WEIGHT]', found more fields: '2'");
    CHECK(error_of("a b x\n", F::edge_list) == "t:1: weight 'x' is not a number");
    CHECK(error_of("a b 1.5.2\n", F::edge_list) == "t:1: weight '1.5.2' is not a number");
    CHECK(error_of("# nothing\n", F::edge_list) == "t: no edges: expected lines 'FROM TO [WEIGHT]'");
    CHECK(error_of("1 2\n", F::pajek) == "t:1: expected *Vertices before '1'");
    CHECK(error_of("*Edges\n1 2\n", F::pajek) == "t:1: *edges before *Vertices");
    CHECK(error_of("*Vertices 2\n*Edges\n1 3\n", F::pajek) == "t:3: vertex '3' is out of range: the vertices are 1..2");
    CHECK(error_of("*Vertices 2\n1 \"open\n", F::pajek) == "t:2: label has no closing quote");
    CHECK(error_of("*Vertices 2\n*Matrix\n", F::pajek) ==
          "t:2: *Matrix sections are not supported: write the network as *Edges or *Arcs");
    CHECK(error_of("*Partition x\n", F::pajek).find("not a section of a Pajek network") != std::string::npos);
    CHECK(error_of("*Vertices 5000000000\n", F::pajek).find("more than this reader accepts") != std::string::npos);
    CHECK(error_of("", F::pajek) == "t: no *Vertices section: not a Pajek network");
    // Edgeslist: one line per vertex with its neighbours
    CHECK(parse_graph("*Vertices 3\n*Edgeslist\n1 2 3\n", F::pajek).undirected_edge_count() == 2);
}

TEST_CASE("files that cannot be read, and names without a known format") {
    CHECK_THROWS_WITH(read_graph("/nonexistent/g.graph"), "/nonexistent/g.graph: cannot open: No such file or directory");
    CHECK_THROWS_WITH(read_graph("/tmp/g.xyz"), Catch::Contains("cannot tell the format from the name"));
    CHECK(format_from_name("A.NET.gz") == graph_format::pajek);
    CHECK(format_from_name("x.el") == graph_format::edge_list);
    // a truncated gzip stream
    const std::string gz = "/tmp/tacomesh_truncated.graph.gz";
    {
        std::ifstream src(data + "/cond-mat.graph.gz", std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(src)), {});
        std::ofstream(gz, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    }
    CHECK_THROWS_WITH(read_graph(gz), Catch::Contains("truncated gzip data"));
    std::remove(gz.c_str());
}

TEST_CASE("a vertex count the memory cannot hold is refused before anything is allocated for it") {
    // A 40-byte Pajek file once allocated until the OOM killer (23 GB).
    read_options small;
    small.memory_bytes = std::uint64_t(1) << 30;
    auto refusal = [&](const std::string& text, graph_format f) {
        try {
            parse_graph(text, f, "t", small);
        } catch (const graph_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(refusal("*Vertices 2000000000\n*Edges\n1 2\n", graph_format::pajek) ==
          "t:1: 2000000000 vertices need at least 32000000016 bytes (16 per vertex), more than this machine has: "
          "1073741824 bytes (its RAM and swap, or the process's address-space limit, RLIMIT_AS)");
    CHECK(refusal("2000000000 1\n2\n1\n", graph_format::metis).starts_with("t:1: 2000000000 vertices need"));
    // A count that fits is read, and labels name only up to the last labelled vertex.
    const graph_data g = parse_graph("*Vertices 1000000\n2 \"two\"\n*Edges\n1 2\n", graph_format::pajek, "t", small);
    CHECK(g.vertex_count() == 1000000);
    CHECK(g.names.size() == 2);
    CHECK(g.name(1) == "two");
    CHECK(g.name(999999) == "1000000");
    CHECK(refusal("*Vertices 50000000\n1 \"near\"\n49999999 \"far\"\n*Edges\n1 2\n", graph_format::pajek)
              .starts_with("t:3: a label on vertex 49999999: names for 49999999 vertices need at least"));
}
