// libFuzzer target for the graph readers: the first byte picks the format
// (METIS, edge list, Pajek), the rest is the file. Any input must either
// parse into a well-formed graph or be refused with a graph_error; a crash,
// a sanitizer report, another exception or a malformed graph is a finding.
//
//   build.sh fuzz [seconds]   (clang, -fsanitize=fuzzer,address,undefined)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <modularity/graph_reader.hpp>

namespace {

void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz_readers: malformed graph: %s\n", what);
        std::abort();
    }
}

/// What every graph a reader returns must satisfy: offsets that start at 0
/// and never decrease, targets in range and sorted per vertex, each edge
/// present both ways with the same weight, weights finite and >= 0.
void check(const modularity::graph_data& g) {
    using namespace modularity;
    const vertex n = g.vertex_count();
    require(g.first.size() == std::size_t(n) + 1 && g.first[0] == 0, "offsets");
    require(g.first[n] == g.target.size() && g.target.size() == g.weight.size(), "sizes");
    require(g.names.size() <= n, "names");
    for (vertex v = 0; v < n; ++v) {
        require(g.first[v] <= g.first[v + 1], "offsets decrease");
        for (edge e = g.first[v]; e < g.first[v + 1]; ++e) {
            const vertex u = g.target[e];
            require(u < n, "target out of range");
            require(e == g.first[v] || g.target[e - 1] < u, "targets not sorted or repeated");
            require(g.weight[e] >= 0 && std::isfinite(g.weight[e]), "weight");
            if (u == v) continue;
            bool back = false; // u lists v with the same weight
            for (edge f = g.first[u]; f < g.first[u + 1] && !back; ++f) back = g.target[f] == v && g.weight[f] == g.weight[e];
            require(back, "asymmetric");
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    using modularity::graph_format;
    const graph_format formats[] = {graph_format::metis, graph_format::edge_list, graph_format::pajek};
    const graph_format f = formats[data[0] % 3];
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    modularity::read_options o;
    o.max_vertices = 1 << 16; // a header may claim billions; the fuzzer should not allocate them
    try {
        check(modularity::parse_graph(text, f, "fuzz", o));
    } catch (const modularity::graph_error&) {
        // refused with file and line: what malformed input should get
    }
    return 0;
}
