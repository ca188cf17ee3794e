#pragma once
// The SCC hardware-access layer on a real chip: one P54C core of the SCC,
// running bare metal (no OS), 32-bit protected mode, ring 0, paging on, and
// the default LUT map that sccKit sets up (platforms/scc/README.md, "Booting
// on a real SCC"). Every method is a register access, a load/store through
// a mapped page, or one instruction; nothing here allocates, throws or needs
// a C library, so it builds freestanding (-m32 -ffreestanding -nostdlib;
// CTest scc.chip_build checks that). On a 64-bit host the header still
// compiles, so that code written against the concept can be type-checked
// there; running it anywhere but on an SCC core faults.
//
// Where the constants come from (none of them could be checked against a
// chip; README "What is not verified"):
//   [thesis]  Ziwisky, Xipx thesis (Marquette): Figure 4.3 (LUT entry),
//             Figure 4.4 (default LUT map), Appendix B (L2 flush routine);
//   [EAS]     the SCC External Architecture Specification, as transcribed in
//             Barrelfish's devices/rck.dev (register offsets and fields) and
//             in SCC Linux's include/linux/sccsys.h (same offsets, the LUT
//             and MYTILEID bit layout, the GLCFG interrupt masks);
//   [map]     the default core-address map as used by SCC Linux's sccsys.c,
//             Barrelfish's kernel rck.c and BareMichael's scc.h (MPB
//             segments from 0xC0000000, CRB segments from 0xE0000000, own
//             CRB at 0xF8000000, FPGA registers at 0xF9000000).
#include <concepts>
#include <cstddef>
#include <cstdint>

#include <tacomesh/scc/geometry.hpp>
#include <tacomesh/scc/hardware.hpp>

/// The interrupt handler for the LINT0 pin (README: start-up interface).
/// Defined in platforms/scc/chip/start.cpp. The boot code's IDT stub for the
/// LINT0 vector saves the caller-saved registers (eax, ecx, edx), calls it,
/// writes the local APIC's EOI register and returns with iret. It clears the
/// core's own GLCFG LINT0 bit first and only then sets the flag that
/// `chip::hardware::take_interrupt()` reads, so a raise that a concurrent
/// read-modify-write of the register swallowed is covered by the flag.
extern "C" void tacomesh_scc_lint_handler(void) noexcept;

namespace tacomesh::scc::chip {

/// The default core-physical address map (one LUT entry per 16 MB segment).
/// The backend needs: private RAM (code, data, stack), the shared DRAM
/// segments at `shared_ram`, the MPB segments of all 24 tiles, the CRB
/// segments of all 24 tiles and the own CRB window. It does not use the own
/// MPB window at 0xD8000000 (see `flush_area`).
namespace memory_map {

inline constexpr std::uintptr_t segment_bytes = lut_segment_bytes;
/// Shared DRAM: LUT entries 0x80..0x83, 64 MB [thesis Fig. 4.4]. The DCM
/// region of `dram_load/store`; the same entries of every core point at the
/// same DRAM segments, so an address means the same bytes on every core
/// (MESH paper, III.A). A bigger shared region takes more entries (README).
inline constexpr std::uintptr_t shared_ram = 0x8000'0000u;
inline constexpr std::size_t shared_ram_bytes = 4 * lut_segment_bytes;
/// MPB of tile t: LUT entry 0xC0 + t [map]. (The thesis' Fig. 4.4 prints
/// entry 193 = 0xC1 for tile 0 but 215 = 0xD7 for tile 23; 0xC0 is what
/// every code base uses and what makes 24 entries end at 0xD7.)
inline constexpr std::uintptr_t mpb_tile0 = 0xC000'0000u;
/// The own tile's MPB seen through entry 0xD8 [map]; RCCE and the thesis
/// use it ("local MPB bypass"). Not used here: whether sccKit sets the
/// bypass bit on that entry is not verified, and the bypass bit corrupts
/// the MPB [thesis 4.4.4].
inline constexpr std::uintptr_t mpb_own = 0xD800'0000u;
/// CRB (configuration registers) of tile t: LUT entry 0xE0 + t [thesis
/// Fig. 4.4, map].
inline constexpr std::uintptr_t crb_tile0 = 0xE000'0000u;
/// The own tile's CRB: LUT entry 0xF8 [map]; the only way to learn which
/// tile one is on (MYTILEID).
inline constexpr std::uintptr_t crb_own = 0xF800'0000u;
/// FPGA register bank, entry 0xF9 [map]: the FPGA's global interrupt
/// controller lives here on sccKit >= 1.4 (README, "Interrupts"); unused.
inline constexpr std::uintptr_t fpga_registers = 0xF900'0000u;

constexpr std::uintptr_t mpb_of_tile(core_index tile) noexcept { return mpb_tile0 + tile * segment_bytes; }
/// Core c's 8 KB: the first or second half of its tile's 16 KB [EAS, map].
constexpr std::uintptr_t mpb_of_core(core_index core) noexcept {
    return mpb_of_tile(tile_of(core)) + (core % cores_per_tile) * mpb_bytes_per_core;
}
constexpr std::uintptr_t crb_of_tile(core_index tile) noexcept { return crb_tile0 + tile * segment_bytes; }

/// The two 256 KB L2 flush areas of `flush_l2` [thesis App. B]: inside the
/// own tile's MPB segment, just above the 16 KB the MPB occupies. A read
/// there wraps to MPB offset (address mod 16 KB), so it is as fast as an MPB
/// read, yet the L2 sees a new address: every read misses. The pages of the
/// two areas (0x4000..0x84000 of the segment) must be mapped cacheable
/// write-back WITHOUT the PMB bit, unlike the MPB's own first 16 KB: MPBT
/// lines bypass the L2 and would evict nothing. They are only read, so they
/// never become dirty and the L2 never writes them back into the MPB.
inline constexpr std::uintptr_t flush_area_offset = 0x4000;
constexpr std::uintptr_t flush_area(core_index tile, unsigned which) noexcept {
    return mpb_of_tile(tile) + flush_area_offset + (which & 1u) * l2_bytes;
}

} // namespace memory_map

/// Offsets in a tile's CRB [EAS via Barrelfish rck.dev and SCC Linux sccsys.h].
namespace crb {
inline constexpr std::uintptr_t glcfg0 = 0x010;   ///< core 0's GLCFG; core 1's at 0x018
inline constexpr std::uintptr_t glcfg1 = 0x018;
inline constexpr std::uintptr_t mytileid = 0x100; ///< bits 10..7 y, 6..3 x, 2..0 the reader's core (port) id
inline constexpr std::uintptr_t lock0 = 0x200;    ///< core 0's test-and-set register; core 1's at 0x400
inline constexpr std::uintptr_t lock1 = 0x400;
inline constexpr std::uintptr_t lut0 = 0x800;     ///< core 0's 256 LUT entries, 8 bytes apart
inline constexpr std::uintptr_t lut1 = 0x1000;
inline constexpr std::uintptr_t lut_stride = 8;
/// GLCFG bit 1 ("INTR") drives the core's LINT0 pin once its local APIC is
/// enabled; bit 0 ("NMI") drives LINT1 [EAS via rck.dev; the pin mapping is
/// the P54C's, as Barrelfish uses it]. The backend uses LINT0.
inline constexpr std::uint32_t glcfg_lint0 = 1u << 1;
inline constexpr std::uint32_t glcfg_lint1 = 1u << 0;
} // namespace crb

/// A LUT register's bits [thesis Fig. 4.3; EAS via rck.dev and sccsys.h]:
/// 21 bypass, 20..17 destination y, 16..13 destination x, 12..10
/// sub-destination (router port), 9..0 bits 33..24 of the sub-address.
constexpr std::uint32_t encode(const lut_entry& e) noexcept {
    return (std::uint32_t(e.bypass) << 21) | (std::uint32_t(e.dest_y & 0xFu) << 17) |
           (std::uint32_t(e.dest_x & 0xFu) << 13) | (std::uint32_t(e.sub & 0x7u) << 10) |
           (std::uint32_t(e.address_high) & 0x3FFu);
}
constexpr lut_entry decode(std::uint32_t raw) noexcept {
    lut_entry e;
    e.bypass = ((raw >> 21) & 1u) != 0;
    e.dest_y = std::uint8_t((raw >> 17) & 0xFu);
    e.dest_x = std::uint8_t((raw >> 13) & 0xFu);
    e.sub = lut_entry::port((raw >> 10) & 0x7u);
    e.address_high = std::uint16_t(raw & 0x3FFu);
    return e;
}
static_assert(encode(lut_entry{.dest_x = 0, .dest_y = 0, .sub = lut_entry::mpb, .address_high = 0}) == 0xC00u);
static_assert(encode(lut_entry{.dest_x = 5, .dest_y = 3, .sub = lut_entry::crb, .address_high = 0x3FF, .bypass = true}) ==
              ((1u << 21) | (3u << 17) | (5u << 13) | (2u << 10) | 0x3FFu));
static_assert(decode(encode(lut_entry{.dest_x = 4, .dest_y = 2, .sub = lut_entry::west, .address_high = 0x123})) ==
              lut_entry{.dest_x = 4, .dest_y = 2, .sub = lut_entry::west, .address_high = 0x123});

/// MYTILEID -> core index: (y * 6 + x) * 2 + core bit [EAS via sccsys.h].
constexpr core_index core_from_tileid(std::uint32_t tileid) noexcept {
    const core_index x = (tileid >> 3) & 0xFu, y = (tileid >> 7) & 0xFu, z = tileid & 0x7u;
    return (y * 6 + x) * cores_per_tile + (z & 1u);
}
static_assert(core_from_tileid((3u << 7) | (5u << 3) | 1u) == 47);
static_assert(core_from_tileid((1u << 7) | (2u << 3)) == 16);

namespace detail {

/// Per-core state: every core runs its own copy of the image in private
/// memory, so a namespace-scope variable is per core. Set by the LINT0
/// handler, cleared by `take_interrupt()`.
inline volatile std::uint32_t lint_pending = 0;
/// Which flush area each L2 set is flushed from next (`flush_l2`): bit k
/// for the set that line k of a flush area maps to. Each flush of a set
/// flips its bit (before the WBINVD: the loop after it only reads). Per set,
/// not one toggle for all: after flushing set s from area X, s holds four X
/// lines and no line of area Y, so the next flush of s, from Y, misses four
/// times, whichever sets range flushes touched in between. (With one global
/// toggle, X lines of a set the last range flush skipped would still be
/// cached the next time X is read, and hits evict nothing.)
inline std::uint32_t flush_area_bits[l2_sets / 32] = {};

using word = std::uint32_t __attribute__((may_alias));

template <class T>
inline volatile T& reg(std::uintptr_t address) noexcept {
    return *reinterpret_cast<volatile T*>(address);
}

/// Copy loops written out (no memcpy in a freestanding image): 32-bit words
/// when everything is 4-byte aligned, bytes otherwise. The chip side is
/// volatile, so the compiler neither drops, merges nor turns the loop into a
/// library call.
inline void load(std::uintptr_t from, void* to, std::size_t n) noexcept {
    if (((from | reinterpret_cast<std::uintptr_t>(to) | n) & 3u) == 0) {
        auto* d = static_cast<word*>(to);
        for (std::size_t i = 0; i < n / 4; ++i) d[i] = reinterpret_cast<const volatile word*>(from)[i];
    } else {
        auto* d = static_cast<unsigned char*>(to);
        for (std::size_t i = 0; i < n; ++i) d[i] = reinterpret_cast<const volatile unsigned char*>(from)[i];
    }
}
inline void store(std::uintptr_t to, const void* from, std::size_t n) noexcept {
    if (((to | reinterpret_cast<std::uintptr_t>(from) | n) & 3u) == 0) {
        const auto* s = static_cast<const word*>(from);
        for (std::size_t i = 0; i < n / 4; ++i) reinterpret_cast<volatile word*>(to)[i] = s[i];
    } else {
        const auto* s = static_cast<const unsigned char*>(from);
        for (std::size_t i = 0; i < n; ++i) reinterpret_cast<volatile unsigned char*>(to)[i] = s[i];
    }
}

/// EFLAGS, then interrupts off; `restore_flags` puts IF back as it was.
inline std::uintptr_t save_flags_cli() noexcept {
    std::uintptr_t flags;
    asm volatile("pushf\n\tpop %0\n\tcli" : "=r"(flags)::"memory");
    return flags;
}
inline void restore_flags(std::uintptr_t flags) noexcept { asm volatile("push %0\n\tpopf" ::"r"(flags) : "memory", "cc"); }

} // namespace detail

/// One core's access to a real SCC (concept `tacomesh::scc::hardware`). Cheap
/// to construct (one register read); several objects on one core share the
/// per-core state (the LINT flag, the flush-area alternation).
class hardware {
public:
    /// `cores`: how many cores the application runs on (cores 0..cores-1 must
    /// all have been booted); the start-up code passes TACOMESH_SCC_CORES.
    explicit hardware(core_index cores = max_cores) noexcept
        : core_(core_from_tileid(detail::reg<std::uint32_t>(memory_map::crb_own + crb::mytileid))),
          cores_(cores) {}

    core_index core() const noexcept { return core_; }
    core_index core_count() const noexcept { return cores_; }
    static constexpr core_index max_cores = scc::max_cores;
    static constexpr chip_shape shape() noexcept { return {}; }

    /// Through the MPBT pages of core c's MPB: the L1 caches the lines read
    /// (stale until `cl1invmb()`), stores go through the write-combine buffer.
    void mpb_load(core_index c, std::size_t off, void* dst, std::size_t n) noexcept {
        detail::load(memory_map::mpb_of_core(c) + off, dst, n);
    }
    void mpb_store(core_index c, std::size_t off, const void* src, std::size_t n) noexcept {
        detail::store(memory_map::mpb_of_core(c) + off, src, n);
    }
    /// A store to the reserved line of the own MPB pushes a partly filled WCB
    /// line out (the WCB holds one line; a store to another MPBT line evicts
    /// it) [thesis 4.3, "Optimizations for SCC Hardware"].
    void flush_wcb() noexcept {
        detail::reg<std::uint32_t>(memory_map::mpb_of_core(core_) + mpb_flush_line) = 0;
    }
    /// CL1INVMB, opcode 0F 0A [EAS via sccsys.h / BareMichael scc.h]: drops
    /// every MPBT line from L1 (no write-back: MPBT lines are never dirty).
    void cl1invmb() noexcept { asm volatile(".byte 0x0f, 0x0a" ::: "memory"); }

    /// Reading LOCK0/1 returns 1 in bit 0 when the read took the lock (the
    /// register is clear-on-read); any write frees it [EAS via sccsys.c].
    bool test_and_set(core_index c) noexcept {
        return (detail::reg<std::uint32_t>(lock_register(c)) & 1u) != 0;
    }
    void unlock(core_index c) noexcept {
        asm volatile("" ::: "memory"); // the critical section's stores come first
        detail::reg<std::uint32_t>(lock_register(c)) = 0;
    }

    /// Sets the LINT0 bit in core c's GLCFG register (read-modify-write; the
    /// target's handler clears it). The FPGA interrupt controller is the
    /// alternative on sccKit >= 1.4 (README, "Interrupts").
    void interrupt(core_index c) noexcept {
        asm volatile("" ::: "memory"); // what the interrupt announces is written first
        volatile std::uint32_t& glcfg = detail::reg<std::uint32_t>(glcfg_register(c));
        const std::uint32_t value = glcfg;
        if ((value & crb::glcfg_lint0) == 0) glcfg = value | crb::glcfg_lint0;
    }
    /// Whether the LINT0 handler ran since the last call (xchg: atomic with
    /// respect to the handler on this core).
    bool take_interrupt() noexcept { return __atomic_exchange_n(&detail::lint_pending, 0u, __ATOMIC_SEQ_CST) != 0; }
    /// `sti; hlt` until the LINT0 handler has run or `limit` cycles have
    /// passed (limit 0: return at once). The flag is tested with interrupts
    /// off and `sti` delays them by one instruction, so an interrupt between
    /// the test and `hlt` still wakes `hlt`. The bound relies on the local
    /// APIC timer that the start-up code arms (README): every tick wakes
    /// `hlt`, so the overshoot is at most one timer period. Leaves the
    /// interrupt flag as it found it.
    void halt(std::uint64_t limit) noexcept {
        if (limit == 0) return;
        const std::uint64_t start = cycles();
        const std::uintptr_t flags = detail::save_flags_cli();
        while (detail::lint_pending == 0 && cycles() - start < limit) {
            asm volatile("sti\n\thlt\n\tcli" ::: "memory");
        }
        detail::restore_flags(flags);
    }

    /// Core c's LUT entry i, through its tile's CRB (every LUT is mapped in
    /// the default set-up). Rewriting an entry that maps what the target
    /// core is executing or using as its stack is the caller's problem.
    lut_entry lut(core_index c, unsigned i) const noexcept { return decode(detail::reg<std::uint32_t>(lut_register(c, i))); }
    void set_lut(core_index c, unsigned i, lut_entry e) noexcept {
        detail::reg<std::uint32_t>(lut_register(c, i)) = encode(e);
    }

    /// DCM memory: `a` is an offset into the shared region (a + n <=
    /// memory_map::shared_ram_bytes), mapped cacheable write-back.
    void dram_load(std::size_t a, void* dst, std::size_t n) noexcept { detail::load(memory_map::shared_ram + a, dst, n); }
    void dram_store(std::size_t a, const void* src, std::size_t n) noexcept {
        detail::store(memory_map::shared_ram + a, src, n);
    }
    /// WBINVD: L1 written back to L2 and invalidated. The L2 does not take
    /// part; that is `flush_l2()`.
    void invalidate_l1() noexcept { asm volatile("wbinvd" ::: "memory"); }
    /// The thesis' Appendix B routine: interrupts off, WBINVD (so that no L1
    /// write-back disturbs the L2's PLRU state during the reads), then for
    /// every L2 set four consecutive reads one way-size (64 KB) apart from a
    /// flush area none of whose lines is in the L2: with the PLRU policy four
    /// misses in a row replace all four ways, writing back whatever was
    /// dirty. The two areas alternate per set (`detail::flush_area_bits`).
    /// Between WBINVD and the last read nothing may leave a dirty line in L1
    /// (its write-back would upset the PLRU state, thesis B.3), so WBINVD and
    /// the loop are one asm statement that only reads memory: no compiler
    /// spill can land in between.
    void flush_l2() noexcept {
        const std::uintptr_t flags = detail::save_flags_cli();
        for (std::uint32_t& bits : detail::flush_area_bits) bits = ~bits;
        flush_sets(memory_map::flush_area(tile_of(core_), 0), 0, l2_sets);
        detail::restore_flags(flags);
    }
    /// The same routine over only the sets that DCM bytes [a, a + n) map to
    /// (identity paging: core-physical address = memory_map::shared_ram + a);
    /// 64 KB or more is the whole L2.
    void flush_l2_range(std::size_t a, std::size_t n) noexcept {
        if (n == 0) return;
        const std::size_t first = a / line_bytes, lines = (a + n - 1) / line_bytes - first + 1;
        if (lines >= l2_sets) return flush_l2();
        const std::uintptr_t flags = detail::save_flags_cli();
        const std::uintptr_t area0 = memory_map::flush_area(tile_of(core_), 0);
        const std::size_t k0 = flush_line_of((memory_map::shared_ram + first * line_bytes) / line_bytes, area0);
        for (std::size_t l = 0; l < lines; ++l) {
            const std::size_t k = (k0 + l) % l2_sets;
            detail::flush_area_bits[k / 32] ^= 1u << (k % 32);
        }
        flush_sets(area0, k0, lines);
        detail::restore_flags(flags);
    }
    /// RDTSC: the core's time-stamp counter (core clock).
    std::uint64_t cycles() const noexcept {
        std::uint32_t lo, hi;
        asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
        return (std::uint64_t(hi) << 32) | lo;
    }

    /// A wait since cycle t that found nothing: on the chip the time simply
    /// passed.
    void idle_since(std::uint64_t) noexcept {}

    /// For the LINT0 handler: clear the own GLCFG LINT0 bit, through the own
    /// CRB window (works before any `hardware` object exists).
    static void acknowledge_lint() noexcept {
        const core_index self = core_from_tileid(detail::reg<std::uint32_t>(memory_map::crb_own + crb::mytileid));
        volatile std::uint32_t& glcfg =
            detail::reg<std::uint32_t>(memory_map::crb_own + (self % cores_per_tile ? crb::glcfg1 : crb::glcfg0));
        glcfg = glcfg & ~crb::glcfg_lint0;
    }

private:
    /// Flush-area line k (of 2048 per way) and the line of the L2 set it
    /// shares: both areas map alike, l2_bytes being a multiple of the way.
    static std::size_t flush_line_of(std::uintptr_t line, std::uintptr_t area0) noexcept {
        return (line + l2_sets - (area0 / line_bytes) % l2_sets) % l2_sets;
    }
    /// WBINVD, then for n flush lines from line k on (wrapping at l2_sets):
    /// four reads one way apart, from the area that bit k of
    /// detail::flush_area_bits picks (`bt` reads it as a bit string). Only
    /// loads after WBINVD; the operand sizes follow the registers, so the
    /// same text assembles for the 64-bit host check too.
    static void flush_sets(std::uintptr_t area0, std::uintptr_t k, std::uintptr_t n) noexcept {
        constexpr std::size_t way_bytes = l2_bytes / l2_ways;
        static_assert(l2_ways == 4 && way_bytes / line_bytes == l2_sets && l2_bytes % way_bytes == 0);
        static_assert(line_bytes == 32 && (l2_sets & (l2_sets - 1)) == 0);
        std::uintptr_t p, v;
        asm volatile("wbinvd\n\t"
                     "test %[n], %[n]\n\t"
                     "jz 2f\n"
                     "1:\n\t"
                     "bt %[k], (%[bits])\n\t"   // CF = which area
                     "sbb %[p], %[p]\n\t"
                     "and %[area_bytes], %[p]\n\t"
                     "add %[area0], %[p]\n\t"
                     "mov %[k], %[v]\n\t"
                     "shl $5, %[v]\n\t"           // k * line_bytes
                     "add %[v], %[p]\n\t"
                     "mov (%[p]), %[v]\n\t"
                     "mov %c[way1](%[p]), %[v]\n\t"
                     "mov %c[way2](%[p]), %[v]\n\t"
                     "mov %c[way3](%[p]), %[v]\n\t"
                     "inc %[k]\n\t"
                     "and %[set_mask], %[k]\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b\n"
                     "2:"
                     : [k] "+r"(k), [n] "+r"(n), [p] "=&r"(p), [v] "=&r"(v)
                     : [bits] "r"(detail::flush_area_bits), [area0] "r"(area0), [area_bytes] "i"(l2_bytes),
                       [way1] "i"(way_bytes), [way2] "i"(2 * way_bytes), [way3] "i"(3 * way_bytes),
                       [set_mask] "i"(l2_sets - 1)
                     : "memory", "cc");
    }

    static std::uintptr_t lock_register(core_index c) noexcept {
        return memory_map::crb_of_tile(tile_of(c)) + (c % cores_per_tile ? crb::lock1 : crb::lock0);
    }
    static std::uintptr_t glcfg_register(core_index c) noexcept {
        return memory_map::crb_of_tile(tile_of(c)) + (c % cores_per_tile ? crb::glcfg1 : crb::glcfg0);
    }
    static std::uintptr_t lut_register(core_index c, unsigned i) noexcept {
        return memory_map::crb_of_tile(tile_of(c)) + (c % cores_per_tile ? crb::lut1 : crb::lut0) +
               (i % lut_entries) * crb::lut_stride;
    }

    core_index core_;
    core_index cores_;
};

static_assert(tacomesh::scc::hardware<hardware>);

} // namespace tacomesh::scc::chip
