// The dispatch from the options to a variant; the variants themselves are
// compiled in cluster_<controller>.cpp (cluster_variants.hpp says why).
#include "cluster_variants.hpp"

namespace modularity::detail {

MODULARITY_CLUSTER_VARIANTS(extern, mesh::controllers::noop)
MODULARITY_CLUSTER_VARIANTS(extern, mesh::controllers::broadcast)
MODULARITY_CLUSTER_VARIANTS(extern, mesh::controllers::overlapped_broadcast)
MODULARITY_CLUSTER_VARIANTS(extern, mesh::controllers::timestamp)

cluster_result cluster_on_cores(const graph_data& g, const cluster_options& o, const std::function<void()>& consumed) {
    return with_variant(o.controller, o.maps, [&]<map_memory G, map_memory M, class C>() {
        return cluster_variant<G, M, C>(g, o, consumed);
    });
}

} // namespace modularity::detail
