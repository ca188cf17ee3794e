#pragma once
// Optional part of the memory seam: a little fast shared memory besides the
// regions of memory_endpoint. On the SCC it is MPB SRAM left free by the
// invocation channels, a few hundred bytes per core, which is where the
// MESH paper keeps each object's Timestamp counter ("stored in the on-chip
// SRAM of the SCC", section III.B): an acquire that finds the counter
// unchanged then costs one SRAM read instead of a DRAM access. It comes in
// pieces (one per core's MPB), not as one range, because the chip's MPBs
// are not adjacent in any core's address space.
#include <concepts>
#include <cstddef>
#include <span>

#include <taco/platform/memory_endpoint.hpp>

namespace taco {

/// `on_chip_regions()`: the pieces of on-chip shared memory, at the same
/// addresses on every core, never cached (no invalidate or write-back
/// needed), each aligned to 64 bytes. Platforms without such memory do not
/// model this; MESH then keeps everything in its regions.
template <class E>
concept on_chip_memory_endpoint = memory_endpoint<E> && requires(const E& ce) {
    { ce.on_chip_regions() } -> std::same_as<std::span<const std::span<std::byte>>>;
};

} // namespace taco
