// The chip build's probe application (CTest scc.chip_build): defines
// tacomesh_scc_main and calls every method of chip::hardware once, so that
// each is instantiated and compiled freestanding for 32 bits; the symbol
// check then proves the image needs nothing beyond the start-up interface.
// It is never run.
#include <tacomesh/scc/chip/hardware.hpp>

namespace {
volatile std::uint64_t sink; // keeps results alive under -O2
}

extern "C" void tacomesh_scc_main(tacomesh::scc::core_index core) {
    using namespace tacomesh::scc;
    chip::hardware hw{max_cores};
    static_assert(hardware<chip::hardware>);
    const core_index next = (core + 1) % hw.core_count();

    unsigned char line[line_bytes] = {1, 2, 3};
    unsigned char odd[3] = {4, 5, 6};
    hw.mpb_store(next, 0, line, sizeof line);        // word path
    hw.mpb_store(next, line_bytes + 1, odd, sizeof odd); // byte path
    hw.flush_wcb();
    hw.cl1invmb();
    hw.mpb_load(hw.core(), 0, line, sizeof line);
    hw.mpb_load(hw.core(), 1, odd, sizeof odd);

    while (!hw.test_and_set(next)) {}
    hw.unlock(next);
    hw.interrupt(next);
    hw.halt(1'000'000);
    sink = hw.take_interrupt();

    lut_entry e = hw.lut(hw.core(), 0x80);
    hw.set_lut(hw.core(), 0x80, e);
    sink = e.address_high;

    hw.dram_store(0, line, sizeof line);
    hw.dram_store(64 + 3, odd, sizeof odd);
    hw.dram_load(0, line, sizeof line);
    hw.dram_load(64 + 3, odd, sizeof odd);
    hw.invalidate_l1();
    hw.flush_l2_range(0, 100);
    hw.flush_l2_range(0, 1 << 20); // takes the whole-L2 path
    hw.flush_l2();

    const std::uint64_t t = hw.cycles();
    hw.idle_since(t);
    sink = t + line[0] + odd[0] + hw.core();
}
