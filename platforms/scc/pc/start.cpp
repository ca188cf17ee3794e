// The start-up interface (chip/start.cpp) on the PC stand-in: what the boot
// code (boot.cpp) calls on every core once all are up, and the handler its
// LINT0 stand-in runs. Unlike the chip, the PC ends the run: once every
// core's tacomesh_scc_main has returned, core 0 powers QEMU off as passed
// (a program that finds a fault powers off as failed itself).
#include <tacomesh/scc/pc/console.hpp>
#include <tacomesh/scc/pc/hardware.hpp>

extern "C" void tacomesh_scc_main(tacomesh::scc::core_index core);
extern "C" [[noreturn]] void tacomesh_scc_start(void) noexcept;

namespace {
std::uint32_t returned = 0; // cores whose main has returned
}

extern "C" void tacomesh_scc_lint_handler(void) noexcept {
    __atomic_store_n(&tacomesh::scc::pc::detail::region.lint_pending[tacomesh::scc::pc::apic::self()], 1u,
                     __ATOMIC_RELEASE);
}

extern "C" [[noreturn]] void tacomesh_scc_start(void) noexcept {
    namespace pc = tacomesh::scc::pc;
    pc::hardware hw;
    static_cast<void>(hw.take_interrupt()); // nothing from before the start counts
    tacomesh_scc_main(hw.core());
    __atomic_fetch_add(&returned, 1u, __ATOMIC_ACQ_REL);
    if (hw.core() == 0) {
        while (__atomic_load_n(&returned, __ATOMIC_ACQUIRE) < hw.core_count()) hw.halt(1'000'000);
        pc::print("pc: every core's main returned\n");
        pc::power_off(true);
    }
    for (;;) asm volatile("cli\n\thlt" ::: "memory");
}
