#pragma once
// Per-core counts of consistency events: what tests check (a Timestamp
// acquire of an unchanged object must not invalidate, a read-only writer
// must not write back) and what benchmarks report next to times.
#include <cstdint>

#include <taco/this_core.hpp>

namespace mesh {

struct event_counts {
    std::uint64_t invalidations = 0;          ///< objects whose view was refreshed from memory
    std::uint64_t invalidated_bytes = 0;
    std::uint64_t write_backs = 0;            ///< objects written back to memory
    std::uint64_t written_back_bytes = 0;
    std::uint64_t broadcasts = 0;             ///< invalidation broadcasts this core started
    std::uint64_t notifications = 0;          ///< invalidation flags other cores' broadcasts set here
};

/// The calling core's counts (this run).
inline event_counts& events() { return taco::core_local<event_counts>(); }

} // namespace mesh
