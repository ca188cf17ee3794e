// The searches under the overlapped_broadcast controller, every map variant (cluster_variants.hpp).
#include "cluster_variants.hpp"

namespace modularity::detail {
MODULARITY_CLUSTER_VARIANTS(, mesh::controllers::overlapped_broadcast)
} // namespace modularity::detail
