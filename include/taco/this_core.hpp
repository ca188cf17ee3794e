#pragma once
#include <limits>

#include <taco/core_id.hpp>

namespace taco {

inline constexpr core_id no_core = std::numeric_limits<core_id>::max();

namespace detail {
// Set by the runtime on each core's thread (or process) before user code runs.
inline thread_local core_id tls_core = no_core;
inline thread_local core_id tls_core_count = 0;
} // namespace detail

/// The core the caller runs on, or taco::no_core outside a TACO runtime.
inline core_id this_core() noexcept { return detail::tls_core; }

/// Number of cores of the running program (0 outside a TACO runtime).
inline core_id core_count() noexcept { return detail::tls_core_count; }

} // namespace taco
