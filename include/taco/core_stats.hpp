#pragma once
#include <cstdint>

namespace taco {

/// Per-core message counters (for tests, tuning and the demo).
struct core_stats {
    std::uint64_t sent = 0;         ///< messages handed to the platform
    std::uint64_t received = 0;     ///< messages run by this core
    std::uint64_t deferred = 0;     ///< sends that found the channel full and were queued locally
    std::uint64_t peak_queued = 0;  ///< the most messages ever queued locally at once
    std::uint64_t late_results = 0; ///< results that came after their future timed out (dropped)
    std::uint64_t interruptions = 0; ///< times an interrupt stopped a taco::preemptible computation to run urgent invocations
};

} // namespace taco
