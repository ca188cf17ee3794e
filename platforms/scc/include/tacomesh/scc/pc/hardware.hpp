#pragma once
// The SCC hardware-access layer on a multiprocessor PC, bare metal: the
// stand-in on which the chip build boots under QEMU (platforms/scc/pc,
// README "Booting under QEMU"), beside chip/hardware.hpp (a real SCC core)
// and emulated/hardware.hpp (the host emulation). One 32-bit image runs on
// every core of the PC, started by the boot code in platforms/scc/pc; the
// SCC's pieces have these stand-ins:
//   the MPBs         a reserved region of RAM, 8 KB per core, in the image;
//   LOCK registers   a word per core, taken with xchg;
//   LINT0 / GLCFG    the local APIC's fixed inter-processor interrupt
//                    (vector `lint_vector`), whose handler sets the flag
//                    take_interrupt() reads, as the chip's LINT0 handler does;
//   LUTs             a table per core in the region (the PC maps nothing
//                    through it: reading and writing it is all there is);
//   shared DCM DRAM  a region of RAM in the image.
// What the PC does not have: MPBT lines that go stale, a write-combine
// buffer that holds one line, an L2 that only the flush routine empties.
// Its caches are coherent, so CL1INVMB, the WCB push and the L2 flushes are
// the fences x86's ordering needs and nothing more; the staleness the
// protocol guards against is tested on the emulation (tests/), the boot
// tests that the protocol code runs on real cores, with real interrupts.
//
// Unlike the SCC, where every core runs its own copy of the image in
// private memory, the PC's cores share one image: per-core state (the
// interrupt flag) is an array indexed by the core.
#include <cstddef>
#include <cstdint>

#include <tacomesh/scc/geometry.hpp>
#include <tacomesh/scc/hardware.hpp>

/// Called, if set, by the timer and preemption interrupts with the
/// interrupted instruction's address, interrupts off, on the interrupted
/// stack (boot.S; the TACO platform sets them).
extern "C" {
extern void (*tacomesh_pc_timer_hook)(std::uint32_t eip) noexcept;
extern void (*tacomesh_pc_preempt_hook)(std::uint32_t eip) noexcept;
}

namespace tacomesh::scc::pc {

/// The interrupt vectors the boot code's IDT serves (platforms/scc/pc/boot.S).
inline constexpr std::uint8_t lint_vector = 0x40;   ///< the SCC's LINT0: tacomesh_scc_lint_handler
inline constexpr std::uint8_t timer_vector = 0x41;  ///< the local APIC timer (bounds halt())
inline constexpr std::uint8_t preempt_vector = 0x42; ///< interrupts a computation for urgent invocations
inline constexpr std::uint8_t spurious_vector = 0xFF;

/// Shared DRAM of the stand-in (the chip's four 16 MB segments would not fit
/// the small machine QEMU is given).
inline constexpr std::size_t shared_ram_bytes = std::size_t(1) << 20;

/// The local APIC, at its power-up address (the boot code does not move it).
namespace apic {
inline constexpr std::uintptr_t base = 0xFEE0'0000u;
inline constexpr std::uintptr_t id = 0x020, eoi = 0x0B0, svr = 0x0F0, icr_low = 0x300, icr_high = 0x310,
                                lvt_timer = 0x320, lvt_lint0 = 0x350, lvt_lint1 = 0x360, lvt_error = 0x370,
                                timer_initial = 0x380, timer_divide = 0x3E0;
inline constexpr std::uint32_t icr_pending = 1u << 12; ///< delivery status: the last IPI not yet accepted
inline constexpr std::uint32_t assert_level = 1u << 14; ///< set for every delivery mode but INIT de-assert
inline volatile std::uint32_t& reg(std::uintptr_t offset) noexcept {
    return *reinterpret_cast<volatile std::uint32_t*>(base + offset);
}
/// This core's APIC ID, which is its core index (the boot code checks that
/// QEMU numbered the cores 0..n-1).
inline core_index self() noexcept { return reg(id) >> 24; }
/// Send `low` (vector, delivery mode, shorthand) to APIC `dest`, once the
/// previous IPI has been accepted (a second ICR write before that is lost).
inline void send(core_index dest, std::uint32_t low) noexcept {
    while (reg(icr_low) & icr_pending) asm volatile("pause");
    reg(icr_high) = dest << 24;
    reg(icr_low) = low;
}
} // namespace apic

namespace detail {

/// What the PC gives the SCC's on-chip and off-chip pieces: one region in
/// the image's .bss (zero at boot), shared by every core.
struct shared_region {
    alignas(4096) std::byte mpb[max_cores][mpb_bytes_per_core];
    alignas(line_bytes) std::uint32_t locks[max_cores]; ///< 0 free, 1 taken
    /// The LUT stand-ins, as bytes: lut_entry's member initialisers would
    /// make the region need a constructor, which bare metal does not run.
    std::byte luts[max_cores][lut_entries][sizeof(lut_entry)];
    /// Per-core flags of the LINT0 stand-in, set by the handler.
    std::uint32_t lint_pending[max_cores];
    alignas(4096) std::byte dram[shared_ram_bytes];
};
inline constinit shared_region region{};
/// The cores the boot code brought up (its command line's cores=N).
inline constinit core_index booted_cores = 0;

/// EFLAGS, then interrupts off; `restore_flags` puts IF back as it was.
inline std::uintptr_t save_flags_cli() noexcept {
    std::uintptr_t flags;
    asm volatile("pushf\n\tpop %0\n\tcli" : "=r"(flags)::"memory");
    return flags;
}
inline void restore_flags(std::uintptr_t flags) noexcept { asm volatile("push %0\n\tpopf" ::"r"(flags) : "memory", "cc"); }

/// The time-stamp counter (the boot's delays, the runtime's clock, cycles()).
inline std::uint64_t rdtsc() noexcept {
    std::uint32_t lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (std::uint64_t(hi) << 32) | lo;
}

/// A full fence that the P54C-era CPU models have (no mfence before SSE2):
/// a locked read-modify-write of the stack drains the store buffer.
inline void full_fence() noexcept { asm volatile("lock addl $0, (%%esp)" ::: "memory", "cc"); }

/// Copies the compiler keeps (volatile) and does not turn into memcpy,
/// which a freestanding image does not have: aligned 32-bit words where
/// both ends and the size allow (each word read or written whole, as x86
/// does aligned words), bytes otherwise.
using word = std::uint32_t __attribute__((may_alias));
inline bool word_aligned(const void* a, const void* b, std::size_t n) noexcept {
    return ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) | n) & 3u) == 0;
}
/// Loads go up from the first word.
inline void load(void* to, const void* from, std::size_t n) noexcept {
    if (word_aligned(to, from, n)) {
        for (std::size_t i = 0; i < n / 4; ++i) static_cast<word*>(to)[i] = static_cast<const volatile word*>(from)[i];
    } else {
        for (std::size_t i = 0; i < n; ++i)
            static_cast<unsigned char*>(to)[i] = static_cast<const volatile unsigned char*>(from)[i];
    }
}
/// Stores go down from the last word, so that the first word of what one
/// store writes becomes visible last (x86 makes a core's stores visible in
/// order, and a core's loads are not reordered either): a reader that finds
/// the first word new finds the rest new. That is as much of the SCC's
/// whole-line write (the write-combine buffer) as the MPB channels rely
/// on: a header line's first word is its sequence number, and a poll that
/// finds the number it waits for must read the length that came with it.
inline void store(void* to, const void* from, std::size_t n) noexcept {
    if (word_aligned(to, from, n)) {
        for (std::size_t i = n / 4; i-- > 0;) static_cast<volatile word*>(to)[i] = static_cast<const word*>(from)[i];
    } else {
        for (std::size_t i = n; i-- > 0;)
            static_cast<volatile unsigned char*>(to)[i] = static_cast<const unsigned char*>(from)[i];
    }
}

} // namespace detail

/// One core's access to the PC stand-in (concept `tacomesh::scc::hardware`),
/// in the chip's shape: an SCC of 48 cores of which `core_count()` booted.
class hardware {
public:
    /// `cores`: how many cores the application runs on; by default every
    /// core the boot code brought up.
    explicit hardware(core_index cores = detail::booted_cores) noexcept : core_(apic::self()), cores_(cores) {}

    core_index core() const noexcept { return core_; }
    core_index core_count() const noexcept { return cores_; }
    static constexpr core_index max_cores = scc::max_cores;
    static constexpr chip_shape shape() noexcept { return {}; }

    void mpb_load(core_index c, std::size_t off, void* dst, std::size_t n) noexcept {
        detail::load(dst, &detail::region.mpb[c][off], n);
    }
    void mpb_store(core_index c, std::size_t off, const void* src, std::size_t n) noexcept {
        detail::store(&detail::region.mpb[c][off], src, n);
    }
    /// The chip pushes the write-combine buffer out; here the store buffer
    /// is drained, so that what follows (a poll of an acknowledgement, an
    /// interrupt) comes after the stores in every core's view.
    void flush_wcb() noexcept { detail::full_fence(); }
    /// Coherent caches: nothing goes stale; a compiler barrier keeps the
    /// loads after it from being hoisted above it, as on the chip.
    void cl1invmb() noexcept { asm volatile("" ::: "memory"); }

    bool test_and_set(core_index c) noexcept {
        return __atomic_exchange_n(&detail::region.locks[c], 1u, __ATOMIC_ACQUIRE) == 0;
    }
    void unlock(core_index c) noexcept { __atomic_store_n(&detail::region.locks[c], 0u, __ATOMIC_RELEASE); }

    /// A fixed IPI to core c (its APIC ID), interrupts off so that no
    /// handler on this core writes the ICR between its two halves.
    void interrupt(core_index c) noexcept {
        detail::full_fence(); // what the interrupt announces is visible first
        const std::uintptr_t flags = detail::save_flags_cli();
        apic::send(c, apic::assert_level | lint_vector); // fixed delivery, physical destination, edge
        detail::restore_flags(flags);
    }
    bool take_interrupt() noexcept {
        return __atomic_exchange_n(&detail::region.lint_pending[core_], 0u, __ATOMIC_SEQ_CST) != 0;
    }
    /// As on the chip: `sti; hlt` until the handler ran or `limit` cycles
    /// passed, woken at least once a timer period by the local APIC timer
    /// the boot code arms (so the overshoot is at most one period).
    void halt(std::uint64_t limit) noexcept {
        if (limit == 0) return;
        const std::uint64_t start = cycles();
        const std::uintptr_t flags = detail::save_flags_cli();
        while (__atomic_load_n(&detail::region.lint_pending[core_], __ATOMIC_ACQUIRE) == 0 &&
               cycles() - start < limit)
            asm volatile("sti\n\thlt\n\tcli" ::: "memory");
        detail::restore_flags(flags);
    }

    lut_entry lut(core_index c, unsigned i) const noexcept {
        lut_entry e;
        detail::load(&e, &detail::region.luts[c][i % lut_entries], sizeof e);
        return e;
    }
    void set_lut(core_index c, unsigned i, lut_entry e) noexcept {
        detail::store(&detail::region.luts[c][i % lut_entries], &e, sizeof e);
    }

    void dram_load(std::size_t a, void* dst, std::size_t n) noexcept { detail::load(dst, &detail::region.dram[a], n); }
    void dram_store(std::size_t a, const void* src, std::size_t n) noexcept {
        detail::store(&detail::region.dram[a], src, n);
    }
    /// Coherent caches: a fence orders this core's accesses, nothing more.
    void invalidate_l1() noexcept { detail::full_fence(); }
    void flush_l2() noexcept { detail::full_fence(); }
    void flush_l2_range(std::size_t, std::size_t) noexcept { detail::full_fence(); }

    std::uint64_t cycles() const noexcept { return detail::rdtsc(); }
    void idle_since(std::uint64_t) noexcept {}

private:
    core_index core_;
    core_index cores_;
};

static_assert(tacomesh::scc::hardware<hardware>);

} // namespace tacomesh::scc::pc
