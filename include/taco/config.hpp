#pragma once
// Compile-time switches.

/// Debug checks (global_ptr dereferenced on a foreign core, ...): on in
/// builds without NDEBUG; define TACO_DEBUG_CHECKS=1 to keep them in an
/// optimised build (our tests do), or =0 to drop them from a debug build.
#ifndef TACO_DEBUG_CHECKS
#ifdef NDEBUG
#define TACO_DEBUG_CHECKS 0
#else
#define TACO_DEBUG_CHECKS 1
#endif
#endif
