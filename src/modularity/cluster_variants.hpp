#pragma once
// The variants of detail::cluster_variant (include/modularity/cluster.hpp),
// each compiled in the file of its map variant (cluster_<maps>.cpp) and
// declared extern where the dispatch is (cluster.cpp): the 32 searches are
// most of the app's compile time, and this way they compile once, in four
// files that build side by side. A file per map variant, not per
// controller: three quarters of a search's code (the shared graph and
// clustering, local moving, the coarse levels, the workers' groups)
// depends on the maps and not on the controller, and each file compiled
// all of it again (g++ -O2: a file per controller took 184 CPU-seconds
// and 3.5 MB of code in all, a file per map variant 92 s and 2.2 MB).
#include <modularity/cluster.hpp>

// The controllers of with_variant (variants.hpp), for one map variant:
// graph memory G, clustering memory M. Used inside namespace
// modularity::detail.
#define MODULARITY_CLUSTER_VARIANT(KEYWORD, G, M, C)                                                         \
    KEYWORD template cluster_result cluster_variant<map_memory::G, map_memory::M, C>(                          \
        const graph_data&, const cluster_options&, const std::function<void()>&);
#define MODULARITY_CLUSTER_CONTROLLERS(KEYWORD, G, M)                                                         \
    MODULARITY_CLUSTER_VARIANT(KEYWORD, G, M, mesh::controllers::noop)                                        \
    MODULARITY_CLUSTER_VARIANT(KEYWORD, G, M, mesh::controllers::broadcast)                                   \
    MODULARITY_CLUSTER_VARIANT(KEYWORD, G, M, mesh::controllers::overlapped_broadcast)                        \
    MODULARITY_CLUSTER_VARIANT(KEYWORD, G, M, mesh::controllers::timestamp)
