#pragma once
// The variants of detail::cluster_variant (include/modularity/cluster.hpp),
// each compiled in one file of a controller (cluster_<controller>.cpp) and
// declared extern where the dispatch is (cluster.cpp): the 32 searches are
// most of the app's compile time, and this way they compile once, in four
// files that build side by side.
#include <modularity/cluster.hpp>

// The map variants of with_variant (variants.hpp): graph and clustering
// memory dcm/dcm, ncm/ncm, wt/wt, and dcm/wt ("mix"). Used inside namespace
// modularity::detail.
#define MODULARITY_CLUSTER_VARIANT(KEYWORD, G, M, C)                                                         \
    KEYWORD template cluster_result cluster_variant<map_memory::G, map_memory::M, C>(                          \
        const graph_data&, const cluster_options&, const std::function<void()>&);
#define MODULARITY_CLUSTER_VARIANTS(KEYWORD, C)                                                               \
    MODULARITY_CLUSTER_VARIANT(KEYWORD, dcm, dcm, C)                                                          \
    MODULARITY_CLUSTER_VARIANT(KEYWORD, ncm, ncm, C)                                                          \
    MODULARITY_CLUSTER_VARIANT(KEYWORD, wt, wt, C)                                                            \
    MODULARITY_CLUSTER_VARIANT(KEYWORD, dcm, wt, C)
