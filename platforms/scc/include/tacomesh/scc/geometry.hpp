#pragma once
// The SCC's fixed shape (Xipx thesis, section 2.5 and 4.4.4; the SCC EAS):
// 24 tiles on a 6 x 4 mesh, two P54C cores per tile, 16 KB of message-
// passing buffer (MPB) SRAM per tile (8 KB per core), 32-byte cache lines,
// a 16 KB L1 and a 256 KB 4-way L2 per core, and per core a lookup table
// (LUT) of 256 entries that maps each 16 MB segment of the core's 32-bit
// physical address space to a system address.
#include <cstddef>
#include <cstdint>

namespace tacomesh::scc {

using core_index = std::uint32_t;

inline constexpr core_index tiles = 24;
inline constexpr core_index cores_per_tile = 2;
inline constexpr core_index max_cores = tiles * cores_per_tile;
inline constexpr std::size_t line_bytes = 32;
inline constexpr std::size_t mpb_bytes_per_core = 8 * 1024;
inline constexpr std::size_t l1_bytes = 16 * 1024;
inline constexpr std::size_t l2_bytes = 256 * 1024;
inline constexpr std::size_t l2_ways = 4;
inline constexpr std::size_t l2_sets = l2_bytes / l2_ways / line_bytes; // 2048
inline constexpr std::size_t lut_entries = 256;
inline constexpr std::size_t lut_segment_bytes = std::size_t(16) << 20;

/// The last line of each core's MPB is the backend's: hardware::flush_wcb()
/// stores there to push a partial line out of the write-combine buffer.
inline constexpr std::size_t mpb_flush_line = mpb_bytes_per_core - line_bytes;

constexpr core_index tile_of(core_index core) noexcept { return core / cores_per_tile; }
/// The tile's (x, y) on the mesh, as MYTILEID gives it: x in [0, 6), y in [0, 4).
constexpr core_index tile_x(core_index tile) noexcept { return tile % 6; }
constexpr core_index tile_y(core_index tile) noexcept { return tile / 6; }

/// A chip's shape, for the emulation's "what if" (the bare-metal backend
/// knows only the SCC's, above): a mesh of `mesh_x` x `mesh_y` tiles,
/// `cores_per_tile` cores on each, `mpb_bytes` of message-passing buffer
/// per core and `controllers` memory controllers on the mesh's left and
/// right edges. The default is the SCC. Caches and line size stay the
/// P54C's: a bigger chip of the same cores.
struct chip_shape {
    core_index mesh_x = 6, mesh_y = 4;
    core_index cores_per_tile = scc::cores_per_tile;
    std::size_t mpb_bytes = mpb_bytes_per_core;
    std::uint32_t controllers = 4;

    constexpr core_index tiles() const noexcept { return mesh_x * mesh_y; }
    constexpr core_index cores() const noexcept { return tiles() * cores_per_tile; }
    constexpr core_index tile_of(core_index core) const noexcept { return core / cores_per_tile; }
    constexpr core_index x_of(core_index core) const noexcept { return tile_of(core) % mesh_x; }
    constexpr core_index y_of(core_index core) const noexcept { return tile_of(core) / mesh_x; }
    /// Routers between two cores' tiles (the mesh routes X then Y).
    constexpr core_index hops(core_index a, core_index b) const noexcept {
        const core_index xa = x_of(a), xb = x_of(b), ya = y_of(a), yb = y_of(b);
        return (xa > xb ? xa - xb : xb - xa) + (ya > yb ? ya - yb : yb - ya);
    }
    /// The memory controller that holds a core's private memory: the
    /// mesh's halves (left, right) are each split into controllers / 2
    /// runs of tiles in row order, one per controller on that edge, as
    /// the SCC's default LUTs give each quadrant the controller on its side
    /// (Xipx thesis, Figure 2.9: 6 tiles, 12 cores, per controller).
    /// Numbered as the SCC's: left, right of the first band, then the next.
    constexpr std::uint32_t controller_of(core_index core) const noexcept {
        if (controllers < 2) return 0;
        const core_index half = (mesh_x + 1) / 2, x = x_of(core);
        const bool right = x >= half;
        const core_index width = right ? mesh_x - half : half;
        const std::uint64_t index = std::uint64_t(y_of(core)) * width + (right ? x - half : x);
        const std::uint32_t per_side = controllers / 2;
        return 2 * std::uint32_t(index * per_side / (std::uint64_t(mesh_y) * width)) + (right ? 1 : 0);
    }

    friend constexpr bool operator==(const chip_shape&, const chip_shape&) = default;
};
static_assert(chip_shape{}.cores() == max_cores && chip_shape{}.controller_of(0) == 0 &&
                  chip_shape{}.controller_of(5 * 2) == 1 && chip_shape{}.controller_of(12 * 2) == 2 &&
                  chip_shape{}.controller_of(2 * 2) == 0 &&
                  chip_shape{}.controller_of(47) == 3,
              "the default shape is the SCC's, its quadrants each on the controller at their side");

/// A LUT entry (thesis, Figure 4.3): the bypass bit (never set: it corrupts
/// the MPB), the destination tile (y, x), the router port (Table 4.2) and
/// the upper 10 bits of the 34-bit sub-address.
struct lut_entry {
    enum port : std::uint8_t { core0 = 0, core1 = 1, crb = 2, mpb = 3, east = 4, south = 5, west = 6, north = 7 };
    std::uint8_t dest_x = 0, dest_y = 0;
    port sub = east;
    std::uint16_t address_high = 0; ///< bits 33..24 of the sub-address
    bool bypass = false;

    friend constexpr bool operator==(const lut_entry&, const lut_entry&) = default;
};

/// How a page of shared memory is cached (MESH paper, section III.A).
enum class page_mode : std::uint8_t {
    dcm,      ///< cached in L1 and L2: needs the L2 flush routine and an invalidate
    ncm,      ///< not cached: every access goes to memory
    mpbt_wt,  ///< MPBT + write-through: L1 only, writes through the write-combine buffer; CL1INVMB invalidates
};

} // namespace tacomesh::scc
