#pragma once
// Per-core counts of consistency events: what tests check (a Timestamp
// acquire of an unchanged object must not invalidate, a read-only writer
// must not write back) and what benchmarks report next to times.
#include <cstdint>

#include <taco/this_core.hpp>

namespace mesh {

/// Two byte counts per direction, because coherent memory copies nothing:
/// the ranges a controller refreshed or published (its decision, the same
/// on every platform: what a memory without coherence would have to copy),
/// and the bytes the platform's cache control really copied for them. In
/// thread mode (coherent caches: invalidate and write-back are fences) and
/// for non-cached and write-through memory the copied counts stay 0; in
/// process mode they equal the range counts for cached memory.
struct event_counts {
    std::uint64_t invalidations = 0;           ///< objects whose view was refreshed (counted in every mode)
    std::uint64_t invalidated_bytes = 0;       ///< bytes copied into this core's view (0 where nothing is copied)
    std::uint64_t invalidated_range_bytes = 0; ///< bytes of the ranges refreshed, copied or not
    std::uint64_t write_backs = 0;             ///< objects written back (counted in every mode)
    std::uint64_t written_back_bytes = 0;      ///< bytes copied out of this core's view (0 where nothing is copied)
    std::uint64_t written_back_range_bytes = 0; ///< bytes of the ranges written back, copied or not
    std::uint64_t broadcasts = 0;              ///< invalidation broadcasts this core started
    std::uint64_t notifications = 0;           ///< invalidation flags other cores' broadcasts set here
};

/// The calling core's counts (this run).
inline event_counts& events() { return taco::core_local<event_counts>(); }

} // namespace mesh
