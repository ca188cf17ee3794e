#pragma once
// Which core the calling thread (or process) is: set by the runtime before
// user code runs. Kept apart from the runtime so that light headers
// (global_ptr) can ask without pulling it in.
#include <limits>

#include <taco/core_id.hpp>

namespace taco {

inline constexpr core_id no_core = std::numeric_limits<core_id>::max();

namespace detail {
inline thread_local core_id tls_core = no_core;
inline thread_local core_id tls_core_count = 0;
} // namespace detail

/// The core the caller runs on, or taco::no_core outside a TACO run.
inline core_id this_core() noexcept { return detail::tls_core; }

/// Number of cores of the running program (0 outside a TACO run).
inline core_id core_count() noexcept { return detail::tls_core_count; }

} // namespace taco
