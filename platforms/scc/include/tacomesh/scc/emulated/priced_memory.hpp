#pragma once
// Plain loads and stores priced as the SCC would (memory_model.hpp), seen
// through the compiler: counted_work.hpp's sibling for memory.
//
// The emulated cores' data is host memory, so a load is a host load and
// costs the host's time, which the modelled clock does not see. Compiled
// with tacomesh::scc_counted, every load and store of instrumented code
// calls a function instead: -fsanitize=kernel-address with its checks as
// calls (AddressSanitizer's kernel mode, which leaves the run-time to the
// program: no shadow memory, no runtime library) reports each access's
// address and size to __asan_loadN_noabort / __asan_storeN_noabort, defined
// below. On an emulated core they price the access by where it lives: the
// MESH regions (DCM, MPBT+WT, NCM, the on-chip pieces) and, everything
// else, the core's private memory; the cycles join the core's clock at its
// next count (platform.hpp). Off a core (the program's own threads, the
// emulation itself) nothing is priced.
//
// What is not seen: accesses the optimiser keeps in registers (as on the
// chip), a store right after a load of the same bytes (AddressSanitizer
// checks the address once: the store is taken to hit, unmodified), and
// what uninstrumented code does, which includes memcpy, memset and memmove
// (a std::copy of plain values): those copies go unpriced.
#include <cstddef>
#include <atomic>
#include <cstdint>

#include <taco/platform/host_preemption.hpp>

#include <tacomesh/scc/emulated/counted_work.hpp>
#include <tacomesh/scc/emulated/memory_model.hpp>

// Neither counted nor priced: the emulation's (counted_work.hpp).
#define TACOMESH_SCC_NOT_PRICED TACOMESH_SCC_NOT_COUNTED

namespace tacomesh::scc::emulated::detail {

/// Where a core's accesses are priced, and what they have cost so far.
struct memory_pricing {
    struct range {
        std::uintptr_t begin = 0, end = 0;
        bool contains(std::uintptr_t a) const noexcept { return a - begin < end - begin; }
    };
    core_memory memory;
    range dcm, write_through, ncm, on_chip;
    /// Bytes that stand for hardware the emulation prices itself: the
    /// message a sender composes, which is the receiver's MPB slot on the
    /// chip (publish() prices its lines).
    range unpriced;
    bool on = false;           ///< off while the emulation itself runs
    std::uint64_t pending = 0; ///< cycles priced since the clock last took them
    /// The core's clock when it last took `pending`, and its block count
    /// then: what the clock reads now, for the memory controllers' queues.
    std::uint64_t base = 0, base_blocks = 0;
    double cycles_per_block = 0;

    /// Where a shared region's bytes sit in the chip's address space: a
    /// fixed base per region (in the half of the address space no host
    /// pointer reaches) plus the offset. The caches' sets and the
    /// controllers' interleaving are of these addresses, as MESH allocates
    /// at the same logical address on every core; priced by the host's
    /// address, they followed where the host had mapped the region, which
    /// moves with what the process did before (test_memory_model.cpp).
    static_assert(sizeof(std::uintptr_t) == 8, "the emulated SCC prices memory on 64-bit hosts");
    static constexpr std::uintptr_t chip_region(unsigned i) noexcept { return (std::uintptr_t(0xffff8) << 44) + (std::uintptr_t(i) << 40); }
    /// The kind of memory host address `a` lies in; a shared region's
    /// address becomes its chip address on the way (one pass over the
    /// ranges: every priced access comes here).
    TACOMESH_SCC_NOT_PRICED memory_kind to_chip_address(std::uintptr_t& a) const noexcept {
        if (dcm.contains(a)) return a = chip_region(0) + (a - dcm.begin), memory_kind::dcm;
        if (write_through.contains(a)) return a = chip_region(1) + (a - write_through.begin), memory_kind::write_through;
        if (ncm.contains(a)) return a = chip_region(2) + (a - ncm.begin), memory_kind::ncm;
        if (on_chip.contains(a)) return a = chip_region(3) + (a - on_chip.begin), memory_kind::on_chip;
        return memory_kind::private_memory;
    }
    /// The address the model prices `p` at (see to_chip_address).
    TACOMESH_SCC_NOT_PRICED std::uintptr_t chip_address(const void* p) const noexcept {
        auto a = reinterpret_cast<std::uintptr_t>(p);
        (void)to_chip_address(a);
        return a;
    }
    TACOMESH_SCC_NOT_PRICED std::uint64_t now() const noexcept {
        return base + pending + std::uint64_t(double(blocks_run - base_blocks) * cycles_per_block);
    }
    TACOMESH_SCC_NOT_PRICED void price(const void* p, std::size_t n, bool store) noexcept {
        auto a = reinterpret_cast<std::uintptr_t>(p);
        if (unpriced.contains(a)) return;
        const memory_kind k = to_chip_address(a);
        pending += store ? memory.store(a, n, k, now()) : memory.load(a, n, k, now());
    }
    /// The cycles priced since the last take, which the clock (now at
    /// `clock`) is about to add: it then reads clock + them.
    TACOMESH_SCC_NOT_PRICED std::uint64_t take(std::uint64_t clock) noexcept {
        const std::uint64_t c = pending;
        restart(clock + c);
        return c;
    }
    /// Drop what was priced since the last take (the emulation's wait), from
    /// the clock `clock` on.
    TACOMESH_SCC_NOT_PRICED void restart(std::uint64_t clock) noexcept {
        pending = 0;
        base = clock;
        base_blocks = blocks_run;
    }
};

/// The emulated core the calling thread runs, while it prices (else null).
inline thread_local memory_pricing* priced __attribute__((tls_model("initial-exec"))) = nullptr;
/// Accesses the calling thread's instrumented code reported, priced or not:
/// whether the program was built to price them (platform.hpp asks).
inline thread_local std::uint64_t accesses_seen __attribute__((tls_model("initial-exec"))) = 0;

TACOMESH_SCC_NOT_PRICED inline void access(const void* p, std::size_t n, bool store) noexcept {
    ++accesses_seen;
    if (memory_pricing* m = priced; m && m->on) {
        // Held from before the model is entered: a preemptive invocation
        // interrupting the model (an urgent one, taco::preemptible) would
        // price through it again, and its poll turns pricing back on.
        ++taco::detail::preemption_hold;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        // The model's own code is compiled as the program's (the header is
        // the program's): its accesses come back here, and its blocks are
        // counted (counted_work.hpp), and neither is the core's. Off while
        // it runs, so the accesses return at once, and the count as it was.
        const std::uint64_t blocks = blocks_run;
        m->on = false;
        m->price(p, n, store);
        m->on = true;
        blocks_run = blocks;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        --taco::detail::preemption_hold;
    }
}

} // namespace tacomesh::scc::emulated::detail

// Weak, not inline, as the block callback (counted_work.hpp says why); and
// only where this mode is on: in a real AddressSanitizer build the
// program's own weak definitions would displace the run-time's.
#ifdef TACOMESH_SCC_PRICED
#define TACOMESH_SCC_ACCESS(n)                                                                                        \
    extern "C" TACOMESH_SCC_NOT_PRICED __attribute__((weak)) void __asan_load##n##_noabort(void* p) {                 \
        tacomesh::scc::emulated::detail::access(p, n, false);                                                         \
    }                                                                                                                 \
    extern "C" TACOMESH_SCC_NOT_PRICED __attribute__((weak)) void __asan_store##n##_noabort(void* p) {                \
        tacomesh::scc::emulated::detail::access(p, n, true);                                                          \
    }
TACOMESH_SCC_ACCESS(1)
TACOMESH_SCC_ACCESS(2)
TACOMESH_SCC_ACCESS(4)
TACOMESH_SCC_ACCESS(8)
TACOMESH_SCC_ACCESS(16)
#undef TACOMESH_SCC_ACCESS
// The size as each compiler declares it: g++ has these as built-ins taking
// a pointer-sized signed integer, clang passes a uintptr_t.
#if defined(__clang__)
#define TACOMESH_SCC_ACCESS_SIZE std::size_t
#else
#define TACOMESH_SCC_ACCESS_SIZE long
#endif
extern "C" TACOMESH_SCC_NOT_PRICED __attribute__((weak)) void __asan_loadN_noabort(void* p,
                                                                                   TACOMESH_SCC_ACCESS_SIZE n) {
    tacomesh::scc::emulated::detail::access(p, std::size_t(n), false);
}
extern "C" TACOMESH_SCC_NOT_PRICED __attribute__((weak)) void __asan_storeN_noabort(void* p,
                                                                                    TACOMESH_SCC_ACCESS_SIZE n) {
    tacomesh::scc::emulated::detail::access(p, std::size_t(n), true);
}
#undef TACOMESH_SCC_ACCESS_SIZE
// The rest of what the compiler calls in this mode belongs to the checks,
// which have no shadow memory here: nothing to do. Before a function that
// does not return (throw, abort), and around a unit's dynamic
// initialisation (g++'s initialisation-order check).
extern "C" TACOMESH_SCC_NOT_PRICED __attribute__((weak)) void __asan_handle_no_return() {}
extern "C" TACOMESH_SCC_NOT_PRICED __attribute__((weak)) void __asan_before_dynamic_init(const void*) {}
extern "C" TACOMESH_SCC_NOT_PRICED __attribute__((weak)) void __asan_after_dynamic_init() {}
// The compilers say "address sanitizer" in this mode too, so TACO reports
// its coroutines' stack switches (taco/detail/context/sanitizer_reports.hpp);
// with no shadow memory and no fake stacks, there is nothing to switch.
extern "C" TACOMESH_SCC_NOT_PRICED __attribute__((weak)) void __sanitizer_start_switch_fiber(void** fake_stack_save,
                                                                                           const void*, std::size_t) {
    if (fake_stack_save) *fake_stack_save = nullptr;
}
extern "C" TACOMESH_SCC_NOT_PRICED __attribute__((weak)) void
__sanitizer_finish_switch_fiber(void*, const void** bottom_old, std::size_t* size_old) {
    if (bottom_old) *bottom_old = nullptr;
    if (size_old) *size_old = 0;
}
#endif

namespace tacomesh::scc::emulated {

/// Whether the translation unit that asks was compiled to price memory
/// (tacomesh::scc_counted, outside the sanitizer builds: see its CMake).
inline constexpr bool pricing_compiled =
#ifdef TACOMESH_SCC_PRICED
    true;
#else
    false;
#endif

} // namespace tacomesh::scc::emulated
