#pragma once
// Cycles the emulated SCC charges, so that code run on it reports modelled
// cycles of an 800 MHz P54C core (the MESH paper's clock set-up) instead
// of host time. The figures are the papers' measurements; the README sets
// the modelled results beside the papers' own.
#include <cstdint>

namespace tacomesh::scc::emulated {

/// What plain loads and stores cost, by where the bytes live
/// (memory_model.hpp prices them). Cycles of an 800 MHz core.
struct memory_prices {
    // MESH paper, Table I, after the WGR model: w the time to issue a write,
    // g the gap until the next write can issue, r the time a read takes
    // (middles of the measured ranges). Off-chip DRAM:
    std::uint64_t ncm_read = 131;        ///< NCM, a scalar (r: 117-145)
    std::uint64_t ncm_write = 11;        ///< NCM (w: 11)
    std::uint64_t ncm_write_gap = 121;   ///< NCM (g: 106-137)
    std::uint64_t wt_line_read = 138;    ///< MPBT+WT, a line into L1 (r: 123-153)
    std::uint64_t wt_write = 35;         ///< MPBT+WT, the WCB's line out (w: 35)
    std::uint64_t wt_write_gap = 145;    ///< MPBT+WT (g: 130-161)
    std::uint64_t dcm_line_read = 162;   ///< DCM (and private memory), a line into L2 and L1 (r: 150-174)
    std::uint64_t dcm_write = 98;        ///< DCM, a store that misses both caches (no allocate on write; w: 98)
    std::uint64_t dcm_write_gap = 115;   ///< DCM (g: 107-123)
    // On-chip SRAM mapped uncached (MESH's control blocks in the MPB's spare bytes):
    std::uint64_t sram_read = 75;        ///< (r: 58-91)
    std::uint64_t sram_write = 5;        ///< (w: 5)
    std::uint64_t sram_write_gap = 68;   ///< (g: 51-84)
    /// MESH paper, section IV.A: writing back a modified line, about 80 more.
    std::uint64_t dirty_write_back = 80;
    /// An L1 hit: one cycle on the P54C (its L1 answers in the pipeline).
    std::uint64_t l1_hit = 1;
    /// An L2 hit. Not among the seeds' measurements: the SCC's L2 sits off
    /// the P54C core on the tile, about 18 core cycles away (SCC EAS; an
    /// assumption, not calibrated: no figure here would fix it).
    std::uint64_t l2_hit = 18;
    /// MESH paper, Figure 4: readers of one memory controller do not slow
    /// each other up to three, and past three each waits linearly longer.
    /// So a controller serves a request every read / 3 cycles: three
    /// readers that each wait a read's latency between requests fill it
    /// (the read of an uncached scalar, ncm_read / 3, as a load that no
    /// cache hides measures a controller).
    std::uint64_t controller_service = 44;
    std::uint32_t controllers = 4;
    /// Shared memory spreads over the controllers in pieces of this many
    /// bytes. The MESH paper's NCM world trade ran into the memory bandwidth
    /// at 12 cores, four times the three readers one controller takes, so
    /// its shared pages were spread over all four; pages here.
    std::size_t interleave_bytes = 4096;
};

struct cost_model {
    /// Plain loads and stores (memory_model.hpp).
    memory_prices memory{};
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
