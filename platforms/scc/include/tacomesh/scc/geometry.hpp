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
