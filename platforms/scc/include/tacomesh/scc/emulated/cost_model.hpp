#pragma once
// Cycles the emulated SCC charges, so that code run on it reports modelled
// cycles of an 800 MHz P54C core (the MESH paper's clock set-up) instead
// of host time: every free parameter of the model, each with its source.
// The figures are the papers' measurements, and the one fitted price (a
// counted block's) is fitted to the round-trip micro-benchmark only; the
// README sets the modelled results beside the papers' own.
#include <cstddef>
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
    // A store that misses both caches allocates no line (no allocate on
    // write) and goes to memory as one word, priced as an NCM write.
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
    // How many controllers: the chip's shape (geometry.hpp: the SCC's four).
    /// Shared memory spreads over the controllers in pieces of this many
    /// bytes. The MESH paper's NCM world trade ran into the memory bandwidth
    /// at 12 cores, four times the three readers one controller takes, so
    /// its shared pages were spread over all four; pages here.
    std::size_t interleave_bytes = 4096;
};

/// What the instructions between hardware operations cost.
enum class compute_model {
    none,           ///< nothing: the hardware operations alone
    host_time,      ///< the core thread's host CPU time x compute_cycles_per_ns (noisy; oversubscription inflates it)
    counted_blocks, ///< basic blocks run x cycles_per_block (counted_work.hpp: the same on any host)
};

inline constexpr compute_model default_compute =
#ifdef TACOMESH_SCC_COUNTED
    compute_model::counted_blocks;
#else
    compute_model::host_time;
#endif

/// Whether plain loads and stores are priced by default: in a program built
/// to report them (tacomesh::scc_counted defines TACOMESH_SCC_PRICED).
inline constexpr bool default_price_memory =
#ifdef TACOMESH_SCC_PRICED
    true;
#else
    false;
#endif

struct cost_model {
    /// Plain loads and stores (memory_model.hpp): their prices, and whether
    /// they are charged (priced_memory.hpp).
    memory_prices memory{};
    bool price_memory = default_price_memory;
    // MESH paper, Table I (cycles). The MPB's ranges are distance: a line
    // of an MPB on the core's own tile costs the low end, and each router
    // on the way adds mesh_hop_cycles (the mesh routes X then Y).
    std::uint64_t mpb_line_read = 67;   ///< an MPBT line into L1, on the own tile (r: 67-97)
    std::uint64_t mpb_line_write = 78;  ///< the WCB's line out to an MPB on the own tile (g: 78-108)
    /// Per router between the core and the MPB's tile. The ranges above are
    /// 30 cycles wide over the 0 to 8 hops of the SCC's 6 x 4 mesh (3.75 a
    /// hop), and a router takes 4 mesh cycles at 1.6 GHz (SCC EAS), 2 core
    /// cycles, each way of a read: 4. At the SCC's mean distance between
    /// two cores (3.3 hops) a read is 80 and a write 91, the middles of the
    /// ranges (82, 93); on a 32 x 16 mesh the mean is 16 hops: 131 and 142.
    std::uint64_t mesh_hop_cycles = 4;
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
    /// A running core's handling of an interrupt (a preemptive invocation's:
    /// entry, the status register's reset, return), the paper's "around 450
    /// cycles"; the sender's register write (register_access) comes before.
    std::uint64_t interrupt_handling = 450;
    std::uint64_t register_access = 82; ///< a tile register (LOCK, GLCFG, LUT) over the mesh, like an MPB read
    std::uint64_t cl1invmb = 4;         ///< one instruction: the L1 drops its MPBT lines
    /// How the instructions between hardware operations (the runtime's and
    /// the program's) are charged; see compute_model. The default counts
    /// basic blocks in a program built for it (tacomesh::scc_counted
    /// defines TACOMESH_SCC_COUNTED), else host CPU time. (Every unit of a
    /// program is built alike: the target applies to all of them, and the
    /// default must read the same in each.)
    compute_model compute = default_compute;
    /// compute_model::host_time: cycles per host nanosecond of the core
    /// thread's CPU time. 0.8: as if the P54C ran the host's instruction
    /// stream at its 800 MHz clock, which flatters it (an in-order P54C does
    /// several times less per cycle). 0: count hardware operations only.
    double compute_cycles_per_ns = 0.8;
    /// compute_model::counted_blocks: cycles per basic block run
    /// (counted_work.hpp), fitted to the round trip alone, never to the
    /// apps' figures. The CCI paper (section V, Fig. 2) measured a sync
    /// call's round trip at about 2 000 cycles polling and 3 000 halting.
    /// The hardware operations alone give 1 325 polling and 2 325 halting
    /// (bench_scc round_trip/*/hardware on an idle host; on a loaded one
    /// the halting figure drops to about 2 270: the halting model's wake-up
    /// still follows the host's scheduling). The rest is the runtime's
    /// instructions: 76 counted blocks per round trip in both modes
    /// (bench_scc's blocks_per_round_trip; g++ 12 -O2 with the debug checks
    /// on, the benchmarks' RelWithDebInfo build). Polling:
    /// (2 000 - 1 325) / 76 = 8.88; halting: (3 000 - 2 325) / 76 = 8.88
    /// (9.6 from the loaded host's 2 270); their mean, 8.9. A P54C (in
    /// order, about 1-2 cycles per instruction) running blocks of about 4-6
    /// instructions would take some 4-12 cycles each: the fit is inside.
    /// It carries the channel protocol's own instructions too, which run as
    /// the emulation's and are not counted. Other compilers and settings
    /// count other blocks for the same code (Release, the debug checks
    /// off: 60 per round trip, a fit of 11.3; clang++ -O2: 52, a fit of
    /// 13), so the price holds for the build it was fitted on.
    double cycles_per_block = 8.9;
    /// The round trips cycles_per_block is fitted to (CCI paper, section V,
    /// Fig. 2); calibrated() in experiments.hpp fits it for the build that
    /// calls it, loads and stores priced or not.
    std::uint64_t paper_round_trip_polling = 2000;
    std::uint64_t paper_round_trip_halting = 3000;

    /// Computation k times dearer, whichever model charges it (a slower core).
    constexpr cost_model& scale_compute(double k) noexcept {
        compute_cycles_per_ns *= k;
        cycles_per_block *= k;
        return *this;
    }
};

} // namespace tacomesh::scc::emulated
