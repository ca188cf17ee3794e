// The searches under the noop controller, every map variant (cluster_variants.hpp).
#include "cluster_variants.hpp"

namespace modularity::detail {
MODULARITY_CLUSTER_VARIANTS(, mesh::controllers::noop)
} // namespace modularity::detail
