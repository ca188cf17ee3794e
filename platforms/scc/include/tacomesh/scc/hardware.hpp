#pragma once
// The SCC backend's hardware-access layer (docs: platforms/scc/README.md):
// everything the protocol code (MPB channels, wake-up, cache control) needs
// from the chip, small and explicit, so that it has two implementations
// side by side:
//   chip/hardware.hpp      the registers of a real SCC core (32-bit, bare metal);
//   emulated/hardware.hpp  a host emulation in which the SCC's rules bite:
//                          stale MPBT lines until CL1INVMB, a one-line
//                          write-combine buffer, an L2 that only the flush
//                          routine empties, locks, interrupts and modelled cycles.
// Nothing above this layer touches an SCC address or instruction directly.
#include <concepts>
#include <cstddef>
#include <cstdint>

#include <tacomesh/scc/geometry.hpp>

namespace tacomesh::scc {

/// One core's access to the chip. Offsets into a core's MPB are bytes in
/// [0, mpb_bytes_per_core); DRAM addresses are offsets into the shared DCM
/// memory the LUTs map (README: memory map).
///
/// - `mpb_load(c, off, dst, n)`: read core c's MPB through the L1 (MPBT
///   lines are cached in L1 only: a line read once stays, stale, until
///   `cl1invmb()`). `mpb_store(c, off, src, n)`: write it through the
///   write-combine buffer, which holds one line and reaches the MPB only
///   when the line is full or a store to another MPBT line pushes it out;
///   `flush_wcb()` is that push (a store to a line of the core's own).
/// - `cl1invmb()`: drop every MPBT line from L1 (not a flush: L1 never
///   holds dirty MPBT data).
/// - `test_and_set(c)`: core c's LOCK register (tile register LOCK0/LOCK1):
///   true when this call took it; `unlock(c)` frees it.
/// - `interrupt(c)`: raise core c's LINT pin (GLCFG register, or the GIC on
///   chips with the FPGA interrupt controller); `take_interrupt()`: whether
///   one arrived since the last call (the handler's flag); `halt(limit)`:
///   `hlt` until an interrupt or until `limit` cycles have passed.
/// - `lut(c, i)` / `set_lut(c, i, e)`: core c's LUT entry i (any core's LUT
///   is mapped, as in the default set-up).
/// - `dram_load(a, dst, n)` / `dram_store(a, src, n)`: DCM memory through L1
///   and L2 (write-back: another core sees a store only after this core's
///   `flush_l2()` and its own invalidate); `flush_l2()`: the thesis'
///   Appendix B routine (WBINVD, then reads of a flush area that map every
///   L2 set four times); `flush_l2_range(a, n)`: the same routine over only
///   the sets [a, a + n) maps to (how MESH flushes one object: about
///   300 N + 7 500 cycles for N lines). `invalidate_l1()`: WBINVD alone.
/// - `shape()`: the chip's (the SCC's on the chip; the emulation's may be
///   another, geometry.hpp); `H::max_cores`: the most cores any chip it
///   runs on has, which sizes fixed per-peer tables (no heap on the chip).
/// - `cycles()`: the time-stamp counter. `idle_since(t)`: the core waited
///   since cycle t and found nothing; on the chip time simply passed (a
///   no-op), the emulation leaves the wait out of its modelled cycles.
template <class H>
concept hardware = requires(H& h, const H& ch, core_index c, std::size_t off, void* dst, const void* src,
                            std::size_t n, unsigned i, lut_entry e, std::uint64_t limit) {
    { ch.core() } -> std::same_as<core_index>;
    { ch.core_count() } -> std::same_as<core_index>;
    { ch.shape() } -> std::same_as<chip_shape>;
    requires H::max_cores >= 1;
    { h.mpb_load(c, off, dst, n) } -> std::same_as<void>;
    { h.mpb_store(c, off, src, n) } -> std::same_as<void>;
    { h.flush_wcb() } -> std::same_as<void>;
    { h.cl1invmb() } -> std::same_as<void>;
    { h.test_and_set(c) } -> std::same_as<bool>;
    { h.unlock(c) } -> std::same_as<void>;
    { h.interrupt(c) } -> std::same_as<void>;
    { h.take_interrupt() } -> std::same_as<bool>;
    { h.halt(limit) } -> std::same_as<void>;
    { ch.lut(c, i) } -> std::same_as<lut_entry>;
    { h.set_lut(c, i, e) } -> std::same_as<void>;
    { h.dram_load(off, dst, n) } -> std::same_as<void>;
    { h.dram_store(off, src, n) } -> std::same_as<void>;
    { h.invalidate_l1() } -> std::same_as<void>;
    { h.flush_l2() } -> std::same_as<void>;
    { h.flush_l2_range(off, n) } -> std::same_as<void>;
    { ch.cycles() } -> std::same_as<std::uint64_t>;
    { h.idle_since(limit) } -> std::same_as<void>;
};

} // namespace tacomesh::scc
