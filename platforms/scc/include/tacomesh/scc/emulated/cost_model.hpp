#pragma once
// Cycles the emulated SCC charges, so that code run on it reports modelled
// cycles of an 800 MHz P54C core (the MESH paper's clock set-up) instead
// of host time. The figures are the papers' measurements; the README sets
// the modelled results beside the papers' own.
#include <cstdint>

namespace tacomesh::scc::emulated {

struct cost_model {
    // MESH paper, Table I (cycles; middles of the measured ranges).
    std::uint64_t mpb_line_read = 82;   ///< an MPBT line into L1 (r: 67-97)
    std::uint64_t mpb_line_write = 93;  ///< the WCB's line out to an MPB (g: 78-108)
    std::uint64_t dram_line_read = 162; ///< a DCM line from off-chip DRAM (r: 150-174)
    std::uint64_t dram_line_write = 98; ///< a DCM store that misses (no allocate on write; w: 98)
    std::uint64_t cache_hit = 2;        ///< an L1 / L2 hit
    // MESH paper, section IV.A: flushing N lines costs about 300 N + 7 500;
    // a whole L2, 582 000. The routine reads 4 flush-area lines per set:
    // 7 500 for the call (system call, WBINVD), 71 per read (582 000 / 8 192),
    // 80 more for each modified line written back.
    std::uint64_t flush_call = 7500;
    std::uint64_t flush_read = 71;
    std::uint64_t dirty_write_back = 80;
    // CCI paper, section V: a round trip is about 2 000 cycles polling and
    // 3 000 with hlt-based sleeping and an interrupt after each message;
    // handling one interrupt takes about 450 (its register write 60-90):
    // 500 from the sender's write to the woken receiver reading it.
    std::uint64_t interrupt_latency = 500;
    std::uint64_t register_access = 82; ///< a tile register (LOCK, GLCFG, LUT) over the mesh, like an MPB read
    std::uint64_t cl1invmb = 4;         ///< one instruction: the L1 drops its MPBT lines
    /// The instructions between hardware operations (the runtime's and the
    /// program's) are measured as host thread CPU time and charged at this
    /// many cycles per host nanosecond. 0.8: as if the P54C ran the host's
    /// instruction stream at its 800 MHz clock, which flatters it (an
    /// in-order P54C does several times less per cycle): communication then
    /// weighs more against computation than on the chip. 0: count hardware
    /// operations only.
    double compute_cycles_per_ns = 0.8;
};

} // namespace tacomesh::scc::emulated
