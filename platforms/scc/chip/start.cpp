// The start-up interface of the SCC chip build (platforms/scc/README.md,
// "Booting on a real SCC"). Freestanding: no C library, no exceptions, no
// RTTI, no static constructors (the boot code need not run .init_array).
//
//   extern "C" void tacomesh_scc_start(void);
//       The boot code calls it on every booted core, in 32-bit protected
//       mode, ring 0, with paging on (identity map, cache bits as the README
//       lists), the default LUTs, .bss cleared, a stack, an IDT whose LINT0
//       vector runs tacomesh_scc_lint_handler, the local APIC enabled with
//       LINT0 unmasked and its timer armed periodically, and interrupts
//       enabled. It never returns: after the application's main it parks the
//       core (cli; hlt).
//   extern "C" void tacomesh_scc_main(tacomesh::scc::core_index core);
//       The application's entry, provided by the application: called once per
//       core with the core's index (0..47, from MYTILEID). It constructs its
//       own chip::hardware objects; they share the per-core state.
//   extern "C" void tacomesh_scc_lint_handler(void);
//       Called by the boot code's LINT0 IDT stub (which saves eax/ecx/edx,
//       calls it, writes the local APIC EOI register and irets).
//
// TACOMESH_SCC_CORES (default 48): how many cores the image runs on, what
// chip::hardware::core_count() answers.
#include <tacomesh/scc/chip/hardware.hpp>

#ifndef TACOMESH_SCC_CORES
#define TACOMESH_SCC_CORES 48
#endif
static_assert(TACOMESH_SCC_CORES >= 1 && TACOMESH_SCC_CORES <= tacomesh::scc::max_cores);

extern "C" void tacomesh_scc_main(tacomesh::scc::core_index core);
extern "C" [[noreturn]] void tacomesh_scc_start(void) noexcept;

extern "C" void tacomesh_scc_lint_handler(void) noexcept {
    // Clear the pin's bit first, then raise the flag: a sender's
    // read-modify-write that this clear overwrote happened before the flag
    // is set, so take_interrupt() still reports it.
    tacomesh::scc::chip::hardware::acknowledge_lint();
    tacomesh::scc::chip::detail::lint_pending = 1;
}

extern "C" [[noreturn]] void tacomesh_scc_start(void) noexcept {
    tacomesh::scc::chip::hardware hw{TACOMESH_SCC_CORES};
    // Nothing from before the start (a previous run, the boot loader) counts:
    // no MPBT line in L1, no LINT pending.
    hw.cl1invmb();
    tacomesh::scc::chip::hardware::acknowledge_lint();
    static_cast<void>(hw.take_interrupt());
    tacomesh_scc_main(hw.core());
    for (;;) asm volatile("cli\n\thlt" ::: "memory");
}
