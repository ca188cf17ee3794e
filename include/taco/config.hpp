#pragma once
// Compile-time switches.

/// Debug checks (global_ptr dereferenced on a foreign core, a reader proxy
/// used to write, ...): through CMake (the tacomesh::taco target) they are
/// on in Debug and RelWithDebInfo builds and off in Release; without CMake,
/// on unless NDEBUG is defined. Define TACO_DEBUG_CHECKS=1 or =0 to choose.
/// The cheap checks (a null or out-of-range invocation target, a future
/// armed twice, configuration limits) are always on: see taco::usage_error.
#ifndef TACO_DEBUG_CHECKS
#ifdef NDEBUG
#define TACO_DEBUG_CHECKS 0
#else
#define TACO_DEBUG_CHECKS 1
#endif
#endif
