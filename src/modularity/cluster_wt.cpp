// The searches with graph and clustering in write-through memory, under every controller (cluster_variants.hpp).
#include "cluster_variants.hpp"

namespace modularity::detail {
MODULARITY_CLUSTER_CONTROLLERS(, wt, wt)
} // namespace modularity::detail
