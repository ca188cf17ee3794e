// The searches with the graph in DCM memory, the clustering write-through, under every controller (cluster_variants.hpp).
#include "cluster_variants.hpp"

namespace modularity::detail {
MODULARITY_CLUSTER_CONTROLLERS(, dcm, wt)
} // namespace modularity::detail
