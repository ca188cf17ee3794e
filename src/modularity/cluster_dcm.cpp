// The searches with graph and clustering in DCM (cached) memory, under every controller (cluster_variants.hpp).
#include "cluster_variants.hpp"

namespace modularity::detail {
MODULARITY_CLUSTER_CONTROLLERS(, dcm, dcm)
} // namespace modularity::detail
