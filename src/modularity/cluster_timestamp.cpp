// The searches under the timestamp controller, every map variant (cluster_variants.hpp).
#include "cluster_variants.hpp"

namespace modularity::detail {
MODULARITY_CLUSTER_VARIANTS(, mesh::controllers::timestamp)
} // namespace modularity::detail
