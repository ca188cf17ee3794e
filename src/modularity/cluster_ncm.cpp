// The searches with graph and clustering in NCM (uncached) memory, under every controller (cluster_variants.hpp).
#include "cluster_variants.hpp"

namespace modularity::detail {
MODULARITY_CLUSTER_CONTROLLERS(, ncm, ncm)
} // namespace modularity::detail
