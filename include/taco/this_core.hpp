#pragma once
// What code running on a core may ask of its own core: who it is, its
// counters, one round of its loop, a wait that keeps serving invocations, a
// scheduling point for urgent invocations, and per-core library state.
#include <cstddef>
#include <utility>

#include <taco/core_stats.hpp>
#include <taco/detail/core_identity.hpp>
#include <taco/runtime/core.hpp>

namespace taco {

/// Message counters of the calling core.
inline const core_stats& stats() { return detail::runtime().stats(); }

/// Run one round of this core's runtime (flush queued sends, run received
/// invocations, one ready task); returns how much it moved. For loops that
/// wait on something other than a future. A round that moved nothing also
/// pauses as a waiting core does: the CPU is yielded to other cores on it,
/// and a platform failure (a core process that died) throws here instead of
/// leaving the loop spinning forever.
inline std::size_t poll() {
    auto& rt = detail::runtime();
    const std::size_t n = rt.progress();
    if (n == 0) rt.pause();
    return n;
}

/// Serve incoming invocations until pred() holds (throws taco::stopped_error
/// if the program stops first).
template <class Pred>
void wait_until(Pred&& pred) {
    detail::runtime().wait_until(std::forward<Pred>(pred));
}

/// A scheduling point inside long-running code (a task, a long invocation):
/// runs the invocations that arrived if one of them is urgent. Returns
/// whether it did. Cheap (one load) when nothing is urgent.
inline bool urgent_point() { return detail::runtime().urgent_point(); }

/// The task running on this core: nullptr in main and in invocations run
/// straight from the channel.
inline task* current_task() { return detail::runtime().current_task(); }

/// This core's instance of T, default-constructed on first use and destroyed
/// when the core stops: state a library keeps per core and per run (MESH's
/// allocator on the home core, a group's nodes). Not for T that must
/// outlive the run.
template <class T>
T& core_local() {
    return detail::runtime().core_local<T>();
}

} // namespace taco
