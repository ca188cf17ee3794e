// The dispatch from the options to a variant; the variants themselves are
// compiled in cluster_<maps>.cpp (cluster_variants.hpp says why).
#include "cluster_variants.hpp"

namespace modularity::detail {

MODULARITY_CLUSTER_CONTROLLERS(extern, dcm, dcm)
MODULARITY_CLUSTER_CONTROLLERS(extern, ncm, ncm)
MODULARITY_CLUSTER_CONTROLLERS(extern, wt, wt)
MODULARITY_CLUSTER_CONTROLLERS(extern, dcm, wt)

cluster_result cluster_on_cores(const graph_data& g, const cluster_options& o, const std::function<void()>& consumed) {
    return with_variant(o.controller, o.maps, [&]<map_memory G, map_memory M, class C>() {
        return cluster_variant<G, M, C>(g, o, consumed);
    });
}

} // namespace modularity::detail
