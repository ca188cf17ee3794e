#pragma once
// What MESH needs from a platform besides the channels (docs/architecture.md, section 1;
// MESH paper, section III.A): memory reserved at the same logical address on
// every core, in three modes, and cache control on address ranges. It is part
// of the platform seam (one platform type provides both), and MESH reaches it
// through the running core (runtime/memory_port.hpp), never by naming a
// platform.
#include <concepts>
#include <cstddef>
#include <span>

namespace taco {

/// How shared memory is cached (MESH paper, section III.A: the SCC's DCM,
/// NCM and MPBT+WT page modes).
enum class memory_mode {
    cached,        ///< private caches: needs invalidate / write-back (DCM)
    non_cached,    ///< every access goes to memory: always consistent, slower (NCM)
    write_through, ///< writes go straight through; a platform may map it to non_cached (POSIX does)
};

/// One core's view of the memory a platform manages for MESH.
///
/// - `region(mode)`: the logical address range of shared memory in `mode`,
///   the same on every core; MESH's allocator hands out parts of it.
/// - `private_region()`: logical addresses of core-private memory; every
///   core has its own instance of each address, at `p + private_offset()`
///   (0 where each core has its own address space).
/// - `invalidate(p, n)` makes this core's view of [p, p+n) match memory;
///   `write_back(p, n)` makes memory match this core's view. Both copy
///   exactly the range asked for, and neither orders anything by itself
///   beyond the range: callers publish with their own release/acquire.
/// - `coherent()`: whether cached memory is kept coherent by hardware (then
///   invalidate / write-back are no-ops and controllers may skip work).
template <class E>
concept memory_endpoint = requires(E& e, const E& ce, const void* p, std::size_t n, memory_mode m) {
    { ce.region(m) } -> std::same_as<std::span<std::byte>>;
    { ce.private_region() } -> std::same_as<std::span<std::byte>>;
    { ce.private_offset() } -> std::same_as<std::ptrdiff_t>;
    { e.invalidate(p, n) } -> std::same_as<void>;
    { e.write_back(p, n) } -> std::same_as<void>;
    { ce.coherent() } -> std::same_as<bool>;
};

} // namespace taco
