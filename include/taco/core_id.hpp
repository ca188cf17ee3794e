#pragma once
#include <cstdint>

namespace taco {

/// Index of a core, 0 .. core_count()-1. 32 bits: the SCC has 48 cores, the
/// POSIX platform is tested with hundreds, and messages stay small.
using core_id = std::uint32_t;

} // namespace taco
